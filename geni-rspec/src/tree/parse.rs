//! The parser: drives quick-xml's tokenizer over the input, checks what the
//! tokenizer leaves unchecked (names, attributes, references, namespaces,
//! nesting, content outside the root, limits) and builds the arena.

use super::error::{ParseError, position};
use super::escape::{RefError, check_ref, check_value};
use super::model::{Document, Item, Kind, NO_NS, NONE, Node, Piece, XML_NS_ID};
use super::scan::{RawItem, ScanError, scan_end_tag, scan_start_tag};
use super::{Limits, NodeKind, markup};
use quick_xml::events::Event;
use quick_xml::reader::Reader;
use std::collections::HashSet;
use std::sync::OnceLock;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Parses `input` under `limits`.
pub(crate) fn parse(input: &[u8], limits: &Limits) -> Result<Document, ParseError> {
    if input.len() > limits.max_bytes || input.len() >= NONE as usize {
        return Err(ParseError::TooLarge {
            size: input.len(),
            limit: limits.max_bytes.min(NONE as usize - 1),
        });
    }
    let text = markup::check_characters(input)?;
    let bom = if input.starts_with(BOM) { BOM.len() } else { 0 };
    let mut builder = Builder::new(text, limits, bom);
    builder.run()?;
    Ok(builder.doc)
}

/// An element whose end tag has not been read yet.
struct Open {
    node: u32,
    name_start: usize,
    name_end: usize,
    scopes_len: usize,
}

/// A namespace binding in scope: prefix range (empty for the default) and URI id.
struct Scope {
    prefix_start: usize,
    prefix_end: usize,
    uri: u32,
}

/// Parser state over one input.
struct Builder<'i> {
    source: &'i str,
    src: &'i [u8],
    limits: &'i Limits,
    bom: usize,
    doc: Document,
    cur: u32,
    open: Vec<Open>,
    scopes: Vec<Scope>,
    raw_items: Vec<RawItem>,
    pending: Option<(usize, usize)>,
}

impl<'i> Builder<'i> {
    fn new(text: &'i str, limits: &'i Limits, bom: usize) -> Self {
        let src = text.as_bytes();
        let mut doc = Document {
            src: text.to_owned(),
            owned: String::new(),
            // About one node per `<` (tags start nodes, text lies between
            // them) and one item per `=`: sized so the arenas rarely regrow.
            nodes: Vec::with_capacity(memchr::memchr_iter(b'<', src).count() + 2),
            items: Vec::with_capacity(memchr::memchr_iter(b'=', src).count() + 1),
            uris: vec![Piece::EMPTY, Piece::XML_NS],
            root: NONE,
            lines: OnceLock::new(),
        };
        doc.nodes
            .push(Node::new(Kind::Document, 0, Piece::Src(0, bom as u32)));
        Self {
            source: text,
            src,
            limits,
            bom,
            doc,
            cur: 0,
            open: Vec::new(),
            scopes: Vec::new(),
            raw_items: Vec::new(),
            pending: None,
        }
    }

    fn run(&mut self) -> Result<(), ParseError> {
        let mut reader = Reader::from_reader(&self.src[self.bom..]);
        reader.config_mut().check_end_names = false;
        reader.config_mut().allow_unmatched_ends = true;
        loop {
            let before = self.bom + reader.buffer_position() as usize;
            let event = reader.read_event().map_err(|e| {
                self.syntax(self.bom + reader.error_position() as usize, e.to_string())
            })?;
            let after = self.bom + reader.buffer_position() as usize;
            match event {
                Event::Text(_) => self.text(before, after, None)?,
                Event::GeneralRef(_) => {
                    let name = self.doc_str(before + 1, after - 1);
                    self.text(before, after, Some(name))?
                }
                Event::Start(_) => self.start(before, after, false)?,
                Event::Empty(_) => self.start(before, after, true)?,
                Event::End(_) => self.end(before, after)?,
                Event::CData(_) => {
                    if self.open.is_empty() {
                        return Err(self.outside(before, "a CDATA section"));
                    }
                    self.leaf(NodeKind::CData, before, after)?
                }
                Event::Comment(c) => {
                    markup::check_comment(self.src, before, &c)?;
                    self.leaf(NodeKind::Comment, before, after)?
                }
                Event::PI(_) => {
                    markup::check_pi(self.src, before, after)?;
                    self.leaf(NodeKind::ProcessingInstruction, before, after)?
                }
                Event::Decl(_) => {
                    if before != self.bom || self.doc.nodes.len() > 1 || self.pending.is_some() {
                        return Err(markup::misplaced_declaration(self.src, before));
                    }
                    markup::check_decl(self.src, before, after)?;
                    self.leaf(NodeKind::ProcessingInstruction, before, after)?
                }
                Event::DocType(_) => {
                    let (line, column) = position(self.src, before);
                    return Err(ParseError::Doctype { line, column });
                }
                Event::Eof => return self.finish(),
            }
        }
    }

