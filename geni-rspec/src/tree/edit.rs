//! Editing: attributes, namespace declarations, new elements and text, and
//! removal. Edited values are escaped on write; everything not touched keeps
//! its source bytes. Names passed in must be valid XML names; edits on
//! non-element nodes are ignored.

use super::escape::{escape_text, escape_value};
use super::model::{Document, Item, Kind, NO_NS, NONE, Node, Piece};
use super::{NodeId, NodeKind};

/// Whether `name` would declare a namespace rather than name an attribute.
fn is_declaration(name: &str) -> bool {
    name == "xmlns" || name.starts_with("xmlns:")
}

impl Document {
    /// Sets the un-prefixed attribute `name` of `n`: replaced in place (same
    /// position and quote) or appended. `xmlns` names are ignored (see
    /// [`Document::declare_namespace`]).
    pub fn set_attribute(&mut self, n: NodeId, name: &str, value: &str) {
        if is_declaration(name) {
            return;
        }
        let found = self.find_item(n, |d, i| !i.decl && i.colon == 0 && d.piece(i.name) == name);
        self.set_item(n, found, name, 0, NO_NS, value);
    }

    /// Sets the attribute `local` in namespace `ns` of `n`. A new attribute
    /// reuses a prefix in scope for `ns` (preferring `preferred_prefix`), else
    /// declares `xmlns:preferred_prefix` on `n` (numbered if that prefix is
    /// taken). An empty `ns` means an un-prefixed attribute.
    pub fn set_attribute_ns(
        &mut self,
        n: NodeId,
        ns: &str,
        preferred_prefix: &str,
        local: &str,
        value: &str,
    ) {
        if ns.is_empty() {
            self.set_attribute(n, local, value);
            return;
        }
        let found = self.find_item(n, |d, i| {
            !i.decl && i.colon != 0 && d.uri(i.ns) == ns && d.split_name(i.name, i.colon).1 == local
        });
        if found.is_some() {
            self.set_item(n, found, "", 0, NO_NS, value);
            return;
        }
        if !self.node(n).is_element() {
            return;
        }
        let prefix = match self.prefix_for(n, ns, preferred_prefix) {
            Some(prefix) => prefix,
            None => {
                let prefix = self.fresh_prefix(n, preferred_prefix);
                self.declare_namespace(n, &prefix, ns);
                prefix
            }
        };
        let ns_id = self.intern_uri(ns);
        let name = self.own_qname(&prefix, local);
        self.push_item(n, name, prefix.len() as u32, ns_id, false, value);
    }

    /// Removes the un-prefixed attribute `name` of `n`; whether it was there.
    pub fn remove_attribute(&mut self, n: NodeId, name: &str) -> bool {
        let Some(index) =
            self.find_item(n, |d, i| !i.decl && i.colon == 0 && d.piece(i.name) == name)
        else {
            return false;
        };
        let at = self.own_items(n) + index;
        self.items.remove(at);
        let node = self.node_mut(n);
        node.items_len -= 1;
        node.retag = true;
        true
    }

    /// Declares `prefix` (`""`: the default namespace) as `uri` on element
    /// `n`, unless `n` already declares that prefix. Namespaces already
    /// resolved for existing nodes are not changed.
    pub fn declare_namespace(&mut self, n: NodeId, prefix: &str, uri: &str) {
        if !self.node(n).is_element() {
            return;
        }
        let declared = self.items_of(n).iter().any(|i| {
            i.decl
                && (if i.colon == 0 {
                    ""
                } else {
                    self.split_name(i.name, i.colon).1
                }) == prefix
        });
        if declared {
            return;
        }
        let (name, colon) = if prefix.is_empty() {
            (self.own("xmlns"), 0)
        } else {
            (self.own_qname("xmlns", prefix), 5)
        };
        let ns = self.intern_uri(uri);
        self.push_item(n, name, colon, ns, true, uri);
    }

    /// Appends a new, empty element `local` in namespace `ns` as the last
    /// child of `parent`, written un-prefixed when `ns` is the default
    /// namespace there, else with a prefix in scope, else declaring
    /// `preferred_prefix` on the new element. Follows the indentation of the
    /// parent's children. When `parent` is not an element, the new element
    /// stays detached.
    pub fn append_element(
        &mut self,
        parent: NodeId,
        ns: &str,
        preferred_prefix: &str,
        local: &str,
    ) -> NodeId {
        let id = self.new_element(parent, ns, preferred_prefix, local);
        if !self.node(parent).is_element() {
            return id;
        }
        let (indent, closing) = self.child_indentation(parent);
        let last = self.node(parent).last;
        let closing_ws = last != NONE && self.is_blank_text(last) && closing.is_some();
        match (indent, closing) {
            (Some(indent), _) if closing_ws => {
                let before = NodeId(last);
                let ws = self.new_text_raw(&indent);
                self.insert_before(before, ws);
                self.insert_before(before, id.0);
            }
            (Some(indent), Some(closing)) if self.node(parent).first == NONE => {
                let ws = self.new_text_raw(&indent);
                self.link_last(parent.0, ws);
                self.link_last(parent.0, id.0);
                let ws = self.new_text_raw(&closing);
                self.link_last(parent.0, ws);
            }
            _ => self.link_last(parent.0, id.0),
        }
        id
    }

