//! The `<rspec>` document element: version, type, timestamps, and the way
//! into its nodes and links.

use super::{Link, LinkMut, Node, NodeMut, Opstate, client_id, ns};
use crate::tree::{Document, NodeId};
use crate::validate::{RspecKind, RspecVersion};
use std::borrow::Cow;

/// Why a document cannot be read as an RSpec.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ViewError {
    /// The document element is not `rspec` in a namespace the AM reads.
    #[error(
        "line {line}: the document element is <{found}> in namespace `{namespace}`; expected <rspec> in `{}` (GENI v3) or `{}` (ProtoGENI v2)",
        ns::GENI_V3,
        ns::PROTOGENI_V2
    )]
    NotAnRspec {
        /// Line of the document element.
        line: u32,
        /// Local name of the document element.
        found: String,
        /// Its namespace (empty when it has none).
        namespace: String,
    },
}

/// The official schema URL of an RSpec version for one kind
/// (`…/ad.xsd`, `…/request.xsd`, `…/manifest.xsd`).
pub fn schema_url(version: RspecVersion, kind: RspecKind) -> String {
    let file = match kind {
        RspecKind::Advertisement => "ad.xsd",
        RspecKind::Request => "request.xsd",
        RspecKind::Manifest => "manifest.xsd",
    };
    format!("{}/{file}", version.namespace())
}

/// Read view of the `<rspec>` document element.
#[derive(Debug, Clone, Copy)]
pub struct RSpec<'a> {
    doc: &'a Document,
    id: NodeId,
    version: RspecVersion,
}

/// Finds the version of `doc`, or says why its root is not an RSpec.
fn version_of(doc: &Document) -> Result<(NodeId, RspecVersion), ViewError> {
    let root = doc.root();
    let namespace = doc.namespace(root).unwrap_or_default();
    match RspecVersion::from_namespace(namespace) {
        Some(version) if doc.local_name(root) == "rspec" => Ok((root, version)),
        _ => Err(ViewError::NotAnRspec {
            line: doc.line(root),
            found: doc.local_name(root).to_owned(),
            namespace: namespace.to_owned(),
        }),
    }
}

impl<'a> RSpec<'a> {
    /// Views the document element of `doc`, which must be `<rspec>` in the
    /// GENI v3 or ProtoGENI v2 namespace.
    pub fn new(doc: &'a Document) -> Result<Self, ViewError> {
        let (id, version) = version_of(doc)?;
        Ok(Self { doc, id, version })
    }

    /// The document element.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The version the document is written in.
    pub fn version(&self) -> RspecVersion {
        self.version
    }

    /// The raw `type` attribute.
    pub fn type_attr(&self) -> Option<Cow<'a, str>> {
        self.doc.attribute(self.id, "type")
    }

    /// The `type` attribute when it names a known RSpec type.
    pub fn rspec_type(&self) -> Option<RspecKind> {
        self.type_attr()
            .as_deref()
            .and_then(RspecKind::from_type_attribute)
    }

    /// `generated` (an `xs:dateTime`, as written).
    pub fn generated(&self) -> Option<Cow<'a, str>> {
        self.doc.attribute(self.id, "generated")
    }

    /// `generated_by`.
    pub fn generated_by(&self) -> Option<Cow<'a, str>> {
        self.doc.attribute(self.id, "generated_by")
    }

    /// `expires` (an `xs:dateTime`, as written).
    pub fn expires(&self) -> Option<Cow<'a, str>> {
        self.doc.attribute(self.id, "expires")
    }

    /// `xsi:schemaLocation` as written.
    pub fn schema_location(&self) -> Option<Cow<'a, str>> {
        self.doc.attribute_ns(self.id, ns::XSI, "schemaLocation")
    }

    /// Every `<node>` child, in document order.
    pub fn nodes(&self) -> impl Iterator<Item = Node<'a>> + use<'a> {
        let doc = self.doc;
        super::children_named(doc, self.id, "node").map(move |id| Node::new(doc, id))
    }

    /// Every `<link>` child, in document order.
    pub fn links(&self) -> impl Iterator<Item = Link<'a>> + use<'a> {
        let doc = self.doc;
        super::children_named(doc, self.id, "link").map(move |id| Link::new(doc, id))
    }

    /// Every opstate `<rspec_opstate>` (advertisements).
    pub fn opstates(&self) -> impl Iterator<Item = Opstate<'a>> + use<'a> {
        let doc = self.doc;
        doc.elements_named(self.id, ns::OPSTATE, "rspec_opstate")
            .map(move |id| Opstate::new(doc, id))
    }

    /// The first node whose `client_id` is `wanted`.
    pub fn node(&self, wanted: &str) -> Option<Node<'a>> {
        self.nodes()
            .find(|n| client_id(self.doc, n.id()).as_deref() == Some(wanted))
    }

    /// The first link whose `client_id` is `wanted`.
    pub fn link(&self, wanted: &str) -> Option<Link<'a>> {
        self.links()
            .find(|l| client_id(self.doc, l.id()).as_deref() == Some(wanted))
    }
}

/// Write view of the `<rspec>` document element.
#[derive(Debug)]
pub struct RSpecMut<'a> {
    doc: &'a mut Document,
    id: NodeId,
    version: RspecVersion,
}

impl<'a> RSpecMut<'a> {
    /// Views the document element of `doc` for editing; same checks as
    /// [`RSpec::new`].
    pub fn new(doc: &'a mut Document) -> Result<Self, ViewError> {
        let (id, version) = version_of(doc)?;
        Ok(Self { doc, id, version })
    }

    /// Read access to the same document.
    pub fn as_view(&self) -> RSpec<'_> {
        RSpec {
            doc: self.doc,
            id: self.id,
            version: self.version,
        }
    }

    /// Sets `type`.
    pub fn set_type(&mut self, kind: RspecKind) {
        self.doc
            .set_attribute(self.id, "type", kind.type_attribute());
    }

    /// Sets `generated` (an RFC 3339 / `xs:dateTime` value).
    pub fn set_generated(&mut self, value: &str) {
        self.doc.set_attribute(self.id, "generated", value);
    }

    /// Sets `generated_by`.
    pub fn set_generated_by(&mut self, value: &str) {
        self.doc.set_attribute(self.id, "generated_by", value);
    }

    /// Sets `expires` (an RFC 3339 / `xs:dateTime` value).
    pub fn set_expires(&mut self, value: &str) {
        self.doc.set_attribute(self.id, "expires", value);
    }

    /// Sets `xsi:schemaLocation`, declaring `xsi` when it is not in scope.
    pub fn set_schema_location(&mut self, value: &str) {
        self.doc
            .set_attribute_ns(self.id, ns::XSI, "xsi", "schemaLocation", value);
    }

    /// Edits the node `id` (which must be a `<node>` of this document).
    pub fn node_mut(&mut self, id: NodeId) -> NodeMut<'_> {
        NodeMut::new(self.doc, id)
    }

    /// Edits the link `id` (which must be a `<link>` of this document).
    pub fn link_mut(&mut self, id: NodeId) -> LinkMut<'_> {
        LinkMut::new(self.doc, id)
    }
}
