//! The domain model at the bottom of the service: what the store keeps and
//! the core and jobs read, importing nothing above it.

pub mod plan;
