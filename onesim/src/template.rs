//! OpenNebula template texts as oned parses them: the attr=value syntax
//! (flex/bison grammar with its exact error texts) and the XML syntax used when
//! the first byte is `<`, plus the merge oned applies to an instantiate's extra
//! template (per top-level attribute, by replacement; an empty vector deletes).

use crate::xml::{self, Content, Element};

/// The value of one top-level attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttrValue {
    /// `NAME = value`.
    Single(String),
    /// `NAME = [ A = x, … ]`, sub-attributes in the order sent (first wins on duplicates).
    Vector(Vec<(String, String)>),
}

/// One top-level attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attr {
    /// Upper-cased name.
    pub name: String,
    /// Its value.
    pub value: AttrValue,
}

/// A parsed template: top-level attributes in the order sent (names may repeat).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Template {
    /// The attributes.
    pub attrs: Vec<Attr>,
}

impl Template {
    /// The first single value named `name`.
    pub fn single(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find_map(|a| match &a.value {
            AttrValue::Single(v) if a.name == name => Some(v.as_str()),
            _ => None,
        })
    }

    /// Every vector named `name`.
    pub fn vectors<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = &'a [(String, String)]> + 'a {
        self.attrs
            .iter()
            .filter(move |a| a.name == name)
            .filter_map(|a| match &a.value {
                AttrValue::Vector(v) => Some(v.as_slice()),
                AttrValue::Single(_) => None,
            })
    }

    /// Removes every attribute named `name`, returning them.
    pub fn take(&mut self, name: &str) -> Vec<Attr> {
        let (taken, kept) = std::mem::take(&mut self.attrs)
            .into_iter()
            .partition(|a| a.name == name);
        self.attrs = kept;
        taken
    }

    /// Sets a single value, replacing any attribute of that name.
    pub fn set(&mut self, name: &str, value: impl Into<String>) {
        self.take(name);
        self.attrs.push(Attr {
            name: name.to_owned(),
            value: AttrValue::Single(value.into()),
        });
    }

    /// Merges `extra` over `self` as instantiate does: each top-level name in
    /// `extra` replaces all attributes of that name; empty vectors only delete.
    pub fn merge_replacing(&mut self, extra: &Template) {
        for attr in &extra.attrs {
            self.take(&attr.name);
        }
        for attr in &extra.attrs {
            if !matches!(&attr.value, AttrValue::Vector(v) if v.is_empty()) {
                self.attrs.push(attr.clone());
            }
        }
    }

    /// The template as oned stores it: attributes sorted by name (stable), vector
    /// members sorted by name, every value in CDATA.
    pub fn to_elements(&self) -> Vec<Element> {
        let mut attrs: Vec<&Attr> = self.attrs.iter().collect();
        attrs.sort_by(|a, b| a.name.cmp(&b.name));
        attrs
            .into_iter()
            .map(|attr| match &attr.value {
                AttrValue::Single(v) => Element::cdata(&attr.name, v.clone()),
                AttrValue::Vector(members) => {
                    let mut members: Vec<&(String, String)> = members.iter().collect();
                    members.sort_by(|a, b| a.0.cmp(&b.0));
                    Element::parent(
                        &attr.name,
                        members
                            .into_iter()
                            .map(|(n, v)| Element::cdata(n, v.clone()))
                            .collect(),
                    )
                }
            })
            .collect()
    }

    /// Reads back a stored template (children of `<TEMPLATE>` or `<USER_TEMPLATE>`).
    pub fn from_elements(elements: &[Element]) -> Template {
        let attrs = elements
            .iter()
            .filter_map(|e| {
                match &e.content {
                    Content::Children(c) => Some(AttrValue::Vector(
                        c.iter()
                            .map(|m| (m.name.clone(), m.value().to_owned()))
                            .collect(),
                    )),
                    Content::Text(v) | Content::Cdata(v) => Some(AttrValue::Single(v.clone())),
                    Content::SelfClosed | Content::Open => Some(AttrValue::Single(String::new())),
                }
                .map(|value| Attr {
                    name: e.name.clone(),
                    value,
                })
            })
            .collect();
        Template { attrs }
    }
}

/// Parses a template in either syntax. The error is oned's message without the method prefix.
pub fn parse(text: &str) -> Result<Template, String> {
    if text.starts_with('<') {
        parse_xml(text)
    } else {
        Parser::new(text).template()
    }
}

