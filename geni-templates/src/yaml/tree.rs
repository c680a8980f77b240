//! Loading one YAML document into a tree whose every node knows its line
//! and column, within bounds: the document's size, its nesting depth and
//! its node count, aliases counted as the nodes they expand to (so an
//! alias bomb is refused instead of expanded). Built on the event parser
//! of `saphyr-parser`; scalars keep their source text, so `12.10` stays
//! `12.10` and is read as a number only where a number is wanted.

use saphyr_parser::{Event, Parser, ScalarStyle, Span};
use std::collections::HashMap;

/// The most bytes a template may have.
pub(crate) const MAX_BYTES: usize = 1 << 20;
/// The deepest nesting of mappings and sequences.
pub(crate) const MAX_DEPTH: usize = 64;
/// The most nodes a document may expand to, aliases included.
pub(crate) const MAX_NODES: usize = 100_000;

/// One YAML node with its position.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Yaml {
    /// What it holds.
    pub kind: Kind,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

/// The three kinds of YAML node.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    /// A scalar's text; `plain` when it was written unquoted (so `null`,
    /// `true` and numbers keep their meaning).
    Scalar { text: String, plain: bool },
    /// A sequence.
    Seq(Vec<Yaml>),
    /// A mapping, in document order (keys are unique).
    Map(Vec<(Yaml, Yaml)>),
}

/// Why a document could not be loaded, with where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LoadError {
    /// 1-based line (0 for the document as a whole).
    pub line: usize,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl Yaml {
    /// A plain scalar at `line`, e.g. an input value put in place.
    pub fn scalar(text: impl Into<String>, plain: bool, line: usize, column: usize) -> Yaml {
        Yaml {
            kind: Kind::Scalar {
                text: text.into(),
                plain,
            },
            line,
            column,
        }
    }

    /// The value of `key` when this is a mapping that has it.
    pub fn get(&self, key: &str) -> Option<&Yaml> {
        self.entries()
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    /// The entries of a mapping; none for anything else.
    pub fn entries(&self) -> &[(Yaml, Yaml)] {
        match &self.kind {
            Kind::Map(entries) => entries,
            _ => &[],
        }
    }

    /// The items of a sequence; none for anything else.
    pub fn items(&self) -> &[Yaml] {
        match &self.kind {
            Kind::Seq(items) => items,
            _ => &[],
        }
    }

    /// Whether this is a mapping.
    pub fn is_map(&self) -> bool {
        matches!(self.kind, Kind::Map(_))
    }

    /// A scalar's text, unless it is null.
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::Scalar { text, .. } if !self.is_null() => Some(text),
            _ => None,
        }
    }

    /// Whether this is a null scalar (`~`, `null`, or nothing at all).
    pub fn is_null(&self) -> bool {
        matches!(&self.kind, Kind::Scalar { text, plain: true }
            if matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL"))
    }

    /// A boolean, YAML 1.1 spellings included (`yes`, `no`), as TOSCA
    /// templates write them.
    pub fn as_bool(&self) -> Option<bool> {
        match &self.kind {
            Kind::Scalar { text, plain: true } => match text.to_ascii_lowercase().as_str() {
                "true" | "yes" | "on" => Some(true),
                "false" | "no" | "off" => Some(false),
                _ => None,
            },
            _ => None,
        }
    }

    /// A whole number written as such (quoted or not).
    pub fn as_i64(&self) -> Option<i64> {
        self.as_str().and_then(|t| t.trim().parse().ok())
    }

    /// A number (whole or not).
    pub fn as_f64(&self) -> Option<f64> {
        self.as_str().and_then(|t| t.trim().parse().ok())
    }

    /// A mapping of exactly one entry: its key and value (the form of
    /// TOSCA and HOT intrinsic functions, `{ get_input: name }`).
    pub fn single_entry(&self) -> Option<(&str, &Yaml)> {
        match self.entries() {
            [(k, v)] => k.as_str().map(|k| (k, v)),
            _ => None,
        }
    }

    /// A short description of the node for messages: the text of a scalar,
    /// else its kind.
    pub fn describe(&self) -> String {
        match &self.kind {
            Kind::Scalar { text, .. } => format!("'{text}'"),
            Kind::Seq(_) => "a list".to_owned(),
            Kind::Map(_) => "a mapping".to_owned(),
        }
    }

    fn count(&self) -> usize {
        1 + match &self.kind {
            Kind::Scalar { .. } => 0,
            Kind::Seq(items) => items.iter().map(Yaml::count).sum(),
            Kind::Map(entries) => entries.iter().map(|(k, v)| k.count() + v.count()).sum(),
        }
    }
}

