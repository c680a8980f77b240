//! GENI RSpec v3 documents.
//!
//! This crate owns everything the aggregate manager does with RSpec XML and
//! knows nothing of HTTP, credentials or the store:
//!
//! * [`tree`] — a lossless document tree: parse, navigate, edit, serialize,
//!   keeping every element, attribute, namespace declaration, comment, CDATA
//!   section and processing instruction.
//! * [`view`] — typed read/write views over the GENI v3 vocabulary and the
//!   extensions the AM emits.
//! * [`validate`] — libxml2 schema validation against the project's schemas in
//!   `xsd/` (local catalog, no network, no entities) plus semantic checks.
//! * [`manifest`] / [`advert`] — the manifest and advertisement builders.

pub mod advert;
pub mod manifest;
pub mod tree;
pub mod validate;
pub mod view;
pub mod xml2;
