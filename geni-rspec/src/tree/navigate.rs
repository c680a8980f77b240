//! Read access: parsing entry points, tree navigation, names, namespaces,
//! attributes, text and source lines.

use super::escape::{unescape_text, unescape_value};
use super::model::{Document, Kind, NO_NS, NONE};
use super::{Attribute, Limits, NodeId, NodeKind, ParseError};
use std::borrow::Cow;

impl Document {
    /// Parses `input` with [`Limits::default`].
    pub fn parse(input: &[u8]) -> Result<Document, ParseError> {
        Self::parse_with_limits(input, &Limits::default())
    }

    /// Parses `input`, refusing it when it crosses `limits`.
    pub fn parse_with_limits(input: &[u8], limits: &Limits) -> Result<Document, ParseError> {
        super::parse::parse(input, limits)
    }

    /// The document element.
    pub fn root(&self) -> NodeId {
        NodeId(self.root)
    }

    /// What `n` is.
    pub fn kind(&self, n: NodeId) -> NodeKind {
        match self.node(n).kind {
            Kind::Public(kind) => kind,
            Kind::Document => NodeKind::Element,
        }
    }

    /// The parent element of `n`; `None` for the root and for detached nodes.
    pub fn parent(&self, n: NodeId) -> Option<NodeId> {
        let parent = self.node(n).parent;
        (parent != NONE && self.nodes[parent as usize].kind != Kind::Document)
            .then_some(NodeId(parent))
    }

    /// The children of `n`, of all kinds, in document order.
    pub fn children(&self, n: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let mut next = self.node(n).first;
        std::iter::from_fn(move || {
            (next != NONE).then(|| {
                let id = next;
                next = self.nodes[id as usize].next;
                NodeId(id)
            })
        })
    }

    /// The child elements of `n`, in document order.
    pub fn elements(&self, n: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.children(n).filter(|&c| self.node(c).is_element())
    }

    /// The child elements of `n` named `local` in namespace `ns` (`""` for
    /// no namespace).
    pub fn elements_named<'a>(
        &'a self,
        n: NodeId,
        ns: &'a str,
        local: &'a str,
    ) -> impl Iterator<Item = NodeId> + 'a {
        self.elements(n)
            .filter(move |&c| self.is_element(c, ns, local))
    }

    /// The descendant elements of `n` (not `n` itself), in pre-order.
    pub fn descendants(&self, n: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.subtree(n).filter(|&c| self.node(c).is_element())
    }

    /// All nodes below `n` (not `n` itself), of all kinds, in document order.
    pub(crate) fn subtree(&self, n: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let top = n.0;
        let mut next = self.node(n).first;
        std::iter::from_fn(move || {
            if next == NONE {
                return None;
            }
            let id = next;
            let node = &self.nodes[id as usize];
            next = if node.first != NONE {
                node.first
            } else {
                let mut up = id;
                loop {
                    if up == top {
                        break NONE;
                    }
                    let u = &self.nodes[up as usize];
                    if u.next != NONE {
                        break u.next;
                    }
                    up = u.parent;
                    if up == NONE || up == top {
                        break NONE;
                    }
                }
            };
            Some(NodeId(id))
        })
    }

    /// The local name of element `n` (empty for other nodes).
    pub fn local_name(&self, n: NodeId) -> &str {
        let node = self.node(n);
        self.split_name(node.name, node.colon).1
    }

    /// The prefix of element `n` as written.
    pub fn prefix(&self, n: NodeId) -> Option<&str> {
        let node = self.node(n);
        self.split_name(node.name, node.colon).0
    }

    /// The qualified name of element `n` as written (`prefix:local` or `local`).
    pub fn qualified_name(&self, n: NodeId) -> &str {
        self.piece(self.node(n).name)
    }

    /// The resolved namespace URI of element `n`.
    pub fn namespace(&self, n: NodeId) -> Option<&str> {
        let ns = self.node(n).ns;
        (ns != NO_NS).then(|| self.uri(ns))
    }

    /// Whether `n` is an element named `local` in namespace `ns` (`""` for none).
    pub fn is_element(&self, n: NodeId, ns: &str, local: &str) -> bool {
        let node = self.node(n);
        node.is_element() && self.local_name(n) == local && self.uri(node.ns) == ns
    }

    /// The value of the un-prefixed attribute `name` of `n`, unescaped.
    pub fn attribute(&self, n: NodeId, name: &str) -> Option<Cow<'_, str>> {
        self.items_of(n)
            .iter()
            .find(|i| !i.decl && i.colon == 0 && self.piece(i.name) == name)
            .map(|i| unescape_value(self.piece(i.value)))
    }

    /// The value of the attribute `local` in namespace `ns` of `n`, unescaped.
    pub fn attribute_ns(&self, n: NodeId, ns: &str, local: &str) -> Option<Cow<'_, str>> {
        self.attributes(n)
            .find(|a| a.local == local && a.namespace.unwrap_or("") == ns)
            .map(|a| a.value)
    }

    /// The attributes of `n` in document order (namespace declarations excluded).
    pub fn attributes(&self, n: NodeId) -> impl Iterator<Item = Attribute<'_>> + '_ {
        self.items_of(n).iter().filter(|i| !i.decl).map(|i| {
            let (prefix, local) = self.split_name(i.name, i.colon);
            Attribute {
                prefix,
                local,
                namespace: (i.ns != NO_NS).then(|| self.uri(i.ns)),
                value: unescape_value(self.piece(i.value)),
            }
        })
    }

    /// The namespaces declared on `n`, as `(prefix, uri)`; `None` is the
    /// default namespace and `""` an un-declaration (`xmlns=""`).
    pub fn namespace_declarations(
        &self,
        n: NodeId,
    ) -> impl Iterator<Item = (Option<&str>, &str)> + '_ {
        self.items_of(n).iter().filter(|i| i.decl).map(|i| {
            let prefix = (i.colon != 0).then(|| self.split_name(i.name, i.colon).1);
            (prefix, self.uri(i.ns))
        })
    }

    /// The character data below `n` (text and CDATA, unescaped, in document
    /// order); for a text, CDATA, comment or processing instruction node, its
    /// own content.
    pub fn text(&self, n: NodeId) -> String {
        if !self.node(n).is_element() {
            return self.content(n).into_owned();
        }
        let mut out = String::new();
        for c in self.subtree(n) {
            if matches!(self.kind(c), NodeKind::Text | NodeKind::CData) {
                out.push_str(&self.content(c));
            }
        }
        out
    }

    /// The content of a non-element node: unescaped text, or what lies
    /// between the delimiters of CDATA, comments and processing instructions.
    fn content(&self, n: NodeId) -> Cow<'_, str> {
        let node = self.node(n);
        let raw = self.piece(node.raw);
        let inner = |open: &str, close: &str| {
            raw.strip_prefix(open)
                .and_then(|r| r.strip_suffix(close))
                .unwrap_or("")
        };
        match node.kind {
            Kind::Public(NodeKind::Text) => unescape_text(raw),
            Kind::Public(NodeKind::CData) => Cow::Borrowed(inner("<![CDATA[", "]]>")),
            Kind::Public(NodeKind::Comment) => Cow::Borrowed(inner("<!--", "-->")),
            Kind::Public(NodeKind::ProcessingInstruction) => Cow::Borrowed(inner("<?", "?>")),
            Kind::Public(NodeKind::Element) | Kind::Document => Cow::Borrowed(""),
        }
    }

    /// The 1-based source line where `n` starts; 0 for created nodes.
    pub fn line(&self, n: NodeId) -> u32 {
        self.line_of(self.node(n).offset)
    }
}