/// A container being filled while events arrive.
enum Open {
    Seq(Vec<Yaml>, Span, usize),
    Map(Vec<(Yaml, Yaml)>, Option<Yaml>, Span, usize),
}

/// Loads `text`, which must be one YAML document, within the bounds.
pub(crate) fn load(text: &str) -> Result<Yaml, LoadError> {
    if text.len() > MAX_BYTES {
        return Err(whole(format!(
            "the document has {} bytes; this aggregate reads templates of at most {MAX_BYTES} bytes",
            text.len()
        )));
    }
    let mut loader = Loader::default();
    let mut parser = Parser::new_from_str(text);
    while let Some(event) = parser.next_event() {
        let (event, span) = event.map_err(|e| LoadError {
            line: e.marker().line(),
            column: Some(e.marker().col() + 1),
            message: format!("malformed YAML: {}", e.info()),
        })?;
        if loader.event(event, span)? {
            break;
        }
    }
    loader
        .root
        .ok_or_else(|| whole("the document is empty".to_owned()))
}

fn whole(message: String) -> LoadError {
    LoadError {
        line: 0,
        column: None,
        message,
    }
}

fn at(span: Span, message: String) -> LoadError {
    LoadError {
        line: span.start.line(),
        column: Some(span.start.col() + 1),
        message,
    }
}

/// Applies YAML merge keys (`<<: *defaults`, `<<: [*a, *b]`): the
/// entries of the merged mappings that the mapping does not set itself.
fn merge(entries: Vec<(Yaml, Yaml)>) -> Vec<(Yaml, Yaml)> {
    let is_merge = |k: &Yaml| matches!(&k.kind, Kind::Scalar { text, plain: true } if text == "<<");
    if !entries.iter().any(|(k, _)| is_merge(k)) {
        return entries;
    }
    let (merges, mut own): (Vec<_>, Vec<_>) = entries.into_iter().partition(|(k, _)| is_merge(k));
    for (_, value) in merges {
        let sources = match value.kind {
            Kind::Seq(items) => items,
            _ => vec![value],
        };
        for source in sources {
            for (k, v) in source.entries() {
                if !own.iter().any(|(o, _)| o.as_str() == k.as_str()) {
                    own.push((k.clone(), v.clone()));
                }
            }
        }
    }
    own
}

#[derive(Default)]
struct Loader {
    stack: Vec<Open>,
    anchors: HashMap<usize, Yaml>,
    nodes: usize,
    documents: usize,
    root: Option<Yaml>,
}

