//! Typed views over the GENI v3 vocabulary (and the ProtoGENI v2 dialect it
//! grew from) and the extensions the AM emits: ssh-user, opstate and the jFed
//! SSH proxy.
//!
//! Views are thin borrowed wrappers around a [`Document`] and a [`NodeId`]:
//! reading never copies the document, and values come back as
//! `Cow<str>` borrowed from it whenever no unescaping was needed. Child
//! elements are looked up in the namespace of the element itself, so the same
//! view reads a v3 and a v2 document. The `*Mut` variants set GENI-owned
//! attributes and append GENI elements; everything else in the document is
//! left exactly as it was.

mod link;
mod node;
mod opstate;
mod root;
mod services;

pub use link::{InterfaceRef, Link, LinkMut, LinkType, Property};
pub use node::{
    DiskImage, HardwareType, Interface, InterfaceMut, Ip, Location, Node, NodeMut, SliverType,
    VmSize, Xen,
};
pub use opstate::{Opstate, OpstateAction, OpstateState};
pub use root::{RSpec, RSpecMut, ViewError, schema_url};
pub use services::{Execute, Install, Login, Proxy, Services, ServicesMut, ServicesUser};

use crate::tree::{Document, NodeId};
use std::borrow::Cow;

/// Namespace URIs of the RSpec dialects and extensions the views know.
pub mod ns {
    /// GENI RSpec version 3, the vocabulary the AM speaks.
    pub const GENI_V3: &str = "http://www.geni.net/resources/rspec/3";
    /// ProtoGENI RSpec version 2, still sent by old clients.
    pub const PROTOGENI_V2: &str = "http://www.protogeni.net/resources/rspec/2";
    /// SSH user login extension of manifests (`services_user`, `public_key`).
    pub const SSH_USER: &str = "http://www.geni.net/resources/rspec/ext/user/1";
    /// Operational state machine extension of advertisements (`rspec_opstate`).
    pub const OPSTATE: &str = "http://www.geni.net/resources/rspec/ext/opstate/1";
    /// jFed SSH proxy extension of manifests (`proxy`).
    pub const PROXY: &str = "http://jfed.iminds.be/proxy/1.0";
    /// Emulab extension: `<emulab:xen cores ram disk>` inside a
    /// `<sliver_type>` sizes a VM (geni-lib's `XenVM`, jFed).
    pub const EMULAB: &str = "http://www.protogeni.net/resources/rspec/ext/emulab/1";
    /// XML Schema instance namespace (`xsi:schemaLocation`).
    pub const XSI: &str = "http://www.w3.org/2001/XMLSchema-instance";
}

/// Defines a read-only view struct over one element with one getter per
/// attribute. Every getter returns the attribute's unescaped value, borrowed
/// from the document when possible.
macro_rules! element_view {
    (@client_id) => {
        /// `client_id`, or ProtoGENI v2's `virtual_id` when that is what the
        /// document uses.
        pub fn client_id(&self) -> Option<std::borrow::Cow<'a, str>> {
            $crate::view::client_id(self.doc, self.id)
        }
    };
    ($(#[$meta:meta])* $name:ident $(+ $extra:ident)? { $($(#[$am:meta])* $getter:ident => $attr:literal),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name<'a> {
            doc: &'a $crate::tree::Document,
            id: $crate::tree::NodeId,
        }

        impl<'a> $name<'a> {
            /// Wraps element `id` of `doc`; the caller vouches for its name.
            pub fn new(doc: &'a $crate::tree::Document, id: $crate::tree::NodeId) -> Self {
                Self { doc, id }
            }

            /// The element this view reads.
            pub fn id(&self) -> $crate::tree::NodeId {
                self.id
            }

            /// 1-based line of the element in the source document.
            pub fn line(&self) -> u32 {
                self.doc.line(self.id)
            }

            $($crate::view::element_view!(@$extra);)?

            $(
                $(#[$am])*
                pub fn $getter(&self) -> Option<std::borrow::Cow<'a, str>> {
                    self.doc.attribute(self.id, $attr)
                }
            )*
        }
    };
}
pub(crate) use element_view;

/// Child elements of `parent` named `local` in the namespace of `parent`
/// itself (v3 and v2 documents use one namespace for the whole core).
pub(crate) fn children_named<'a>(
    doc: &'a Document,
    parent: NodeId,
    local: &'a str,
) -> impl Iterator<Item = NodeId> + 'a {
    let ns = doc.namespace(parent).unwrap_or_default();
    doc.elements_named(parent, ns, local)
}

/// The first child element of `parent` named `local` in its namespace.
pub(crate) fn child_named(doc: &Document, parent: NodeId, local: &str) -> Option<NodeId> {
    children_named(doc, parent, local).next()
}

/// Parses an `xs:boolean` attribute value (`true`/`false`/`1`/`0`, with
/// surrounding whitespace as the schema type allows).
pub fn parse_bool(value: &str) -> Option<bool> {
    match value.trim() {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

/// The `client_id` of an element, falling back to ProtoGENI v2's
/// `virtual_id` that older documents use instead.
pub(crate) fn client_id<'a>(doc: &'a Document, id: NodeId) -> Option<Cow<'a, str>> {
    doc.attribute(id, "client_id")
        .or_else(|| doc.attribute(id, "virtual_id"))
}

/// Appends a child element in the namespace of `parent` (the core RSpec
/// namespace of the document) and returns it.
pub(crate) fn append_core(doc: &mut Document, parent: NodeId, local: &str) -> NodeId {
    let ns = doc.namespace(parent).unwrap_or(ns::GENI_V3).to_owned();
    doc.append_element(parent, &ns, "rspec", local)
}

/// Returns the first child of `parent` named `local` in its namespace,
/// appending one when there is none.
pub(crate) fn child_or_append(doc: &mut Document, parent: NodeId, local: &str) -> NodeId {
    match child_named(doc, parent, local) {
        Some(id) => id,
        None => append_core(doc, parent, local),
    }
}
