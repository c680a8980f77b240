//! Decoding a request body into a [`Call`] (and an answer into a
//! [`Reply`]). The body is hostile: it is read once with a streaming XML
//! reader that enforces the size and depth limits, refuses DTDs and entity
//! references other than the predefined ones, accepts only XML-RPC
//! element names in their places and checks the text of scalar values, so
//! every refusal names a line; the values are built in the same pass
//! (`tree`), and a document whose elements are not arranged as XML-RPC
//! arranges them is refused as a whole once it has been read. Line ends
//! are normalised as an XML parser must (CR LF and CR become LF) before
//! anything else.

mod tree;

use super::{Call, Fault, Reply, Value, fault_code};
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesStart, Event};
use quick_xml::reader::Reader;
use std::borrow::Cow;
use tree::{Builder, Read, Section};

/// Deepest element nesting accepted in a request (credentials and RSpecs
/// travel as strings, so real calls nest a handful of levels).
pub const MAX_DEPTH: usize = 64;

/// A kind of XML-RPC document: its root element and how it is arranged.
struct Document {
    root: &'static str,
    shape: &'static str,
}

impl Document {
    fn shape_error(&self) -> DecodeError {
        DecodeError::Shape {
            root: self.root,
            shape: self.shape,
        }
    }
}

/// How values are arranged, alike in calls and responses.
macro_rules! value_shape {
    () => {
        "; inside values, <struct> holds <member><name/><value/></member>, <array> holds <data><value/>…</data>, and typed values hold text of their type"
    };
}

/// A request.
const METHOD_CALL: Document = Document {
    root: "methodCall",
    shape: concat!(
        "<methodName> followed by optional <params> of <param><value>…</value></param>",
        value_shape!()
    ),
};

/// An answer.
const METHOD_RESPONSE: Document = Document {
    root: "methodResponse",
    shape: concat!(
        "<params><param><value>…</value></param></params> or <fault><value><struct>…</struct></value></fault>",
        value_shape!()
    ),
};

/// The elements of XML-RPC (with the `i8` and `nil` extensions, tolerated
/// on input), each with the parents it may have; roots have none.
const GRAMMAR: [(&str, &[&str]); 21] = [
    ("methodCall", &[]),
    ("methodResponse", &[]),
    ("methodName", &["methodCall"]),
    ("params", &["methodCall", "methodResponse"]),
    ("param", &["params"]),
    ("fault", &["methodResponse"]),
    ("value", &["param", "member", "data", "fault"]),
    ("i4", &["value"]),
    ("int", &["value"]),
    ("i8", &["value"]),
    ("boolean", &["value"]),
    ("string", &["value"]),
    ("double", &["value"]),
    ("dateTime.iso8601", &["value"]),
    ("base64", &["value"]),
    ("nil", &["value"]),
    ("struct", &["value"]),
    ("member", &["struct"]),
    ("name", &["member"]),
    ("array", &["value"]),
    ("data", &["array"]),
];

/// Why a request body is not an XML-RPC call this server will read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecodeError {
    /// The body exceeds the size limit.
    #[error("request body is {size} bytes, more than the limit of {limit} bytes")]
    TooLarge {
        /// Size of the body.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The body is not UTF-8.
    #[error("request body is not UTF-8 text (invalid byte sequence at offset {offset})")]
    NotUtf8 {
        /// Byte offset of the first invalid sequence.
        offset: usize,
    },
    /// A document type declaration (which could declare entities).
    #[error(
        "line {line}: <!DOCTYPE …> is refused: XML-RPC requests must not carry a DTD or entity declarations"
    )]
    Dtd {
        /// Line of the declaration.
        line: usize,
    },
    /// A reference to an entity that is neither predefined nor a character reference.
    #[error(
        "line {line}: entity reference &{name}; is refused: only &lt; &gt; &amp; &apos; &quot; and character references are allowed"
    )]
    Entity {
        /// Line of the reference.
        line: usize,
        /// The entity name.
        name: String,
    },
    /// Not well-formed XML.
    #[error("line {line}: not well-formed XML: {message}")]
    Xml {
        /// Line of the error.
        line: usize,
        /// The parser's description.
        message: String,
    },
    /// Nesting beyond [`MAX_DEPTH`].
    #[error("line {line}: elements nested more than {limit} levels deep")]
    TooDeep {
        /// Line of the element that went too deep.
        line: usize,
        /// The limit.
        limit: usize,
    },
    /// An element that XML-RPC does not have, or the wrong root.
    #[error("line {line}: {message}")]
    Structure {
        /// Line of the element.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A scalar whose text does not parse as its type.
    #[error("line {line}: <{element}>{text}</{element}> is not {expected}")]
    BadScalar {
        /// Line of the value.
        line: usize,
        /// The type element (`int`, `boolean`…).
        element: String,
        /// Its text.
        text: String,
        /// What it should be.
        expected: &'static str,
    },
    /// Well-formed, XML-RPC vocabulary, but not arranged as the expected document.
    #[error("not an XML-RPC {root}: expected {shape}")]
    Shape {
        /// The expected root element.
        root: &'static str,
        /// How its content should be arranged.
        shape: &'static str,
    },
}