    fn syntax(&self, offset: usize, message: String) -> ParseError {
        let (line, column) = position(self.src, offset);
        ParseError::Syntax {
            line,
            column,
            message,
        }
    }

    fn outside(&self, offset: usize, what: &str) -> ParseError {
        let (line, column) = position(self.src, offset);
        ParseError::OutsideRoot {
            line,
            column,
            what: what.to_owned(),
        }
    }

    fn scan_error(&self, e: ScanError) -> ParseError {
        self.syntax(e.offset, e.message)
    }

    fn ref_error(&self, base: usize, e: RefError) -> ParseError {
        match e {
            RefError::Unknown(at, name) => {
                let (line, column) = position(self.src, base + at);
                ParseError::UnknownEntity { line, column, name }
            }
            RefError::Malformed(at, message) => self.syntax(base + at, message),
        }
    }

    fn lossy(&self, start: usize, end: usize) -> String {
        String::from_utf8_lossy(&self.src[start..end]).into_owned()
    }

    /// Adds a node under the current element.
    fn push(&mut self, node: Node) -> Result<u32, ParseError> {
        if self.doc.nodes.len() >= self.limits.max_nodes {
            return Err(ParseError::LimitExceeded {
                line: position(self.src, node.offset as usize).0,
                what: "nodes",
                limit: self.limits.max_nodes,
            });
        }
        let id = self.doc.nodes.len() as u32;
        self.doc.nodes.push(node);
        self.doc.link_last(self.cur, id);
        Ok(id)
    }

    fn leaf(&mut self, kind: NodeKind, start: usize, end: usize) -> Result<(), ParseError> {
        self.flush_text()?;
        let raw = Piece::Src(start as u32, end as u32);
        self.push(Node::new(Kind::Public(kind), start as u32, raw))?;
        Ok(())
    }

    /// Extends the pending text run with text or a reference named `reference`.
    fn text(
        &mut self,
        start: usize,
        end: usize,
        reference: Option<&str>,
    ) -> Result<(), ParseError> {
        let bytes = &self.src[start..end];
        if self.open.is_empty() {
            if reference.is_some() {
                return Err(self.outside(start, "an entity reference"));
            }
            if let Some(i) = bytes.iter().position(|b| !b" \t\r\n".contains(b)) {
                let what = if self.doc.root == NONE {
                    "text before"
                } else {
                    "text after"
                };
                let what = format!("{what} the root element");
                return Err(self.outside(start + i, &what));
            }
        }
        match reference {
            Some(name) => check_ref(name, 0).map_err(|e| self.ref_error(start, e))?,
            None => {
                if let Some(i) = memchr::memmem::find(bytes, b"]]>") {
                    return Err(self.syntax(
                        start + i,
                        "`]]>` is not allowed in text; write ]]&gt;".to_owned(),
                    ));
                }
            }
        }
        self.pending = match self.pending {
            Some((s, e)) if e == start => Some((s, end)),
            Some(_) => {
                self.flush_text()?;
                Some((start, end))
            }
            None => Some((start, end)),
        };
        Ok(())
    }

    fn flush_text(&mut self) -> Result<(), ParseError> {
        if let Some((start, end)) = self.pending.take() {
            let raw = Piece::Src(start as u32, end as u32);
            self.push(Node::new(Kind::Public(NodeKind::Text), start as u32, raw))?;
        }
        Ok(())
    }

    fn start(&mut self, start: usize, end: usize, empty: bool) -> Result<(), ParseError> {
        self.flush_text()?;
        if self.open.is_empty() && self.doc.root != NONE {
            return Err(self.outside(start, "a second root element"));
        }
        if self.open.len() >= self.limits.max_depth {
            return Err(ParseError::LimitExceeded {
                line: position(self.src, start).0,
                what: "levels of element nesting",
                limit: self.limits.max_depth,
            });
        }
        let mut raw_items = std::mem::take(&mut self.raw_items);
        raw_items.clear();
        let tag = scan_start_tag(self.src, start, end, empty, &mut raw_items)
            .map_err(|e| self.scan_error(e))?;
        let result = self.element(start, end, empty, tag, &raw_items);
        self.raw_items = raw_items;
        result
    }