fn parse_xml(text: &str) -> Result<Template, String> {
    const MALFORMED: &str = "Parse error: XML Template malformed.";
    let root = xml::parse(text).map_err(|_| MALFORMED.to_owned())?;
    let mut attrs = Vec::new();
    for element in root.children() {
        let value = match &element.content {
            Content::Text(v) | Content::Cdata(v) => AttrValue::Single(v.clone()),
            Content::Children(members) => {
                let mut vector: Vec<(String, String)> = Vec::new();
                for m in members {
                    if let Content::Text(v) | Content::Cdata(v) = &m.content
                        && !vector.iter().any(|(n, _)| n == &m.name)
                    {
                        vector.push((m.name.clone(), v.clone()));
                    }
                }
                AttrValue::Vector(vector)
            }
            Content::SelfClosed | Content::Open => continue,
        };
        if value_has_cdata_end(&value) {
            return Err("Parse error.".into());
        }
        attrs.push(Attr {
            name: element.name.clone(),
            value,
        });
    }
    Ok(Template { attrs })
}

fn value_has_cdata_end(value: &AttrValue) -> bool {
    match value {
        AttrValue::Single(v) => v.contains("]]>"),
        AttrValue::Vector(m) => m.iter().any(|(_, v)| v.contains("]]>")),
    }
}

/// Tokens of the attr=value grammar, named as the bison grammar names them.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Variable(String),
    Equal,
    EqualEmpty,
    OBracket,
    CBracket,
    Comma,
    Str(String),
    End,
}

impl Token {
    fn bison_name(&self) -> &'static str {
        match self {
            Token::Variable(_) => "VARIABLE",
            Token::Equal => "EQUAL",
            Token::EqualEmpty => "EQUAL_EMPTY",
            Token::OBracket => "OBRACKET",
            Token::CBracket => "CBRACKET",
            Token::Comma => "COMMA",
            Token::Str(_) => "STRING",
            Token::End => "$end",
        }
    }
}