impl DecodeError {
    /// The XML-RPC fault code a client receives for this error.
    pub fn fault_code(&self) -> i32 {
        match self {
            DecodeError::NotUtf8 { .. } | DecodeError::Xml { .. } => fault_code::PARSE_ERROR,
            _ => fault_code::INVALID_REQUEST,
        }
    }
}

/// Decodes a `methodResponse` (as the client reads answers): the value, or
/// the fault the server sent.
pub fn decode_response(body: &[u8], limit: usize) -> Result<Reply, DecodeError> {
    let text = checked_text(body, limit)?;
    let read = read(&text, METHOD_RESPONSE)?;
    if !read.whole {
        return Err(METHOD_RESPONSE.shape_error());
    }
    if let Some(Section { items, whole: true }) = read.params
        && let Ok([value]) = <[Value; 1]>::try_from(items)
    {
        return Ok(Ok(value));
    }
    match read.fault {
        Some(Section { items, whole: true }) if items.len() == 1 => fault(read.fault_members)
            .map(Err)
            .ok_or_else(|| METHOD_RESPONSE.shape_error()),
        _ => Err(METHOD_RESPONSE.shape_error()),
    }
}

/// Decodes a request body of at most `limit` bytes into a method call.
pub fn decode_call(body: &[u8], limit: usize) -> Result<Call, DecodeError> {
    let text = checked_text(body, limit)?;
    let read = read(&text, METHOD_CALL)?;
    let params = match read.params {
        None => Vec::new(),
        Some(Section { items, whole: true }) => items,
        Some(_) => return Err(METHOD_CALL.shape_error()),
    };
    match read.method {
        Some(method) if read.whole => Ok(Call { method, params }),
        _ => Err(METHOD_CALL.shape_error()),
    }
}

/// The fault whose struct has `members`: `faultCode` (an int) then
/// `faultString` (a string), in that order, and nothing else.
fn fault(members: Vec<(String, Value)>) -> Option<Fault> {
    match <[(String, Value); 2]>::try_from(members).ok()? {
        [
            (code_name, Value::Integer(code)),
            (string_name, Value::String(string)),
        ] if code_name == "faultCode" && string_name == "faultString" => {
            Some(Fault::new(code, string))
        }
        _ => None,
    }
}

/// The body as text: within the limit, UTF-8 (a byte order mark is
/// dropped), line ends normalised.
fn checked_text(body: &[u8], limit: usize) -> Result<Cow<'_, str>, DecodeError> {
    if body.len() > limit {
        return Err(DecodeError::TooLarge {
            size: body.len(),
            limit,
        });
    }
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let text = std::str::from_utf8(body).map_err(|e| DecodeError::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    Ok(normalize_line_ends(text))
}

/// CR LF and lone CR become LF (XML 1.0 §2.11).
fn normalize_line_ends(text: &str) -> Cow<'_, str> {
    if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// 1-based line of a byte offset.
