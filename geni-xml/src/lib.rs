#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod c14n;
mod dom;
mod error;
mod init;
mod schema;
mod text;

pub use c14n::{C14n, C14nMode};
pub use dom::{Document, Node, ParseOptions};
pub use error::XmlError;
pub use init::{InMemoryFiles, init};
pub use schema::{Schema, SchemaMessage};