    /// Inserts a new, empty element before `sibling` (names chosen as in
    /// [`Document::append_element`]), repeating the whitespace that precedes
    /// `sibling` so both sit on their own lines. Before the document element
    /// (which has no parent element) the new element stays detached.
    pub fn insert_element_before(
        &mut self,
        sibling: NodeId,
        ns: &str,
        preferred_prefix: &str,
        local: &str,
    ) -> NodeId {
        let parent = self.node(sibling).parent;
        let scope = if parent == NONE || !self.nodes[parent as usize].is_element() {
            sibling
        } else {
            NodeId(parent)
        };
        let id = self.new_element(scope, ns, preferred_prefix, local);
        if scope == sibling {
            return id;
        }
        self.insert_before(sibling, id.0);
        let prev = self.node(id).prev;
        if prev != NONE && self.is_blank_text(prev) {
            let raw = self.piece(self.nodes[prev as usize].raw).to_owned();
            let ws = self.new_text_raw(&raw);
            self.insert_before(sibling, ws);
        }
        id
    }

    /// Appends `text` (escaped on write) as the last child of `parent`.
    pub fn append_text(&mut self, parent: NodeId, text: &str) {
        if !self.node(parent).is_element() || text.is_empty() {
            return;
        }
        let id = self.new_text_raw(&escape_text(text));
        self.link_last(parent.0, id);
    }

    /// Replaces all children of element `n` with one text node.
    pub fn set_text(&mut self, n: NodeId, text: &str) {
        if !self.node(n).is_element() {
            return;
        }
        while self.node(n).first != NONE {
            let child = self.node(n).first;
            self.unlink(child);
        }
        self.append_text(n, text);
    }

    /// Detaches the subtree of `n` together with the whitespace-only text
    /// before it. The document element cannot be removed.
    pub fn remove(&mut self, n: NodeId) {
        if n.0 == self.root || n.0 == 0 || self.node(n).parent == NONE {
            return;
        }
        let prev = self.node(n).prev;
        if prev != NONE && self.is_blank_text(prev) {
            self.unlink(prev);
        }
        self.unlink(n.0);
    }

    /// Index (within the element's items) of the first item matching `pred`.
    fn find_item(&self, n: NodeId, pred: impl Fn(&Document, &Item) -> bool) -> Option<usize> {
        if !self.node(n).is_element() {
            return None;
        }
        self.items_of(n).iter().position(|i| pred(self, i))
    }

    /// Replaces the value of item `index`, or appends a new attribute.
    fn set_item(
        &mut self,
        n: NodeId,
        index: Option<usize>,
        qname: &str,
        colon: u32,
        ns: u32,
        value: &str,
    ) {
        if !self.node(n).is_element() {
            return;
        }
        match index {
            Some(index) => {
                let at = self.node(n).items_start as usize + index;
                let escaped = escape_value(value, self.items[at].quote);
                self.items[at].value = self.own(&escaped);
                self.node_mut(n).retag = true;
            }
            None => {
                let name = self.own(qname);
                self.push_item(n, name, colon, ns, false, value);
            }
        }
    }

    /// Appends an item written ` name="value"` (the name stored already),
    /// spaced like the last item.
    fn push_item(&mut self, n: NodeId, name: Piece, colon: u32, ns: u32, decl: bool, value: &str) {
        let end = self.own_items(n) + self.node(n).items_len as usize;
        let ws = match end.checked_sub(1).filter(|_| self.node(n).items_len > 0) {
            Some(last) => self.items[last].ws,
            None => Piece::SPACE,
        };
        let value = self.own(&escape_value(value, b'"'));
        self.items.push(Item {
            ws,
            name,
            colon,
            eq: Piece::EQ_QUOTE,
            value,
            quote: b'"',
            ns,
            decl,
        });
        let node = self.node_mut(n);
        node.items_len += 1;
        node.retag = true;
    }

