#![doc = include_str!("../README.md")]
//!
//! ## Surface
//!
//! * the lossless document tree: [`Document`], [`NodeId`], [`NodeKind`],
//!   [`Limits`], [`ParseError`] — parse, navigate, edit and serialize,
//!   keeping every element, attribute, namespace declaration, comment,
//!   CDATA section and processing instruction;
//! * typed read/write views over the GENI v3 vocabulary and the extensions
//!   the aggregate emits: [`RSpec`], [`RSpecMut`], [`Node`], [`Link`],
//!   [`Interface`], … and the namespaces in [`ns`];
//! * validation: [`Validator`] — libxml2 schema validation against the
//!   project's schemas in `xsd/` (local catalog, no network, no entities)
//!   plus the semantic checks, reported as [`Issue`]s;
//! * the builders: [`manifest`] (a manifest is the request, copied and
//!   annotated) and [`advert`] (an advertisement from an inventory).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod advert;
pub mod manifest;
mod tree;
mod validate;
mod view;

pub use tree::{Attribute, Document, Limits, NodeId, NodeKind, ParseError};
pub use validate::{
    Invalid, Issue, IssueKind, RspecKind, RspecVersion, SchemaError, Validated, Validator,
};
pub use view::{
    DiskImage, Execute, HardwareType, Install, Interface, InterfaceMut, InterfaceRef, Ip, Link,
    LinkMut, LinkType, Location, Login, Node, NodeMut, Opstate, OpstateAction, OpstateState,
    Property, Proxy, RSpec, RSpecMut, Services, ServicesMut, ServicesUser, SliverType, ViewError,
    VmSize, Xen, ns,
};
