//! Lossless XML document tree for RSpecs.
//!
//! [`Document::parse`] reads hostile bytes into an arena of nodes that keeps
//! every byte of the input: the XML declaration, whitespace, comments, CDATA
//! sections, processing instructions, namespace declarations and prefixes,
//! attribute order and quote style, and self-closing versus empty elements.
//! Untouched parts serialize byte-for-byte; edited values are escaped on
//! write. Namespaces are resolved while parsing, so an undeclared prefix is a
//! parse error, as are DOCTYPEs, entity declarations and unknown entity
//! references.
//!
//! Nodes store ranges into one owned copy of the input; edited or created
//! values are copied into one more buffer per document.

mod edit;
mod error;
mod escape;
mod markup;
mod model;
mod namespaces;
mod navigate;
mod parse;
mod scan;
mod write;

pub use error::ParseError;
pub use model::Document;

use std::borrow::Cow;

/// Index of a node inside its [`Document`] (arena).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub(crate) u32);

/// What a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// An element with its attributes and children.
    Element,
    /// Character data (as read: escaped, with entity and character references).
    Text,
    /// A `<![CDATA[...]]>` section.
    CData,
    /// A `<!--...-->` comment.
    Comment,
    /// A `<?target ...?>` processing instruction.
    ProcessingInstruction,
}

/// Limits applied while parsing hostile input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted document, in bytes.
    pub max_bytes: usize,
    /// Deepest accepted element nesting (the root is depth 1).
    pub max_depth: usize,
    /// Most attributes (namespace declarations included) on one element.
    pub max_attributes: usize,
    /// Most nodes of all kinds in one document.
    pub max_nodes: usize,
}

impl Default for Limits {
    /// Generous but bounded: 64 MiB, depth 256, 1024 attributes per element,
    /// 4 million nodes.
    fn default() -> Self {
        Self {
            max_bytes: 64 * 1024 * 1024,
            max_depth: 256,
            max_attributes: 1024,
            max_nodes: 4_000_000,
        }
    }
}

/// One attribute as read. Namespace declarations (`xmlns`, `xmlns:p`) are not
/// attributes; see [`Document::namespace_declarations`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute<'a> {
    /// The prefix as written, if any.
    pub prefix: Option<&'a str>,
    /// The local name.
    pub local: &'a str,
    /// The resolved namespace URI (un-prefixed attributes have none).
    pub namespace: Option<&'a str>,
    /// The value, unescaped and normalized as XML requires.
    pub value: Cow<'a, str>,
}

#[cfg(test)]
mod tests;
