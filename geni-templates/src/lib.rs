//! Request languages other than RSpec: a TOSCA Simple Profile in YAML 1.0
//! service template, a RADL document (text or JSON) or a HOT template
//! becomes the GENI v3 request RSpec the aggregate already serves, so
//! allocation, capacity, jobs and manifests stay one code path.
//!
//! Each front end ([`tosca`], [`radl`], [`hot`]) translates its document
//! into one [`Request`] (nodes, sizes, images, links, addresses, services,
//! outputs) against what the aggregate offers ([`Offer`]); [`Request`]
//! is written out as a request RSpec by [`Request::to_rspec`]. What a VM
//! aggregate cannot honour is refused with the construct and its line
//! ([`Refusals`]), never dropped. [`Language::detect`] recognises the
//! language from the document itself.
//!
//! Every front end has the same entry point:
//! `pub fn translate(source: &str, text: &str, inputs: &Inputs, offer: &Offer) -> Result<Request, Refusals>`,
//! where `source` is the document's name in messages.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod hot;
mod language;
mod model;
pub mod radl;
mod rspec;
pub mod tosca;
mod yaml;

pub use language::{Language, Translator};
pub use model::{
    Execute, Inputs, Install, Interface, Ipv4Address, Link, Node, Offer, OfferedImage,
    OfferedSliverType, Output, OutputValue, Refusal, Refusals, Request, Scalar, Size,
};
pub use rspec::OUTPUTS_NS;
