//! Reading helpers over the parsed tree: child lookup by name, values with
//! or without CDATA, integers, attribute lists, and errors that carry the
//! element path and line. Shared by every document parser.

use super::{DocError, DocProblem, LIMITS};
use geni_rspec::{Document, NodeId, NodeKind};

/// Parses `xml` and checks that its root element is `root`.
pub(super) fn parse_document(xml: &str, root: &'static str) -> Result<Document, DocError> {
    let doc = Document::parse_with_limits(xml.as_bytes(), &LIMITS).map_err(|e| DocError {
        document: root,
        problem: DocProblem::Malformed(e),
    })?;
    let found = doc.local_name(doc.root());
    if found != root {
        return Err(DocError {
            document: root,
            problem: DocProblem::WrongRoot {
                expected: root,
                found: found.to_string(),
            },
        });
    }
    Ok(doc)
}

/// Parses a single-object document whose root is `root` with `read`.
pub(super) fn parse_object<T>(
    xml: &str,
    root: &'static str,
    read: impl Fn(Element<'_>) -> Result<T, DocError>,
) -> Result<T, DocError> {
    let doc = parse_document(xml, root)?;
    read(Element::root(&doc, root))
}

/// Parses a pool document (`root`, e.g. `VM_POOL`) and reads each `member`
/// child (e.g. `VM`) with `read`, in document order. An empty pool is an
/// empty list.
pub(super) fn parse_pool<T>(
    xml: &str,
    root: &'static str,
    member: &str,
    read: impl Fn(Element<'_>) -> Result<T, DocError>,
) -> Result<Vec<T>, DocError> {
    let doc = parse_document(xml, root)?;
    Element::root(&doc, root)
        .children(member)
        .map(read)
        .collect()
}

/// An element of a parsed document, with the name of the document it
/// belongs to for error messages.
#[derive(Clone, Copy)]
pub(super) struct Element<'d> {
    doc: &'d Document,
    id: NodeId,
    document: &'static str,
}

impl<'d> Element<'d> {
    fn root(doc: &'d Document, document: &'static str) -> Self {
        Self {
            doc,
            id: doc.root(),
            document,
        }
    }

    fn at(&self, id: NodeId) -> Self {
        Self { id, ..*self }
    }

    /// The element's local name.
    pub(super) fn name(&self) -> &'d str {
        self.doc.local_name(self.id)
    }

    /// The child elements, in order.
    pub(super) fn elements(&self) -> impl Iterator<Item = Element<'d>> + 'd {
        let this = *self;
        self.doc.elements(self.id).map(move |c| this.at(c))
    }

    /// The child elements named `name`, in order.
    pub(super) fn children<'n>(&self, name: &'n str) -> impl Iterator<Item = Element<'d>> + 'n
    where
        'd: 'n,
    {
        self.elements().filter(move |c| c.name() == name)
    }

    /// The first child element named `name`.
    pub(super) fn child(&self, name: &str) -> Option<Element<'d>> {
        self.elements().find(|c| c.name() == name)
    }

    /// Whether the element has child elements (a vector attribute or a
    /// structural element rather than a value).
    pub(super) fn has_elements(&self) -> bool {
        self.elements().next().is_some()
    }

    /// The element's value: its text and CDATA, unescaped. A value made
    /// only of whitespace outside CDATA (the indentation of a pretty-printed
    /// empty element) is empty.
    pub(super) fn value(&self) -> String {
        let only_layout = self
            .doc
            .children(self.id)
            .all(|c| self.doc.kind(c) != NodeKind::CData)
            && self.doc.text(self.id).trim().is_empty();
        if only_layout {
            String::new()
        } else {
            self.doc.text(self.id)
        }
    }

    /// The value of child `name`; `None` when it is absent or empty.
    pub(super) fn text(&self, name: &str) -> Option<String> {
        self.child(name)
            .map(|c| c.value())
            .filter(|v| !v.is_empty())
    }

    /// The value of child `name`, or an empty string when absent.
    pub(super) fn text_or_empty(&self, name: &str) -> String {
        self.text(name).unwrap_or_default()
    }

    /// The integer in child `name`; `None` when absent or empty, an error
    /// when it is not an integer.
    pub(super) fn opt_int(&self, name: &str) -> Result<Option<i64>, DocError> {
        self.child(name).map_or(Ok(None), |c| c.integer())
    }

    /// The integers of every `ID` child, in order (e.g. `GROUPS/ID`).
    pub(super) fn id_list(&self) -> Result<Vec<i64>, DocError> {
        self.children("ID")
            .filter_map(|c| c.integer().transpose())
            .collect()
    }

    /// This element's value as an integer; `None` when empty.
    fn integer(&self) -> Result<Option<i64>, DocError> {
        let value = self.value();
        let trimmed = value.trim();
        if trimmed.is_empty() {
            return Ok(None);
        }
        trimmed.parse().map(Some).map_err(|_| DocError {
            document: self.document,
            problem: DocProblem::NotANumber {
                path: self.path(),
                line: self.doc.line(self.id),
                value: value.chars().take(64).collect(),
            },
        })
    }

    /// The integer in child `name`, which must be present.
    pub(super) fn int(&self, name: &str) -> Result<i64, DocError> {
        self.opt_int(name)?.ok_or_else(|| self.missing(name))
    }

    /// The integer in child `name`, or `default` when absent or empty.
    pub(super) fn int_or(&self, name: &str, default: i64) -> Result<i64, DocError> {
        Ok(self.opt_int(name)?.unwrap_or(default))
    }

    /// The error for a required child `name` that is absent or empty.
    pub(super) fn missing(&self, name: &str) -> DocError {
        DocError {
            document: self.document,
            problem: DocProblem::Missing {
                path: format!("{}/{name}", self.path()),
                line: self.doc.line(self.id),
            },
        }
    }

    /// The single-valued attributes below this element (children without
    /// child elements), as (name, value) in document order. Vector
    /// attributes are left out.
    pub(super) fn attributes(&self) -> Vec<(String, String)> {
        self.elements()
            .filter(|c| !c.has_elements())
            .map(|c| (c.name().to_string(), c.value()))
            .collect()
    }

    /// The single-valued attributes of child `name`; empty when absent.
    pub(super) fn child_attributes(&self, name: &str) -> Vec<(String, String)> {
        self.child(name).map(|c| c.attributes()).unwrap_or_default()
    }

    /// Slash-separated path from the root, with a 1-based position where an
    /// element has same-named siblings: `VM_POOL/VM[2]/TEMPLATE/NIC[1]`.
    fn path(&self) -> String {
        let mut steps = Vec::new();
        let mut node = Some(self.id);
        while let Some(id) = node {
            let step = self.at(id);
            let parent = self.doc.parent(id);
            let name = step.name();
            let label = match parent.map(|p| self.at(p)) {
                Some(p) if p.children(name).nth(1).is_some() => {
                    let position = p.children(name).take_while(|s| s.id != id).count() + 1;
                    format!("{name}[{position}]")
                }
                _ => name.to_string(),
            };
            steps.push(label);
            node = parent;
        }
        steps.reverse();
        steps.join("/")
    }
}
