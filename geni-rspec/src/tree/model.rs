//! Arena storage: the owned source buffer, nodes linked as a tree, start-tag
//! items (attributes and namespace declarations) and interned namespace URIs.
//!
//! Every string is a [`Piece`]: a range of the source, a static string, or a
//! range of the one buffer that holds the strings edits created (so that
//! those strings need no allocation of their own, and a copy of the
//! document copies one buffer, not one string per edit).

use super::{NodeId, NodeKind};
use std::sync::OnceLock;

/// Marks an absent link or offset.
pub(crate) const NONE: u32 = u32::MAX;

/// Namespace id of "no namespace".
pub(crate) const NO_NS: u32 = 0;

/// Namespace id of the predeclared `xml` prefix.
pub(crate) const XML_NS_ID: u32 = 1;

/// The namespace bound to the `xml` prefix.
pub(crate) const XML_NS: &str = "http://www.w3.org/XML/1998/namespace";

/// Constant strings a [`Piece::Lit`] names.
const LITERALS: [&str; 5] = ["", " ", "=\"", "/>", XML_NS];

/// A string stored by a [`Document`] (12 bytes: nodes hold several).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Bytes `start..end` of the source.
    Src(u32, u32),
    /// Index into the constant strings.
    Lit(u8),
    /// Bytes `start..end` of [`Document::owned`].
    Own(u32, u32),
}

impl Piece {
    /// The empty string.
    pub(crate) const EMPTY: Piece = Piece::Lit(0);
    /// One space.
    pub(crate) const SPACE: Piece = Piece::Lit(1);
    /// `="`, between an attribute name and its value.
    pub(crate) const EQ_QUOTE: Piece = Piece::Lit(2);
    /// `/>`, ending a self-closing tag.
    pub(crate) const SELF_CLOSE: Piece = Piece::Lit(3);
    /// The XML namespace URI.
    pub(crate) const XML_NS: Piece = Piece::Lit(4);
}

/// Internal node kinds: the public ones plus the document node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The invisible parent of the prolog, the root element and the epilog.
    Document,
    /// See [`NodeKind`].
    Public(NodeKind),
}

/// One node of the arena.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) kind: Kind,
    pub(crate) parent: u32,
    pub(crate) first: u32,
    pub(crate) last: u32,
    pub(crate) prev: u32,
    pub(crate) next: u32,
    /// Source offset of the node's first byte, [`NONE`] for created nodes.
    pub(crate) offset: u32,
    /// Text: raw escaped text; other non-elements: the whole markup;
    /// elements: the start tag as read (used while `retag` is false).
    pub(crate) raw: Piece,
    /// Element qualified name.
    pub(crate) name: Piece,
    /// Length of the element prefix (0 when un-prefixed).
    pub(crate) colon: u32,
    /// Resolved element namespace id.
    pub(crate) ns: u32,
    /// Start-tag items: `items[items_start..items_start + items_len]`.
    pub(crate) items_start: u32,
    pub(crate) items_len: u32,
    /// What follows the last item in the start tag: whitespace and `>` or `/>`.
    pub(crate) tail: Piece,
    /// The end tag as read (empty when self-closing).
    pub(crate) end: Piece,
    /// Written as `<x/>` (and turned into `<x>..</x>` when given children).
    pub(crate) self_closing: bool,
    /// The start tag must be rebuilt from name, items and tail.
    pub(crate) retag: bool,
}

impl Node {
    /// A node of `kind` with `raw` content and no links.
    pub(crate) fn new(kind: Kind, offset: u32, raw: Piece) -> Self {
        Self {
            kind,
            parent: NONE,
            first: NONE,
            last: NONE,
            prev: NONE,
            next: NONE,
            offset,
            raw,
            name: Piece::EMPTY,
            colon: 0,
            ns: NO_NS,
            items_start: 0,
            items_len: 0,
            tail: Piece::EMPTY,
            end: Piece::EMPTY,
            self_closing: false,
            retag: false,
        }
    }

    /// Whether this is an element.
    pub(crate) fn is_element(&self) -> bool {
        self.kind == Kind::Public(NodeKind::Element)
    }
}

