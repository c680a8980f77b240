//! Decoding a request body into a [`Call`]. The body is hostile: it is
//! first scanned with a streaming XML reader that enforces the size and
//! depth limits, refuses DTDs and entity references other than the
//! predefined ones, accepts only XML-RPC element names and checks the text
//! of scalar values, so every refusal names a line; only then does `dxr`
//! build the values. Line ends are normalised as an XML parser must
//! (CR LF and CR become LF) before anything else.

use super::{Call, Reply, fault_code};
use quick_xml::events::{BytesStart, Event};
use quick_xml::reader::Reader;
use std::borrow::Cow;

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
    scan(&text, METHOD_RESPONSE)?;
    if let Ok(response) = dxr::MethodResponse::from_xml(&text) {
        return Ok(Ok(response.value));
    }
    match dxr::FaultResponse::from_xml(&text) {
        Ok(fault) => Ok(Err(fault.fault)),
        Err(_) => Err(METHOD_RESPONSE.shape_error()),
    }
}

/// Decodes a request body of at most `limit` bytes into a method call.
pub fn decode_call(body: &[u8], limit: usize) -> Result<Call, DecodeError> {
    let text = checked_text(body, limit)?;
    scan(&text, METHOD_CALL)?;
    let call = dxr::MethodCall::from_xml(&text).map_err(|_| METHOD_CALL.shape_error())?;
    Ok(Call {
        method: call.name.into_owned(),
        params: call.params,
    })
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

/// The scalar being read: its element name, its text so far and its line.
struct Scalar {
    element: String,
    text: String,
    line: usize,
}

/// Scans the whole document once, checking everything that does not need
/// the value tree (see the module documentation).
fn scan(text: &str, document: Document) -> Result<(), DecodeError> {
    let mut reader = Reader::from_str(text);
    let mut open: Vec<String> = Vec::new();
    let mut seen_root = false;
    let mut scalar: Option<Scalar> = None;
    loop {
        let event = reader.read_event().map_err(|e| DecodeError::Xml {
            line: line_at(text, reader.error_position()),
            message: e.to_string(),
        })?;
        let line = || line_at(text, reader.buffer_position());
        match event {
            Event::Start(start) => {
                check_single_root(seen_root, &open, line)?;
                if open.len() >= MAX_DEPTH {
                    return Err(DecodeError::TooDeep {
                        line: line(),
                        limit: MAX_DEPTH,
                    });
                }
                let name = element_name(&start, open.last(), &document, line)?;
                seen_root = true;
                open.push(name.clone());
                scalar = is_checked_scalar(&name).then(|| Scalar {
                    element: name,
                    text: String::new(),
                    line: line(),
                });
            }
            Event::Empty(start) => {
                check_single_root(seen_root, &open, line)?;
                element_name(&start, open.last(), &document, line)?;
                seen_root = true;
            }
            Event::End(_) => {
                open.pop();
                if let Some(done) = scalar.take() {
                    check_scalar(done)?;
                }
            }
            Event::Text(t) => {
                if let Some(s) = scalar.as_mut() {
                    s.text.push_str(&t.decode().map_err(|e| DecodeError::Xml {
                        line: line(),
                        message: e.to_string(),
                    })?);
                }
            }
            Event::GeneralRef(r) => {
                let name = String::from_utf8_lossy(&r).into_owned();
                let predefined = matches!(name.as_str(), "lt" | "gt" | "amp" | "apos" | "quot");
                if !predefined && !r.is_char_ref() {
                    return Err(DecodeError::Entity { line: line(), name });
                }
                if let Some(s) = scalar.as_mut() {
                    s.text.push('&');
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
            Event::CData(_) | Event::Comment(_) | Event::Decl(_) | Event::PI(_) => {}
        }
    }
    if seen_root {
        Ok(())
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
    open: &[String],
    line: impl Fn() -> usize,
) -> Result<(), DecodeError> {
    if seen_root && open.is_empty() {
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
    parent: Option<&String>,
    document: &Document,
    line: impl Fn() -> usize,
) -> Result<String, DecodeError> {
    let name = String::from_utf8_lossy(start.name().as_ref()).into_owned();
    let structure = |message| DecodeError::Structure {
        line: line(),
        message,
    };
    let Some(parent) = parent else {
        return if name == document.root {
            Ok(name)
        } else {
            Err(structure(format!(
                "the root element is <{name}>, expected <{}>",
                document.root
            )))
        };
    };
    let Some((_, parents)) = GRAMMAR.iter().find(|(known, _)| *known == name) else {
        return Err(structure(format!("<{name}> is not an XML-RPC element")));
    };
    if !parents.contains(&parent.as_str()) {
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

/// Checks the text of an `int`/`i4`/`i8`/`boolean`/`double` value.
fn check_scalar(scalar: Scalar) -> Result<(), DecodeError> {
    let text = scalar.text.trim();
    let (ok, expected) = match scalar.element.as_str() {
        "i4" | "int" => (text.parse::<i32>().is_ok(), "a 32-bit integer"),
        "i8" => (text.parse::<i64>().is_ok(), "a 64-bit integer"),
        "boolean" => (matches!(text, "0" | "1"), "a boolean (0 or 1)"),
        _ => (text.parse::<f64>().is_ok(), "a floating-point number"),
    };
    if ok {
        Ok(())
    } else {
        Err(DecodeError::BadScalar {
            line: scalar.line,
            element: scalar.element,
            text: scalar.text,
            expected,
        })
    }
}
