//! A small ordered XML element tree in the exact shape oned writes: no
//! whitespace between elements, values as plain text or CDATA, and empty
//! elements either self-closed (`<X/>`) or open/closed (`<X></X>`). Parsing
//! refuses DOCTYPE declarations and entity definitions and never fetches
//! anything; writing reproduces the parsed bytes.

use quick_xml::Reader;
use quick_xml::events::Event;

/// Largest document the parser accepts (bytes).
pub const MAX_DOCUMENT: usize = 16 * 1024 * 1024;

/// What an element holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// `<X/>`.
    SelfClosed,
    /// `<X></X>`.
    Open,
    /// A plain (escaped) text value.
    Text(String),
    /// A `<![CDATA[…]]>` value.
    Cdata(String),
    /// Child elements.
    Children(Vec<Element>),
}

/// One XML element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    /// Tag name.
    pub name: String,
    /// What it holds.
    pub content: Content,
}

/// Why a document could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XmlError(pub String);

impl std::fmt::Display for XmlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Element {
    /// An element with a plain text value.
    pub fn text(name: &str, value: impl Into<String>) -> Self {
        Self {
            name: name.to_owned(),
            content: Content::Text(value.into()),
        }
    }

    /// An element with a CDATA value (`<![CDATA[]]>` when empty, as oned writes template values).
    pub fn cdata(name: &str, value: impl Into<String>) -> Self {
        Self {
            name: name.to_owned(),
            content: Content::Cdata(value.into()),
        }
    }

    /// An element holding `children`; self-closed when there are none.
    pub fn parent(name: &str, children: Vec<Element>) -> Self {
        let content = if children.is_empty() {
            Content::SelfClosed
        } else {
            Content::Children(children)
        };
        Self {
            name: name.to_owned(),
            content,
        }
    }

    /// An element holding `children`; `<X></X>` when there are none.
    pub fn parent_open(name: &str, children: Vec<Element>) -> Self {
        let content = if children.is_empty() {
            Content::Open
        } else {
            Content::Children(children)
        };
        Self {
            name: name.to_owned(),
            content,
        }
    }

    /// The value of a text or CDATA element ("" for empty elements and parents).
    pub fn value(&self) -> &str {
        match &self.content {
            Content::Text(v) | Content::Cdata(v) => v,
            _ => "",
        }
    }

    /// The child elements (empty for leaves).
    pub fn children(&self) -> &[Element] {
        match &self.content {
            Content::Children(c) => c,
            _ => &[],
        }
    }

    /// Mutable child list; turns an empty element into a parent.
    pub fn children_mut(&mut self) -> &mut Vec<Element> {
        if !matches!(self.content, Content::Children(_)) {
            self.content = Content::Children(Vec::new());
        }
        match &mut self.content {
            Content::Children(c) => c,
            _ => unreachable!("content was just made a child list"),
        }
    }

    /// The first child named `name`.
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children().iter().find(|c| c.name == name)
    }

    /// The first child named `name`, mutable.
    pub fn child_mut(&mut self, name: &str) -> Option<&mut Element> {
        match &mut self.content {
            Content::Children(c) => c.iter_mut().find(|c| c.name == name),
            _ => None,
        }
    }

    /// The element at a `/`-separated path below this one.
    pub fn at(&self, path: &str) -> Option<&Element> {
        path.split('/').try_fold(self, |e, step| e.child(step))
    }

    /// The value at a path ("" when absent).
    pub fn value_at(&self, path: &str) -> &str {
        self.at(path).map_or("", Element::value)
    }

    /// Replaces the value of the first child `name`, keeping its text/CDATA kind,
    /// or appends a CDATA child when absent.
    pub fn set_value(&mut self, name: &str, value: impl Into<String>) {
        let value = value.into();
        match self.child_mut(name) {
            Some(child) => {
                child.content = match child.content {
                    Content::Cdata(_) => Content::Cdata(value),
                    _ if value.is_empty() => Content::SelfClosed,
                    _ => Content::Text(value),
                }
            }
            None => self.children_mut().push(Element::cdata(name, value)),
        }
    }

    /// Replaces the children of the first child `name` (self-closing it when empty).
    pub fn set_children(&mut self, name: &str, children: Vec<Element>) {
        if let Some(child) = self.child_mut(name) {
            let open = matches!(child.content, Content::Open);
            *child = if open {
                Element::parent_open(name, children)
            } else {
                Element::parent(name, children)
            };
        }
    }

    /// Writes the element in oned's compact form.
    pub fn write(&self, out: &mut String) {
        out.push('<');
        out.push_str(&self.name);
        match &self.content {
            Content::SelfClosed => {
                out.push_str("/>");
                return;
            }
            Content::Open => out.push('>'),
            Content::Text(v) => {
                out.push('>');
                escape_into(v, out);
            }
            Content::Cdata(v) => {
                out.push_str("><![CDATA[");
                out.push_str(v);
                out.push_str("]]>");
            }
            Content::Children(children) => {
                out.push('>');
                for child in children {
                    child.write(out);
                }
            }
        }
        out.push_str("</");
        out.push_str(&self.name);
        out.push('>');
    }

    /// The element as a compact string.
    pub fn to_xml(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }
}