/// One attribute or namespace declaration of a start tag, kept as written:
/// `ws name eq value quote`, e.g. ` ` `id` `="` `n1` `"`.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    /// Whitespace before the name.
    pub(crate) ws: Piece,
    /// Qualified name.
    pub(crate) name: Piece,
    /// Length of the prefix (0 when un-prefixed).
    pub(crate) colon: u32,
    /// From the end of the name to the opening quote, inclusive.
    pub(crate) eq: Piece,
    /// Raw (escaped) value between the quotes.
    pub(crate) value: Piece,
    /// `"` or `'`.
    pub(crate) quote: u8,
    /// Attribute namespace id; for a declaration, the declared URI's id.
    pub(crate) ns: u32,
    /// `xmlns` or `xmlns:p`.
    pub(crate) decl: bool,
}

/// A parsed XML document: an arena of nodes over one owned source buffer.
#[derive(Debug, Clone)]
pub struct Document {
    pub(crate) src: String,
    /// The strings edits created, one after another (an arena: a piece
    /// replaced by an edit keeps its bytes until the document is dropped).
    pub(crate) owned: String,
    pub(crate) nodes: Vec<Node>,
    pub(crate) items: Vec<Item>,
    /// Interned namespace URIs; index 0 is "no namespace".
    pub(crate) uris: Vec<Piece>,
    pub(crate) root: u32,
    pub(crate) lines: OnceLock<Vec<u32>>,
}

impl Document {
    /// The text of a piece.
    pub(crate) fn piece(&self, p: Piece) -> &str {
        match p {
            Piece::Src(start, end) => self.src.get(start as usize..end as usize).unwrap_or(""),
            Piece::Lit(i) => LITERALS.get(i as usize).copied().unwrap_or(""),
            Piece::Own(start, end) => self.owned.get(start as usize..end as usize).unwrap_or(""),
        }
    }

    /// Stores a copy of `s` and returns its piece.
    pub(crate) fn own(&mut self, s: &str) -> Piece {
        let start = self.owned_end();
        self.owned.push_str(s);
        Piece::Own(start, self.owned_end())
    }

    /// Stores the qualified name `prefix:local` (`local` alone when
    /// `prefix` is empty) and returns its piece.
    pub(crate) fn own_qname(&mut self, prefix: &str, local: &str) -> Piece {
        let start = self.owned_end();
        if !prefix.is_empty() {
            self.owned.push_str(prefix);
            self.owned.push(':');
        }
        self.owned.push_str(local);
        Piece::Own(start, self.owned_end())
    }

    /// The end of the strings edits created, as a piece's offset. Their
    /// buffer is bounded like the source (4 GiB: offsets are 32-bit); past
    /// that an edit stops the program rather than write other bytes.
    fn owned_end(&self) -> u32 {
        u32::try_from(self.owned.len()).expect("the edits of one document exceed 4 GiB")
    }

    /// The node behind an id.
    pub(crate) fn node(&self, n: NodeId) -> &Node {
        &self.nodes[n.0 as usize]
    }

    /// The node behind an id, for editing.
    pub(crate) fn node_mut(&mut self, n: NodeId) -> &mut Node {
        &mut self.nodes[n.0 as usize]
    }

    /// The start-tag items of element `n`.
    pub(crate) fn items_of(&self, n: NodeId) -> &[Item] {
        let node = self.node(n);
        let start = node.items_start as usize;
        &self.items[start..start + node.items_len as usize]
    }

    /// The namespace URI with id `ns`.
    pub(crate) fn uri(&self, ns: u32) -> &str {
        self.uris.get(ns as usize).map_or("", |p| self.piece(*p))
    }

    /// Prefix and local part of a qualified name split at `colon`.
    pub(crate) fn split_name(&self, name: Piece, colon: u32) -> (Option<&str>, &str) {
        let full = self.piece(name);
        if colon == 0 {
            return (None, full);
        }
        let colon = colon as usize;
        (full.get(..colon), full.get(colon + 1..).unwrap_or(""))
    }

    /// 1-based line of a source offset.
    pub(crate) fn line_of(&self, offset: u32) -> u32 {
        if offset == NONE {
            return 0;
        }
        let lines = self.lines.get_or_init(|| {
            memchr::memchr_iter(b'\n', self.src.as_bytes())
                .map(|i| i as u32)
                .collect()
        });
        lines.partition_point(|&nl| nl < offset) as u32 + 1
    }

    /// Links `child` as the last child of `parent`.
    pub(crate) fn link_last(&mut self, parent: u32, child: u32) {
        let last = self.nodes[parent as usize].last;
        {
            let c = &mut self.nodes[child as usize];
            c.parent = parent;
            c.prev = last;
            c.next = NONE;
        }
        if last == NONE {
            self.nodes[parent as usize].first = child;
        } else {
            self.nodes[last as usize].next = child;
        }
        self.nodes[parent as usize].last = child;
    }
}