    fn element(
        &mut self,
        start: usize,
        end: usize,
        empty: bool,
        tag: super::scan::RawTag,
        raw_items: &[RawItem],
    ) -> Result<(), ParseError> {
        if raw_items.len() > self.limits.max_attributes {
            return Err(ParseError::LimitExceeded {
                line: position(self.src, start).0,
                what: "attributes on one element",
                limit: self.limits.max_attributes,
            });
        }
        let scopes_len = self.scopes.len();
        let items_start = self.doc.items.len();
        for raw in raw_items {
            self.declaration(raw)?;
        }
        let name_start = start + 1;
        let name_end = tag.name_end as usize;
        let ns = self.resolve(
            name_start,
            name_start + tag.colon as usize,
            name_start,
            name_end,
        )?;
        for raw in raw_items {
            let item = self.attribute(raw)?;
            self.doc.items.push(item);
        }
        self.check_duplicates(raw_items, items_start, start, name_end)?;
        let mut node = Node::new(
            Kind::Public(NodeKind::Element),
            start as u32,
            Piece::Src(start as u32, end as u32),
        );
        node.name = Piece::Src(name_start as u32, name_end as u32);
        node.colon = tag.colon;
        node.ns = ns;
        node.items_start = items_start as u32;
        node.items_len = raw_items.len() as u32;
        node.tail = Piece::Src(tag.tail_start, end as u32);
        node.self_closing = empty;
        let id = self.push(node)?;
        if self.doc.root == NONE {
            self.doc.root = id;
        }
        if empty {
            self.scopes.truncate(scopes_len);
        } else {
            self.open.push(Open {
                node: id,
                name_start,
                name_end,
                scopes_len,
            });
            self.cur = id;
        }
        Ok(())
    }

    /// Binds the namespace declared by `raw`, if it is one.
    fn declaration(&mut self, raw: &RawItem) -> Result<(), ParseError> {
        let name = &self.src[raw.name_start as usize..raw.name_end as usize];
        let prefix = match (name, raw.colon) {
            (b"xmlns", 0) => (raw.name_end, raw.name_end),
            (_, 5) if name.starts_with(b"xmlns:") => (raw.name_start + 6, raw.name_end),
            _ => return Ok(()),
        };
        let (vs, ve) = (raw.value_start as usize, raw.value_end as usize);
        check_value(self.doc_str(vs, ve)).map_err(|e| self.ref_error(vs, e))?;
        let uri = self.intern(vs, ve);
        let prefix_bytes = &self.src[prefix.0 as usize..prefix.1 as usize];
        let problem = if !prefix_bytes.is_empty() && uri == NO_NS {
            Some("a prefixed namespace declaration cannot be empty")
        } else if prefix_bytes == b"xmlns" {
            Some("the prefix `xmlns` cannot be declared")
        } else if (prefix_bytes == b"xml") != (uri == XML_NS_ID) {
            Some("the prefix `xml` is bound to the XML namespace and only to it")
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(self.syntax(raw.name_start as usize, problem.to_owned()));
        }
        self.scopes.push(Scope {
            prefix_start: prefix.0 as usize,
            prefix_end: prefix.1 as usize,
            uri,
        });
        Ok(())
    }

