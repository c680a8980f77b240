//! Namespace scope of existing elements, for edits: which URI a prefix means
//! at an element, which prefix to write for a URI, and URI interning.

use super::NodeId;
use super::model::{Document, NONE, Piece, XML_NS, XML_NS_ID};

impl Document {
    /// The prefix an item declares (`""` for the default namespace).
    fn declared_prefix(&self, name: Piece, colon: u32) -> &str {
        if colon == 0 {
            ""
        } else {
            self.split_name(name, colon).1
        }
    }

    /// The URI `prefix` (`""`: the default namespace) is bound to at element
    /// `n`; `None` when unbound. An un-declared default (`xmlns=""`) is `Some("")`.
    pub(crate) fn lookup_prefix(&self, n: NodeId, prefix: &str) -> Option<&str> {
        if prefix == "xml" {
            return Some(XML_NS);
        }
        let mut cur = n.0;
        while cur != NONE && self.nodes[cur as usize].is_element() {
            let found = self
                .items_of(NodeId(cur))
                .iter()
                .find(|i| i.decl && self.declared_prefix(i.name, i.colon) == prefix);
            if let Some(item) = found {
                return Some(self.uri(item.ns));
            }
            cur = self.nodes[cur as usize].parent;
        }
        None
    }

    /// A non-empty prefix that means `uri` at element `n`, preferring
    /// `preferred`; `None` when no such prefix is in scope.
    pub(crate) fn prefix_for(&self, n: NodeId, uri: &str, preferred: &str) -> Option<String> {
        if uri == XML_NS {
            return Some("xml".to_owned());
        }
        if !preferred.is_empty() && self.lookup_prefix(n, preferred) == Some(uri) {
            return Some(preferred.to_owned());
        }
        let mut cur = n.0;
        while cur != NONE && self.nodes[cur as usize].is_element() {
            for item in self.items_of(NodeId(cur)) {
                let prefix = self.declared_prefix(item.name, item.colon);
                if item.decl
                    && !prefix.is_empty()
                    && self.uri(item.ns) == uri
                    && self.lookup_prefix(n, prefix) == Some(uri)
                {
                    return Some(prefix.to_owned());
                }
            }
            cur = self.nodes[cur as usize].parent;
        }
        None
    }

    /// `preferred` (or `ns` when empty), numbered if needed so that it is
    /// unbound at element `n`.
    pub(crate) fn fresh_prefix(&self, n: NodeId, preferred: &str) -> String {
        let base = if preferred.is_empty() || preferred == "xml" || preferred == "xmlns" {
            "ns"
        } else {
            preferred
        };
        let mut candidate = base.to_owned();
        let mut i = 1;
        while self.lookup_prefix(n, &candidate).is_some() {
            candidate = format!("{base}{i}");
            i += 1;
        }
        candidate
    }

    /// The id of namespace URI `uri`, interning it when new.
    pub(crate) fn intern_uri(&mut self, uri: &str) -> u32 {
        if uri == XML_NS {
            return XML_NS_ID;
        }
        if let Some(i) = self.uris.iter().position(|p| self.piece(*p) == uri) {
            return i as u32;
        }
        let piece = self.own(uri);
        self.uris.push(piece);
        self.uris.len() as u32 - 1
    }
}