fn line_at(text: &str, offset: u64) -> usize {
    let end = usize::try_from(offset)
        .unwrap_or(usize::MAX)
        .min(text.len());
    1 + text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

/// A scalar whose text is checked: its element name, its text so far
/// (character and entity references read as `&`) and where it started.
struct Scalar {
    element: &'static str,
    text: String,
    at: u64,
}

/// Reads the whole document once, checking everything the module
/// documentation lists, and builds its values.
fn read(text: &str, document: Document) -> Result<Read, DecodeError> {
    let mut reader = Reader::from_str(text);
    let mut open: Vec<&'static str> = Vec::with_capacity(16);
    let mut seen_root = false;
    let mut scalar: Option<Scalar> = None;
    let mut tree = Builder::new();
    let xml_error = |line, error: &dyn std::fmt::Display| DecodeError::Xml {
        line,
        message: error.to_string(),
    };
    loop {
        let event = reader
            .read_event()
            .map_err(|e| xml_error(line_at(text, reader.error_position()), &e))?;
        let line = || line_at(text, reader.buffer_position());
        match event {
            Event::Start(start) => {
                check_single_root(seen_root, open.len(), line)?;
                if open.len() >= MAX_DEPTH {
                    return Err(DecodeError::TooDeep {
                        line: line(),
                        limit: MAX_DEPTH,
                    });
                }
                let name = element_name(&start, open.last().copied(), &document, line)?;
                seen_root = true;
                open.push(name);
                scalar = is_checked_scalar(name).then(|| Scalar {
                    element: name,
                    text: String::new(),
                    at: reader.buffer_position(),
                });
                tree.open(name);
                if start.attributes().any(|a| a.is_err()) {
                    tree.bad_attributes();
                }
            }
            Event::Empty(start) => {
                check_single_root(seen_root, open.len(), line)?;
                let name = element_name(&start, open.last().copied(), &document, line)?;
                seen_root = true;
                tree.open(name);
                if start.attributes().any(|a| a.is_err()) {
                    tree.bad_attributes();
                }
                tree.close();
            }
            Event::End(_) => {
                open.pop();
                if let Some(done) = scalar.take() {
                    check_scalar(text, done)?;
                }
                tree.close();
            }
            Event::Text(t) => {
                let decoded = t.decode().map_err(|e| xml_error(line(), &e))?;
                if let Some(s) = scalar.as_mut() {
                    s.text.push_str(&decoded);
                }
                tree.text(&decoded);
            }
            Event::CData(c) => {
                tree.text(&c.decode().map_err(|e| xml_error(line(), &e))?);
            }
            Event::GeneralRef(r) => {
                let name = r.decode().map_err(|e| xml_error(line(), &e))?;
                if let Some(s) = scalar.as_mut() {
                    s.text.push('&');
                }
                if let Some(resolved) = resolve_predefined_entity(&name) {
                    tree.text(resolved);
                } else if !r.is_char_ref() {
                    return Err(DecodeError::Entity {
                        line: line(),
                        name: name.into_owned(),
                    });
                } else if let Ok(Some(c)) = r.resolve_char_ref() {
                    tree.text(c.encode_utf8(&mut [0; 4]));
                } else {
                    tree.bad_reference();
                }
            }
            Event::DocType(_) => return Err(DecodeError::Dtd { line: line() }),
            Event::Eof => {
                if let Some(unclosed) = open.last() {
                    return Err(DecodeError::Xml {
                        line: line(),
                        message: format!("the document ends inside <{unclosed}>"),
                    });
                }
                break;
            }
            Event::Decl(declaration) => match declaration.version().as_deref() {
                Ok(b"1.0") => {}
                Ok(b"1.1") => tree.xml_1_1(),
                _ => tree.bad_declaration(),
            },
            Event::Comment(_) | Event::PI(_) => {}
        }
    }
    if seen_root {
        Ok(tree.finish())
    } else {
        Err(DecodeError::Structure {
            line: 1,
            message: format!(
                "the body holds no XML element (expected <{}>)",
                document.root
            ),
        })
    }
}

/// Refuses a second root element.
fn check_single_root(
    seen_root: bool,
    depth: usize,
    line: impl Fn() -> usize,
) -> Result<(), DecodeError> {
    if seen_root && depth == 0 {
        return Err(DecodeError::Structure {
            line: line(),
            message: "a second element follows the root element".into(),
        });
    }
    Ok(())
}

/// Checks that an element is part of XML-RPC, in a place where XML-RPC
/// allows it (the root being the document's), and returns its name.
fn element_name(
    start: &BytesStart<'_>,
    parent: Option<&str>,
    document: &Document,
    line: impl Fn() -> usize,
) -> Result<&'static str, DecodeError> {
    let raw = start.name();
    let structure = |message| DecodeError::Structure {
        line: line(),
        message,
    };
    let Some(parent) = parent else {
        return if raw.as_ref() == document.root.as_bytes() {
            Ok(document.root)
        } else {
            let name = String::from_utf8_lossy(raw.as_ref());
            Err(structure(format!(
                "the root element is <{name}>, expected <{}>",
                document.root
            )))
        };
    };
    let Some(&(name, parents)) = GRAMMAR
        .iter()
        .find(|(known, _)| known.as_bytes() == raw.as_ref())
    else {
        let name = String::from_utf8_lossy(raw.as_ref());
        return Err(structure(format!("<{name}> is not an XML-RPC element")));
    };
    if !parents.contains(&parent) {
        let allowed: Vec<String> = parents.iter().map(|p| format!("<{p}>")).collect();
        return Err(structure(if allowed.is_empty() {
            format!("<{name}> must be the root element, not inside <{parent}>")
        } else {
            format!(
                "<{name}> is not allowed inside <{parent}> (only inside {})",
                allowed.join(" or ")
            )
        }));
    }
    Ok(name)
}

/// Scalars whose text is checked here, for a precise message.
fn is_checked_scalar(name: &str) -> bool {
    matches!(name, "i4" | "int" | "i8" | "boolean" | "double")
}