/// Recursive-descent equivalent of oned's template grammar with flex-style
/// locations (line from 0, columns from 1, the last token's span at end of input).
struct Parser<'a> {
    rest: &'a str,
    line: usize,
    first_column: usize,
    last_column: usize,
    after_equal: bool,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            rest: text,
            line: 0,
            first_column: 1,
            last_column: 1,
            after_equal: false,
        }
    }

    fn advance(&mut self, len: usize) -> &'a str {
        let (taken, rest) = self.rest.split_at(len);
        self.rest = rest;
        for c in taken.chars() {
            if c == '\n' {
                self.line += 1;
                self.last_column = 1;
            }
        }
        self.first_column = self.last_column;
        self.last_column += taken.rsplit('\n').next().map_or(0, |s| s.chars().count());
        taken
    }

    fn next(&mut self) -> Result<Token, String> {
        loop {
            let Some(c) = self.rest.chars().next() else {
                return Ok(Token::End);
            };
            if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
                self.advance(c.len_utf8());
            } else if c == '#' {
                let len = self.rest.find('\n').unwrap_or(self.rest.len());
                self.advance(len);
            } else {
                break;
            }
        }
        let after_equal = std::mem::replace(&mut self.after_equal, false);
        let c = self.rest.chars().next().unwrap_or('\0');
        Ok(match c {
            '=' => {
                self.advance(1);
                let line_rest = self.rest.split('\n').next().unwrap_or("");
                if line_rest.trim_matches([' ', '\t', '\r']).is_empty() && self.rest.contains('\n')
                    || self.rest.trim().is_empty()
                {
                    Token::EqualEmpty
                } else {
                    self.after_equal = true;
                    Token::Equal
                }
            }
            '[' => {
                self.advance(1);
                Token::OBracket
            }
            ']' => {
                self.advance(1);
                Token::CBracket
            }
            ',' => {
                self.advance(1);
                Token::Comma
            }
            '"' => {
                let body = &self.rest[1..];
                let mut end = None;
                let mut escaped = false;
                for (i, ch) in body.char_indices() {
                    match ch {
                        '\\' if !escaped => escaped = true,
                        '"' if !escaped => {
                            end = Some(i);
                            break;
                        }
                        _ => escaped = false,
                    }
                }
                let Some(end) = end else {
                    return Err(self.syntax_error("unexpected $end"));
                };
                let raw = &self.advance(end + 2)[1..=end];
                let value = raw.replace("\\\"", "\"");
                if value.contains("]]>") {
                    return Err("Parse error.".into());
                }
                Token::Str(value)
            }
            _ => {
                let is_name = |ch: char| ch.is_ascii_alphanumeric() || ch == '_';
                let len = if after_equal {
                    self.rest
                        .find(|ch: char| {
                            matches!(ch, '=' | '#' | ' ' | '\t' | '\n' | ',' | '[' | ']')
                        })
                        .unwrap_or(self.rest.len())
                } else {
                    self.rest
                        .find(|ch: char| !is_name(ch))
                        .unwrap_or(self.rest.len())
                };
                if len == 0 {
                    self.advance(c.len_utf8());
                    return Err(
                        self.syntax_error(&format!("unexpected $undefined, character '{c}'"))
                    );
                }
                let word = self.advance(len);
                if after_equal {
                    Token::Str(word.to_owned())
                } else {
                    Token::Variable(word.to_ascii_uppercase())
                }
            }
        })
    }

    fn syntax_error(&self, detail: &str) -> String {
        format!(
            "Parse error: syntax error, {detail} at line {}, columns {}:{}",
            self.line, self.first_column, self.last_column
        )
    }

    fn expect_error(&self, got: &Token, expected: &str) -> String {
        self.syntax_error(&format!(
            "unexpected {}, expecting {expected}",
            got.bison_name()
        ))
    }

    fn template(mut self) -> Result<Template, String> {
        let mut attrs = Vec::new();
        loop {
            let name = match self.next()? {
                Token::End => break,
                Token::Variable(name) => name,
                other => return Err(self.expect_error(&other, "VARIABLE")),
            };
            let value = match self.next()? {
                Token::EqualEmpty => AttrValue::Single(String::new()),
                Token::Equal => match self.next()? {
                    Token::Str(v) => AttrValue::Single(v),
                    Token::OBracket => AttrValue::Vector(self.vector()?),
                    other => return Err(self.expect_error(&other, "STRING or OBRACKET")),
                },
                other => return Err(self.expect_error(&other, "EQUAL or EQUAL_EMPTY")),
            };
            attrs.push(Attr { name, value });
        }
        Ok(Template { attrs })
    }

    fn vector(&mut self) -> Result<Vec<(String, String)>, String> {
        let mut members: Vec<(String, String)> = Vec::new();
        let mut token = self.next()?;
        if token == Token::CBracket {
            return Ok(members);
        }
        loop {
            let name = match token {
                Token::Variable(name) => name,
                other => return Err(self.expect_error(&other, "VARIABLE")),
            };
            match self.next()? {
                Token::Equal => {}
                Token::EqualEmpty => return Err(self.expect_error(&Token::EqualEmpty, "EQUAL")),
                other => return Err(self.expect_error(&other, "EQUAL")),
            }
            let value = match self.next()? {
                Token::Str(v) => v,
                other => return Err(self.expect_error(&other, "STRING")),
            };
            if !members.iter().any(|(n, _)| n == &name) {
                members.push((name, value));
            }
            match self.next()? {
                Token::Comma => token = self.next()?,
                Token::CBracket => return Ok(members),
                other => return Err(self.expect_error(&other, "COMMA or CBRACKET")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_recorded_allocate_template() {
        let text = "NAME = \"geni-sliver-1\"\nCPU = \"0.5\"\nDISK = [ IMAGE_ID = \"0\" ]\nCONTEXT = [\n  NETWORK = \"YES\",\n  ssh_public_key = \"a \\\"q\\\" b\" ]\nEMPTY =\nbare = word\n";
        let t = parse(text).expect("parses");
        assert_eq!(t.single("NAME"), Some("geni-sliver-1"));
        assert_eq!(t.single("EMPTY"), Some(""));
        assert_eq!(t.single("BARE"), Some("word"));
        let context: Vec<_> = t.vectors("CONTEXT").collect();
        assert_eq!(
            context[0][1],
            ("SSH_PUBLIC_KEY".to_owned(), "a \"q\" b".to_owned())
        );
    }

    #[test]
    fn reports_the_recorded_syntax_error() {
        assert_eq!(
            parse("NAME = \"broken\" MEMORY = [ unterminated").unwrap_err(),
            "Parse error: syntax error, unexpected $end, expecting EQUAL at line 0, columns 28:40"
        );
        assert_eq!(parse("A = \"x]]>\"").unwrap_err(), "Parse error.");
        assert_eq!(
            parse("<T><A>x</T>").unwrap_err(),
            "Parse error: XML Template malformed."
        );
    }

    #[test]
    fn xml_syntax_and_merge() {
        let base = parse("CPU=1\nCONTEXT=[NETWORK=YES]\nNIC=[NETWORK_ID=0]").expect("base");
        let extra = parse("<TEMPLATE><CONTEXT><SSH_PUBLIC_KEY>k &amp; l</SSH_PUBLIC_KEY></CONTEXT><NIC></NIC><LABELS>x</LABELS></TEMPLATE>")
            .expect("extra");
        let mut merged = base.clone();
        merged.merge_replacing(&extra);
        assert_eq!(
            merged.vectors("CONTEXT").next().expect("context"),
            &[("SSH_PUBLIC_KEY".to_owned(), "k & l".to_owned())]
        );
        assert_eq!(merged.single("LABELS"), Some("x"));
        let mut emptied = base;
        emptied.merge_replacing(&parse("NIC=[]").expect("empty vector"));
        assert_eq!(emptied.vectors("NIC").count(), 0);
    }
}