/// XML-escapes `&`, `<` and `>` (what oned escapes in text values).
pub fn escape_into(value: &str, out: &mut String) {
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
}

/// Parses one document into its root element. Whitespace between elements is
/// dropped; a DOCTYPE, processing instruction other than the XML declaration,
/// or mixed content is an error.
pub fn parse(text: &str) -> Result<Element, XmlError> {
    if text.len() > MAX_DOCUMENT {
        return Err(XmlError("document too large".into()));
    }
    let mut reader = Reader::from_str(text);
    let mut stack: Vec<Element> = Vec::new();
    let mut root = None;
    loop {
        let event = reader.read_event().map_err(|e| XmlError(e.to_string()))?;
        match event {
            Event::Decl(_) | Event::Comment(_) => {}
            Event::DocType(_) | Event::PI(_) => {
                return Err(XmlError(
                    "DOCTYPE and processing instructions are refused".into(),
                ));
            }
            Event::Start(start) => {
                if root.is_some() {
                    return Err(XmlError("content after the root element".into()));
                }
                let name = String::from_utf8_lossy(start.name().as_ref()).into_owned();
                stack.push(Element {
                    name,
                    content: Content::Open,
                });
            }
            Event::Empty(start) => {
                let name = String::from_utf8_lossy(start.name().as_ref()).into_owned();
                let element = Element {
                    name,
                    content: Content::SelfClosed,
                };
                attach(&mut stack, &mut root, element)?;
            }
            Event::End(_) => {
                let element = stack
                    .pop()
                    .ok_or_else(|| XmlError("unbalanced end tag".into()))?;
                attach(&mut stack, &mut root, element)?;
            }
            Event::Text(t) => {
                let raw = t.decode().map_err(|e| XmlError(e.to_string()))?;
                add_value(&mut stack, Content::Text(raw.into_owned()))?;
            }
            Event::GeneralRef(r) => {
                let name = r.decode().map_err(|e| XmlError(e.to_string()))?;
                let value = match name.as_ref() {
                    "amp" => '&',
                    "lt" => '<',
                    "gt" => '>',
                    "quot" => '"',
                    "apos" => '\'',
                    other => other
                        .strip_prefix('#')
                        .and_then(char_reference)
                        .ok_or_else(|| XmlError(format!("unknown entity &{other};")))?,
                };
                add_value(&mut stack, Content::Text(value.to_string()))?;
            }
            Event::CData(c) => {
                let value = String::from_utf8(c.into_inner().into_owned())
                    .map_err(|e| XmlError(e.to_string()))?;
                add_value(&mut stack, Content::Cdata(value))?;
            }
            Event::Eof => break,
        }
    }
    if !stack.is_empty() {
        return Err(XmlError("unclosed element".into()));
    }
    root.ok_or_else(|| XmlError("no root element".into()))
}

fn char_reference(digits: &str) -> Option<char> {
    let code = match digits.strip_prefix('x') {
        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
        None => digits.parse().ok()?,
    };
    char::from_u32(code)
}

fn attach(
    stack: &mut [Element],
    root: &mut Option<Element>,
    element: Element,
) -> Result<(), XmlError> {
    match stack.last_mut() {
        Some(parent) => match &mut parent.content {
            Content::Open => parent.content = Content::Children(vec![element]),
            Content::Text(t) if t.trim().is_empty() => {
                parent.content = Content::Children(vec![element])
            }
            Content::Children(c) => c.push(element),
            _ => return Err(XmlError(format!("mixed content in <{}>", parent.name))),
        },
        None if root.is_none() => *root = Some(element),
        None => return Err(XmlError("several root elements".into())),
    }
    Ok(())
}

fn add_value(stack: &mut [Element], value: Content) -> Result<(), XmlError> {
    let Some(parent) = stack.last_mut() else {
        return match value {
            Content::Text(t) if t.trim().is_empty() => Ok(()),
            _ => Err(XmlError("text outside the root element".into())),
        };
    };
    parent.content = match (std::mem::replace(&mut parent.content, Content::Open), value) {
        (Content::Open, v) => v,
        (Content::Children(c), Content::Text(t)) if t.trim().is_empty() => Content::Children(c),
        (Content::Text(a), Content::Text(b)) => Content::Text(a + &b),
        _ => return Err(XmlError(format!("mixed content in <{}>", parent.name))),
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_oned_shapes() {
        let doc = "<VM><ID>0</ID><MONITORING></MONITORING><DEPLOY_ID/><T><A><![CDATA[x & <y>]]></A><E><![CDATA[]]></E></T><N>a &amp; b</N></VM>";
        let parsed = parse(doc).expect("parses");
        assert_eq!(parsed.to_xml(), doc);
        assert_eq!(parsed.value_at("T/A"), "x & <y>");
        assert_eq!(parsed.value_at("N"), "a & b");
    }

    #[test]
    fn refuses_doctype_and_mixed_content() {
        assert!(parse("<!DOCTYPE x [<!ENTITY e \"boom\">]><x>&e;</x>").is_err());
        assert!(parse("<x>text<y/></x>").is_err());
        assert!(parse("<x><y></x>").is_err());
    }
}
