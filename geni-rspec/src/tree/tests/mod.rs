//! Unit tests of the document tree.

mod edit;
mod parse;