    /// Moves the items of `n` to the end of the shared item list (so they can
    /// grow) and returns where they start.
    fn own_items(&mut self, n: NodeId) -> usize {
        let (start, len) = {
            let node = self.node(n);
            (node.items_start as usize, node.items_len as usize)
        };
        if start + len != self.items.len() {
            let new_start = self.items.len();
            self.items.extend_from_within(start..start + len);
            self.node_mut(n).items_start = new_start as u32;
            return new_start;
        }
        start
    }

    /// Creates a detached element named for namespace scope `scope`.
    fn new_element(&mut self, scope: NodeId, ns: &str, preferred: &str, local: &str) -> NodeId {
        let default = self.lookup_prefix(scope, "").unwrap_or("");
        let (prefix, declare) = if default == ns {
            (String::new(), false)
        } else if ns.is_empty() {
            (String::new(), true)
        } else {
            match self.prefix_for(scope, ns, preferred) {
                Some(prefix) => (prefix, false),
                None => (preferred.to_owned(), true),
            }
        };
        let mut node = Node::new(Kind::Public(NodeKind::Element), NONE, Piece::EMPTY);
        node.name = self.own_qname(&prefix, local);
        node.colon = prefix.len() as u32;
        node.ns = self.intern_uri(ns);
        node.items_start = self.items.len() as u32;
        node.tail = Piece::SELF_CLOSE;
        node.self_closing = true;
        node.retag = true;
        let id = NodeId(self.nodes.len() as u32);
        self.nodes.push(node);
        if declare {
            self.declare_namespace(id, &prefix, ns);
        }
        id
    }

    /// A detached text node holding `raw` (already escaped).
    fn new_text_raw(&mut self, raw: &str) -> u32 {
        let piece = self.own(raw);
        self.nodes
            .push(Node::new(Kind::Public(NodeKind::Text), NONE, piece));
        self.nodes.len() as u32 - 1
    }

    /// Whether node `id` is a text node of whitespace only, with a line break.
    fn is_blank_text(&self, id: u32) -> bool {
        let node = &self.nodes[id as usize];
        let raw = self.piece(node.raw);
        node.kind == Kind::Public(NodeKind::Text)
            && raw.contains('\n')
            && raw.bytes().all(|b| b" \t\r\n".contains(&b))
    }

    /// The whitespace written before a child of `parent` and before the end
    /// tag of `parent`, when the document is indented.
    fn child_indentation(&self, parent: NodeId) -> (Option<String>, Option<String>) {
        let blank = |id: u32| {
            (id != NONE && self.is_blank_text(id)).then(|| self.piece(self.nodes[id as usize].raw))
        };
        let own =
            blank(self.node(parent).prev).map(|ws| ws.rsplit('\n').next().unwrap_or("").to_owned());
        let closing = blank(self.node(parent).last)
            .map(str::to_owned)
            .or_else(|| own.as_ref().map(|indent| format!("\n{indent}")));
        // The last child element, found from the end: a scan from the
        // first child made appending n elements cost n² (the manifest of a
        // large slice).
        let mut last = self.node(parent).last;
        while last != NONE && !self.nodes[last as usize].is_element() {
            last = self.nodes[last as usize].prev;
        }
        let sibling = (last != NONE)
            .then(|| blank(self.nodes[last as usize].prev))
            .flatten()
            .map(str::to_owned);
        let indent = sibling.or_else(|| own.map(|indent| format!("\n{indent}  ")));
        (indent, closing)
    }

    /// Links detached node `id` just before `sibling`.
    fn insert_before(&mut self, sibling: NodeId, id: u32) {
        let (parent, prev) = {
            let s = self.node(sibling);
            (s.parent, s.prev)
        };
        {
            let node = &mut self.nodes[id as usize];
            node.parent = parent;
            node.prev = prev;
            node.next = sibling.0;
        }
        self.node_mut(sibling).prev = id;
        if prev == NONE {
            self.nodes[parent as usize].first = id;
        } else {
            self.nodes[prev as usize].next = id;
        }
    }

    /// Detaches node `id` (and its subtree) from its parent.
    fn unlink(&mut self, id: u32) {
        let (parent, prev, next) = {
            let node = &self.nodes[id as usize];
            (node.parent, node.prev, node.next)
        };
        if parent == NONE {
            return;
        }
        if prev == NONE {
            self.nodes[parent as usize].first = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NONE {
            self.nodes[parent as usize].last = prev;
        } else {
            self.nodes[next as usize].prev = prev;
        }
        let node = &mut self.nodes[id as usize];
        node.parent = NONE;
        node.prev = NONE;
        node.next = NONE;
    }
}