    /// The source text `start..end` (ranges end at ASCII delimiters).
    fn doc_str(&self, start: usize, end: usize) -> &'i str {
        self.source.get(start..end).unwrap_or("")
    }

    /// The id of the namespace URI written at `src[start..end]`.
    fn intern(&mut self, start: usize, end: usize) -> u32 {
        let raw = self.doc_str(start, end);
        let value = super::escape::unescape_value(raw);
        let found = self
            .doc
            .uris
            .iter()
            .position(|p| self.doc.piece(*p) == value);
        if let Some(i) = found {
            return i as u32;
        }
        let piece = match value {
            std::borrow::Cow::Borrowed(_) => Piece::Src(start as u32, end as u32),
            std::borrow::Cow::Owned(s) => self.doc.own(&s),
        };
        self.doc.uris.push(piece);
        self.doc.uris.len() as u32 - 1
    }

    /// Resolves the prefix `src[ps..pe]` (empty: the default namespace) of
    /// the name `src[ns..ne]`.
    fn resolve(&self, ps: usize, pe: usize, ns: usize, ne: usize) -> Result<u32, ParseError> {
        // `pe` is the colon position for prefixed names; un-prefixed ones give ps == pe.
        let prefix = &self.src[ps..pe];
        if prefix == b"xml" {
            return Ok(XML_NS_ID);
        }
        let bound = self
            .scopes
            .iter()
            .rev()
            .find(|s| &self.src[s.prefix_start..s.prefix_end] == prefix);
        match bound {
            Some(scope) => Ok(scope.uri),
            None if prefix.is_empty() => Ok(NO_NS),
            None => {
                let (line, column) = position(self.src, ns);
                Err(ParseError::UndeclaredPrefix {
                    line,
                    column,
                    prefix: self.lossy(ps, pe),
                    name: self.lossy(ns, ne),
                })
            }
        }
    }

    /// Checks and resolves one item of a start tag.
    fn attribute(&mut self, raw: &RawItem) -> Result<Item, ParseError> {
        let (s, e) = (raw.name_start as usize, raw.name_end as usize);
        let name = &self.src[s..e];
        let decl = name == b"xmlns" || (raw.colon == 5 && name.starts_with(b"xmlns:"));
        let (vs, ve) = (raw.value_start as usize, raw.value_end as usize);
        let ns = if decl {
            self.intern(vs, ve)
        } else {
            check_value(self.doc_str(vs, ve)).map_err(|err| self.ref_error(vs, err))?;
            if raw.colon == 0 {
                NO_NS
            } else {
                self.resolve(s, s + raw.colon as usize, s, e)?
            }
        };
        Ok(Item {
            ws: Piece::Src(raw.ws_start, raw.name_start),
            name: Piece::Src(raw.name_start, raw.name_end),
            colon: raw.colon,
            eq: Piece::Src(raw.name_end, raw.value_start),
            value: Piece::Src(raw.value_start, raw.value_end),
            quote: raw.quote,
            ns,
            decl,
        })
    }

    /// Refuses an attribute written twice, by name or by namespace and local name.
    fn check_duplicates(
        &self,
        raw_items: &[RawItem],
        items_start: usize,
        start: usize,
        name_end: usize,
    ) -> Result<(), ParseError> {
        let name = |r: &RawItem| &self.src[r.name_start as usize..r.name_end as usize];
        let expanded = |i: usize| {
            let item = &self.doc.items[items_start + i];
            let r = &raw_items[i];
            (!item.decl && r.colon != 0).then(|| {
                (
                    item.ns,
                    &self.src[(r.name_start + r.colon + 1) as usize..r.name_end as usize],
                )
            })
        };
        let duplicate = if raw_items.len() <= 16 {
            (1..raw_items.len()).find(|&i| {
                (0..i).any(|j| {
                    name(&raw_items[i]) == name(&raw_items[j])
                        || (expanded(i).is_some() && expanded(i) == expanded(j))
                })
            })
        } else {
            let mut names = HashSet::new();
            let mut pairs = HashSet::new();
            (0..raw_items.len()).find(|&i| {
                !names.insert(name(&raw_items[i]))
                    || expanded(i).is_some_and(|pair| !pairs.insert(pair))
            })
        };
        match duplicate {
            None => Ok(()),
            Some(i) => {
                let r = &raw_items[i];
                let (line, column) = position(self.src, r.name_start as usize);
                Err(ParseError::DuplicateAttribute {
                    line,
                    column,
                    name: self.lossy(r.name_start as usize, r.name_end as usize),
                    element: self.lossy(start + 1, name_end),
                })
            }
        }
    }

    fn end(&mut self, start: usize, end: usize) -> Result<(), ParseError> {
        self.flush_text()?;
        let (ns, ne) = scan_end_tag(self.src, start, end).map_err(|e| self.scan_error(e))?;
        let Some(open) = self.open.pop() else {
            let what = format!("end tag </{}> without a start tag", self.lossy(ns, ne));
            return Err(self.outside(start, &what));
        };
        if self.src[open.name_start..open.name_end] != self.src[ns..ne] {
            let (line, column) = position(self.src, start);
            return Err(ParseError::MismatchedTag {
                line,
                column,
                expected: self.lossy(open.name_start, open.name_end),
                found: self.lossy(ns, ne),
                open_line: position(self.src, open.name_start).0,
            });
        }
        let node = &mut self.doc.nodes[open.node as usize];
        node.end = Piece::Src(start as u32, end as u32);
        self.cur = node.parent;
        self.scopes.truncate(open.scopes_len);
        Ok(())
    }

    fn finish(&mut self) -> Result<(), ParseError> {
        self.flush_text()?;
        let line = position(self.src, self.src.len()).0;
        if let Some(open) = self.open.last() {
            return Err(ParseError::Unclosed {
                line,
                name: self.lossy(open.name_start, open.name_end),
                open_line: position(self.src, open.name_start).0,
            });
        }
        if self.doc.root == NONE {
            return Err(ParseError::NoRoot { line });
        }
        Ok(())
    }
}
