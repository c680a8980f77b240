//! Serialization: untouched nodes are copied from the source (adjacent
//! ranges in one copy), edited start tags are rebuilt from their parts.

use super::NodeId;
use super::model::{Document, Kind, NONE, Piece};

/// Output buffer that merges adjacent source ranges into one copy.
struct Out<'d> {
    doc: &'d Document,
    buf: Vec<u8>,
    pending: Option<(u32, u32)>,
}

impl Out<'_> {
    fn piece(&mut self, p: Piece) {
        match (p, self.pending) {
            (Piece::Src(s, e), Some((ps, pe))) if pe == s => self.pending = Some((ps, e)),
            (Piece::Src(s, e), _) => {
                self.flush();
                self.pending = Some((s, e));
            }
            (other, _) => {
                let text = self.doc.piece(other);
                self.bytes(text.as_bytes());
            }
        }
    }

    fn bytes(&mut self, b: &[u8]) {
        self.flush();
        self.buf.extend_from_slice(b);
    }

    fn flush(&mut self) {
        if let Some((s, e)) = self.pending.take() {
            let src = self.doc.src.as_bytes();
            self.buf
                .extend_from_slice(src.get(s as usize..e as usize).unwrap_or_default());
        }
    }
}

impl Document {
    /// The whole document as bytes; untouched parts are byte-for-byte as read.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.write(0)
    }

    /// The subtree of `n` as it would be written in place.
    pub fn node_to_bytes(&self, n: NodeId) -> Vec<u8> {
        self.write(n.0)
    }

    fn write(&self, top: u32) -> Vec<u8> {
        let mut out = Out {
            doc: self,
            buf: Vec::with_capacity(if top == 0 { self.src.len() + 64 } else { 256 }),
            pending: None,
        };
        self.open_tag(top, &mut out);
        let mut cur = self.nodes[top as usize].first;
        if cur == NONE {
            self.close_tag(top, &mut out);
        }
        while cur != NONE {
            self.open_tag(cur, &mut out);
            let node = &self.nodes[cur as usize];
            if node.first != NONE {
                cur = node.first;
                continue;
            }
            self.close_tag(cur, &mut out);
            loop {
                let node = &self.nodes[cur as usize];
                if node.next != NONE {
                    cur = node.next;
                    break;
                }
                cur = node.parent;
                self.close_tag(cur, &mut out);
                if cur == top {
                    cur = NONE;
                    break;
                }
            }
        }
        out.flush();
        out.buf
    }

    /// Writes what comes before the children of `n`.
    fn open_tag(&self, n: u32, out: &mut Out<'_>) {
        let node = &self.nodes[n as usize];
        let gains_children = node.self_closing && node.first != NONE;
        if !node.is_element() || (!node.retag && !gains_children) {
            out.piece(node.raw);
            return;
        }
        out.bytes(b"<");
        out.piece(node.name);
        for item in self.items_of(NodeId(n)) {
            out.piece(item.ws);
            out.piece(item.name);
            out.piece(item.eq);
            out.piece(item.value);
            out.bytes(&[item.quote]);
        }
        match (gains_children, node.tail) {
            (false, tail) => out.piece(tail),
            (true, Piece::Src(s, e)) => {
                out.piece(Piece::Src(s, e.saturating_sub(2).max(s)));
                out.bytes(b">");
            }
            (true, tail) => {
                let text = self.piece(tail);
                out.bytes(text.strip_suffix("/>").unwrap_or(text).as_bytes());
                out.bytes(b">");
            }
        }
    }

    /// Writes what comes after the children of `n`.
    fn close_tag(&self, n: u32, out: &mut Out<'_>) {
        let node = &self.nodes[n as usize];
        if node.kind == Kind::Document || !node.is_element() {
            return;
        }
        if !node.self_closing {
            out.piece(node.end);
        } else if node.first != NONE {
            out.bytes(b"</");
            out.piece(node.name);
            out.bytes(b">");
        }
    }
}