impl Loader {
    /// Takes one event; true once the stream has ended.
    fn event(&mut self, event: Event<'_>, span: Span) -> Result<bool, LoadError> {
        match event {
            Event::StreamEnd => return Ok(true),
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(at(
                        span,
                        "a template is one YAML document; this one holds several (`---`)"
                            .to_owned(),
                    ));
                }
            }
            Event::Scalar(text, style, anchor, _) => {
                let node = Yaml::scalar(
                    text.into_owned(),
                    style == ScalarStyle::Plain,
                    span.start.line(),
                    span.start.col() + 1,
                );
                self.add(node, anchor, 1, span)?;
            }
            Event::Alias(id) => {
                let node = self.anchors.get(&id).cloned().ok_or_else(|| {
                    at(span, "malformed YAML: an alias names no anchor".to_owned())
                })?;
                let size = node.count();
                self.add(node, 0, size, span)?;
            }
            Event::SequenceStart(anchor, _) => self.open(Open::Seq(Vec::new(), span, anchor))?,
            Event::MappingStart(anchor, _) => {
                self.open(Open::Map(Vec::new(), None, span, anchor))?
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (node, anchor, span) = match self.stack.pop() {
                    Some(Open::Seq(items, span, anchor)) => (Kind::Seq(items), anchor, span),
                    Some(Open::Map(entries, _, span, anchor)) => {
                        (Kind::Map(merge(entries)), anchor, span)
                    }
                    None => return Err(at(span, "malformed YAML: unbalanced end".to_owned())),
                };
                let node = Yaml {
                    kind: node,
                    line: span.start.line(),
                    column: span.start.col() + 1,
                };
                // The node was counted when it opened.
                self.add(node, anchor, 0, span)?;
            }
            Event::Nothing | Event::StreamStart | Event::DocumentEnd => {}
        }
        Ok(false)
    }

    fn open(&mut self, open: Open) -> Result<(), LoadError> {
        let span = match &open {
            Open::Seq(_, span, _) | Open::Map(_, _, span, _) => *span,
        };
        if self.stack.len() >= MAX_DEPTH {
            return Err(at(
                span,
                format!("the document nests deeper than {MAX_DEPTH} levels"),
            ));
        }
        self.count(1, span)?;
        self.stack.push(open);
        Ok(())
    }

    fn count(&mut self, nodes: usize, span: Span) -> Result<(), LoadError> {
        self.nodes = self.nodes.saturating_add(nodes);
        if self.nodes > MAX_NODES {
            return Err(at(
                span,
                format!(
                    "the document expands to more than {MAX_NODES} nodes (aliases count as what they repeat)"
                ),
            ));
        }
        Ok(())
    }

    /// Places a finished node in its container (or as the document).
    fn add(&mut self, node: Yaml, anchor: usize, size: usize, span: Span) -> Result<(), LoadError> {
        self.count(size, span)?;
        if anchor > 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Open::Seq(items, ..)) => items.push(node),
            Some(Open::Map(entries, key, ..)) => match key.take() {
                None => {
                    if let Some(k) = node.as_str()
                        && entries.iter().any(|(e, _)| e.as_str() == Some(k))
                    {
                        return Err(at(
                            span,
                            format!("the key '{k}' appears twice in one mapping"),
                        ));
                    }
                    *key = Some(node);
                }
                Some(k) => entries.push((k, node)),
            },
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_carry_their_line_and_column() {
        let doc = load("a: 1\nb:\n  - x\n  - { c: d }\n").unwrap();
        let b = doc.get("b").unwrap();
        assert_eq!((b.line, b.column), (3, 3));
        let c = b.items()[1].get("c").unwrap();
        assert_eq!((c.as_str(), c.line, c.column), (Some("d"), 4, 10));
        assert_eq!(doc.get("a").unwrap().as_i64(), Some(1));
    }

    #[test]
    fn scalars_keep_their_source_text() {
        let doc = load("v: 12.10\nq: '7'\nn: ~\ny: yes\n").unwrap();
        assert_eq!(doc.get("v").unwrap().as_str(), Some("12.10"));
        assert_eq!(doc.get("q").unwrap().as_i64(), Some(7));
        assert!(doc.get("n").unwrap().is_null());
        assert_eq!(doc.get("y").unwrap().as_bool(), Some(true));
    }

    #[test]
    fn a_malformed_document_is_refused_with_its_line_and_column() {
        let err = load("a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
        assert!(err.line >= 2, "{err:?}");
        assert!(err.column.is_some(), "{err:?}");
        assert!(err.message.starts_with("malformed YAML"), "{err:?}");
        let err = load("a: b: c\n").unwrap_err();
        assert_eq!((err.line, err.column), (1, Some(5)), "{err:?}");
    }

    #[test]
    fn a_document_over_one_mebibyte_is_refused_before_parsing() {
        let text = format!("a: '{}'\n", "x".repeat(MAX_BYTES));
        let err = load(&text).unwrap_err();
        assert!(err.message.contains("at most 1048576 bytes"), "{err:?}");
    }

    #[test]
    fn a_document_nested_too_deep_is_refused() {
        let text = format!(
            "{}1{}",
            "[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        );
        let err = load(&text).unwrap_err();
        assert!(err.message.contains("deeper than 64"), "{err:?}");
        assert_eq!(err.line, 1);
    }

    #[test]
    fn an_alias_bomb_is_refused_before_it_expands() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let err = load(&text).unwrap_err();
        assert!(err.message.contains("more than 100000 nodes"), "{err:?}");
        assert!(err.line >= 4, "{err:?}");
    }

    #[test]
    fn anchors_and_aliases_within_bounds_are_expanded() {
        let doc = load("base: &b { cpus: 2 }\nnode: *b\n").unwrap();
        assert_eq!(
            doc.get("node").unwrap().get("cpus").unwrap().as_i64(),
            Some(2)
        );
    }

    #[test]
    fn merge_keys_add_the_entries_a_mapping_does_not_set() {
        let doc = load("d: &d { cpus: 1, mem: 2 GB }\nvm:\n  <<: *d\n  cpus: 4\n").unwrap();
        let vm = doc.get("vm").unwrap();
        assert_eq!(vm.get("cpus").unwrap().as_i64(), Some(4));
        assert_eq!(vm.get("mem").unwrap().as_str(), Some("2 GB"));
        assert!(vm.get("<<").is_none());
    }

    #[test]
    fn duplicate_keys_and_several_documents_are_refused() {
        let err = load("a: 1\na: 2\n").unwrap_err();
        assert!(err.message.contains("'a' appears twice"), "{err:?}");
        assert_eq!(err.line, 2);
        let err = load("a: 1\n---\nb: 2\n").unwrap_err();
        assert!(err.message.contains("several"), "{err:?}");
        assert!(load("# nothing\n").unwrap_err().message.contains("empty"));
    }
}