/// Checks the text of an `int`/`i4`/`i8`/`boolean`/`double` value of
/// the document `document`.
fn check_scalar(document: &str, scalar: Scalar) -> Result<(), DecodeError> {
    let text = scalar.text.trim();
    let (ok, expected) = match scalar.element {
        "i4" | "int" => (text.parse::<i32>().is_ok(), "a 32-bit integer"),
        "i8" => (text.parse::<i64>().is_ok(), "a 64-bit integer"),
        "boolean" => (matches!(text, "0" | "1"), "a boolean (0 or 1)"),
        _ => (text.parse::<f64>().is_ok(), "a floating-point number"),
    };
    if ok {
        Ok(())
    } else {
        Err(DecodeError::BadScalar {
            line: line_at(document, scalar.at),
            element: scalar.element.to_owned(),
            text: scalar.text,
            expected,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// The one parameter of a call whose `<param>` holds `value`, or the
    /// refusal's text.
    fn param(value: &str) -> Result<Value, String> {
        let body = format!(
            "<methodCall><methodName>M</methodName><params><param>{value}</param></params></methodCall>"
        );
        decode_call(body.as_bytes(), 1 << 20)
            .map(|mut call| call.params.remove(0))
            .map_err(|e| e.to_string())
    }

    fn string(text: &str) -> Result<Value, String> {
        Ok(Value::String(text.to_owned()))
    }

    #[test]
    fn text_is_kept_as_sent_except_blank_untyped_values() {
        assert_eq!(param("<value>  a b  </value>"), string("  a b  "));
        assert_eq!(param("<value> &#32; </value>"), string(""));
        assert_eq!(param("<value><string>  </string></value>"), string("  "));
        assert_eq!(param("<value/>"), string(""));
        assert_eq!(param("<value>\n <string>x</string>\n</value>"), string("x"));
        assert_eq!(
            param("<value>a<!--c-->b&lt;<![CDATA[<c>]]></value>"),
            string("ab<<c>")
        );
        assert_eq!(
            param("<value><string>&#x41;&amp;</string></value>"),
            string("A&")
        );
    }

    #[test]
    fn numbers_may_be_padded_but_booleans_and_dates_may_not() {
        assert_eq!(param("<value><i4> +5 </i4></value>"), Ok(Value::Integer(5)));
        assert_eq!(
            param("<value><double> 1e5 </double></value>"),
            Ok(Value::Double(1e5))
        );
        assert_eq!(param("<value><i8> 7 </i8></value>"), Ok(Value::Long(7)));
        assert!(param("<value><boolean> 1 </boolean></value>").is_err());
        assert!(
            param("<value><dateTime.iso8601> 20250101T12:00:00 </dateTime.iso8601></value>")
                .is_err()
        );
        assert_eq!(
            param("<value><base64> AQ ID </base64></value>"),
            Ok(Value::Base64(vec![1, 2, 3]))
        );
        assert!(param("<value><i4/></value>").is_err());
    }

    #[test]
    fn a_later_struct_member_of_the_same_name_wins() {
        let value = param(
            "<value><struct><member><value>1</value><name>a</name></member>\
             <member><name>a</name><value>2</value></member></struct></value>",
        );
        assert_eq!(
            value,
            Ok(Value::Struct(BTreeMap::from([(
                "a".to_owned(),
                Value::String("2".into())
            )])))
        );
    }

    #[test]
    fn elements_arranged_otherwise_than_xmlrpc_says_are_refused() {
        for value in [
            "",
            "<value>1</value><value>2</value>",
            "<value><i4>1</i4><i4>2</i4></value>",
            "<value>x<i4>1</i4></value>",
            "<value><array><data/><data/></array></value>",
            "<value><struct><member><name>a</name></member></struct></value>",
            "<value><struct><member><name> </name><value>1</value></member></struct></value>",
            "<value><array><data><value>1</value>x<value>2</value></data></array></value>",
            "<value><string>&#0;</string></value>",
        ] {
            assert!(param(value).is_err(), "{value}");
        }
        assert!(decode_call(b"<methodCall><methodName> </methodName></methodCall>", 99).is_err());
        assert!(decode_call(b"x<methodCall><methodName>M</methodName></methodCall>", 99).is_err());
        assert!(
            decode_call(
                b"<?xml vrsion='1.0'?><methodCall><methodName>M</methodName></methodCall>",
                99
            )
            .is_err()
        );
    }

    #[test]
    fn a_fault_is_its_code_then_its_string() {
        let fault = |members: &str| {
            let body = format!(
                "<methodResponse><fault><value><struct>{members}</struct></value></fault></methodResponse>"
            );
            decode_response(body.as_bytes(), 1 << 20)
        };
        let code = "<member><name>faultCode</name><value><int>4</int></value></member>";
        let string = "<member><name>faultString</name><value>x</value></member>";
        assert_eq!(
            fault(&format!("{code}{string}")),
            Ok(Err(Fault::new(4, "x".into())))
        );
        assert!(fault(&format!("{string}{code}")).is_err());
        assert!(fault(&format!("{code}{string}{string}")).is_err());
    }
}
