//! Encoding calls, responses and faults, written straight into one string
//! (no intermediate tree; the text is what `dxr`'s serialiser writes,
//! byte for byte, which the tests check). In responses only the types
//! every client reads are emitted (`int`, `boolean`, `string`, `double`,
//! `struct`, `array`); a value holding `nil`, `i8`, `dateTime.iso8601` or
//! `base64` is refused, naming where it sits, and characters XML 1.0 does
//! not allow (control characters from stack traces, say) are replaced by
//! U+FFFD so that Python's parser never fails on an answer. Calls carry
//! any type as it is, so tests can exercise the server's leniency on input.

use super::Value;
use base64::Engine;
use std::collections::BTreeMap;
use std::fmt::Write;

/// XML declaration put before every answer.
const DECLARATION: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";

/// Why a response could not be encoded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EncodeError {
    /// The value holds a type this server never emits.
    #[error("response value at {path} is of type {kind}, which is never sent to clients")]
    ForbiddenType {
        /// Where the value sits (`value.code.am_code`, `value[2]`…).
        path: String,
        /// The XML-RPC type.
        kind: &'static str,
    },
}

/// Encodes a successful `methodResponse` carrying `value`.
pub fn encode_response(value: &Value) -> Result<String, EncodeError> {
    let mut out = String::with_capacity(1024);
    out.push_str(DECLARATION);
    out.push_str("<methodResponse><params><param>");
    write_value(&mut out, value, Mode::Answer).map_err(Forbidden::into_error)?;
    out.push_str("</param></params></methodResponse>");
    Ok(out)
}

/// Encodes a `methodCall` (as the client sends requests). Any type may be
/// sent, so tests can exercise the server's leniency on input.
pub fn encode_call(method: &str, params: &[Value]) -> Result<String, EncodeError> {
    let mut out = String::with_capacity(1024);
    out.push_str(DECLARATION);
    out.push_str("<methodCall><methodName>");
    write_text(&mut out, method, Mode::Call);
    out.push_str("</methodName>");
    if !params.is_empty() {
        out.push_str("<params>");
        for param in params {
            out.push_str("<param>");
            write_value(&mut out, param, Mode::Call).map_err(Forbidden::into_error)?;
            out.push_str("</param>");
        }
        out.push_str("</params>");
    }
    out.push_str("</methodCall>");
    Ok(out)
}

/// Encodes a fault response with `code` and `message`.
pub fn encode_fault(code: i32, message: &str) -> String {
    let mut out = String::with_capacity(256 + message.len());
    out.push_str(DECLARATION);
    write!(
        out,
        "<methodResponse><fault><value><struct><member><name>faultCode</name><value><i4>{code}</i4></value></member><member><name>faultString</name><value><string>"
    )
    .unwrap_or_default();
    write_text(&mut out, message, Mode::Answer);
    out.push_str("</string></value></member></struct></value></fault></methodResponse>");
    out
}

/// What is being written, which decides the types allowed and whether
/// text is made XML-safe.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A response: the common types only, text cleaned.
    Answer,
    /// A call: every type, text as it is.
    Call,
}

/// A type a response may not carry, and the way down to it (innermost
/// step first), turned into a path only when it happens.
struct Forbidden {
    kind: &'static str,
    steps: Vec<Step>,
}

/// One step into a value.
enum Step {
    Member(String),
    Index(usize),
}

impl Forbidden {
    fn into_error(self) -> EncodeError {
        let mut path = String::from("value");
        for step in self.steps.iter().rev() {
            match step {
                Step::Member(name) => {
                    path.push('.');
                    path.push_str(name);
                }
                Step::Index(index) => write!(path, "[{index}]").unwrap_or_default(),
            }
        }
        EncodeError::ForbiddenType {
            path,
            kind: self.kind,
        }
    }

    fn within(mut self, step: Step) -> Forbidden {
        self.steps.push(step);
        self
    }
}

/// Appends `<value>…</value>` for `value`.
fn write_value(out: &mut String, value: &Value, mode: Mode) -> Result<(), Forbidden> {
    let forbidden = |kind| {
        Err(Forbidden {
            kind,
            steps: Vec::new(),
        })
    };
    out.push_str("<value>");
    match value {
        Value::Integer(i) => write!(out, "<i4>{i}</i4>").unwrap_or_default(),
        Value::Boolean(b) => out.push_str(if *b {
            "<boolean>1</boolean>"
        } else {
            "<boolean>0</boolean>"
        }),
        Value::Double(d) => write!(out, "<double>{d}</double>").unwrap_or_default(),
        Value::String(s) => {
            out.push_str("<string>");
            write_text(out, s, mode);
            out.push_str("</string>");
        }
        Value::Struct(members) => write_struct(out, members, mode)?,
        Value::Array(items) => {
            out.push_str("<array><data>");
            for (index, item) in items.iter().enumerate() {
                write_value(out, item, mode).map_err(|f| f.within(Step::Index(index)))?;
            }
            out.push_str("</data></array>");
        }
        Value::Long(_) if mode == Mode::Answer => return forbidden("i8"),
        Value::Nil if mode == Mode::Answer => return forbidden("nil"),
        Value::DateTime(_) if mode == Mode::Answer => return forbidden("dateTime.iso8601"),
        Value::Base64(_) if mode == Mode::Answer => return forbidden("base64"),
        Value::Long(l) => write!(out, "<i8>{l}</i8>").unwrap_or_default(),
        Value::Nil => out.push_str("<nil></nil>"),
        Value::DateTime(t) => {
            write!(out, "<dateTime.iso8601>{t}</dateTime.iso8601>").unwrap_or_default()
        }
        Value::Base64(bytes) => {
            out.push_str("<base64>");
            base64::engine::general_purpose::STANDARD.encode_string(bytes, out);
            out.push_str("</base64>");
        }
        _ => return forbidden("unknown"),
    }
    out.push_str("</value>");
    Ok(())
}

/// Appends `<struct>…</struct>` for `members`, in the order of their
/// names. In a response, names are cleaned like any text; should that
/// change a name, the members are ordered (and, when two names become
/// one, the later kept) by their cleaned names.
fn write_struct(
    out: &mut String,
    members: &BTreeMap<String, Value>,
    mode: Mode,
) -> Result<(), Forbidden> {
    out.push_str("<struct>");
    if mode == Mode::Answer && members.keys().any(|name| needs_cleaning(name)) {
        let mut cleaned = BTreeMap::new();
        for (name, member) in members {
            let mut value = String::new();
            write_value(&mut value, member, mode)
                .map_err(|f| f.within(Step::Member(name.clone())))?;
            let mut clean = String::new();
            write_text(&mut clean, name, mode);
            cleaned.insert(clean, value);
        }
        for (name, value) in cleaned {
            write!(out, "<member><name>{name}</name>{value}</member>").unwrap_or_default();
        }
    } else {
        for (name, member) in members {
            out.push_str("<member><name>");
            write_text(out, name, mode);
            out.push_str("</name>");
            write_value(out, member, mode).map_err(|f| f.within(Step::Member(name.clone())))?;
            out.push_str("</member>");
        }
    }
    out.push_str("</struct>");
    Ok(())
}

/// Appends `text` escaped as element content (`&`, `<`, `>`, both quotes
/// and carriage returns as references); in a response, characters XML 1.0
/// forbids become U+FFFD first.
fn write_text(out: &mut String, text: &str, mode: Mode) {
    let bytes = text.as_bytes();
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        let (replacement, width) = match bytes[at] {
            b'&' => ("&amp;", 1),
            b'<' => ("&lt;", 1),
            b'>' => ("&gt;", 1),
            b'\'' => ("&apos;", 1),
            b'"' => ("&quot;", 1),
            b'\r' => ("&#13;", 1),
            b'\t' | b'\n' => {
                at += 1;
                continue;
            }
            0..=0x1F if mode == Mode::Answer => ("\u{FFFD}", 1),
            0xEF if mode == Mode::Answer && is_non_character(&bytes[at..]) => ("\u{FFFD}", 3),
            _ => {
                at += 1;
                continue;
            }
        };
        out.push_str(&text[copied..at]);
        out.push_str(replacement);
        at += width;
        copied = at;
    }
    out.push_str(&text[copied..]);
}

/// Whether `bytes` start with U+FFFE or U+FFFF (in UTF-8), the only
/// characters outside XML 1.0's `Char` a Rust string can hold besides
/// the control characters.
fn is_non_character(bytes: &[u8]) -> bool {
    matches!(bytes, [0xEF, 0xBF, 0xBE | 0xBF, ..])
}

/// Whether a response changes `text` beyond escaping it.
fn needs_cleaning(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(at, &b)| {
        (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r'))
            || (b == 0xEF && is_non_character(&bytes[at..]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `dxr` writes for a response carrying `value` (the encoding
    /// this module replaced), after the answer's own cleaning.
    fn dxr_response(value: &Value) -> String {
        let xml = dxr::MethodResponse {
            value: value.clone(),
        }
        .to_xml()
        .unwrap();
        format!("{DECLARATION}{xml}")
    }

    /// Characters of every kind: all of ASCII, or only those XML 1.0
    /// allows (which an answer keeps as they are), and a few others.
    fn every_character(xml_only: bool) -> String {
        (1u8..0x80)
            .map(char::from)
            .filter(|c| {
                !xml_only || !c.is_ascii_control() || matches!(c, '\t' | '\n' | '\r' | '\u{7F}')
            })
            .chain([
                '\u{85}',
                '\u{2028}',
                '\u{D7FF}',
                '\u{E000}',
                'é',
                '\u{1F600}',
            ])
            .collect()
    }

    fn sample(xml_only: bool) -> Value {
        let text = every_character(xml_only);
        Value::Struct(BTreeMap::from([
            ("code".to_owned(), Value::Integer(-5)),
            ("empty".to_owned(), Value::String(String::new())),
            ("a b&<>'\"".to_owned(), Value::Boolean(true)),
            ("flag".to_owned(), Value::Boolean(false)),
            ("none".to_owned(), Value::Struct(BTreeMap::new())),
            ("list".to_owned(), Value::Array(Vec::new())),
            (
                "doubles".to_owned(),
                Value::Array(
                    [
                        1.0,
                        0.5,
                        1e20,
                        1e-7,
                        -0.0,
                        123_456_789.125,
                        f64::NAN,
                        f64::INFINITY,
                    ]
                    .into_iter()
                    .map(Value::Double)
                    .collect(),
                ),
            ),
            (
                "nested".to_owned(),
                Value::Array(vec![
                    Value::String(text.clone()),
                    Value::Struct(BTreeMap::from([(text.clone(), Value::String(text))])),
                ]),
            ),
        ]))
    }

    #[test]
    fn a_response_is_written_as_dxr_writes_it() {
        let value = sample(true);
        assert_eq!(encode_response(&value).unwrap(), dxr_response(&value));
    }

    #[test]
    fn a_call_of_every_type_is_written_as_dxr_writes_it() {
        let params = vec![
            sample(false),
            Value::Long(1 << 40),
            Value::Nil,
            Value::Base64(vec![1, 2, 3, 255]),
            Value::DateTime("20250101T12:00:00".parse().unwrap()),
            Value::String("\u{1}\u{FFFE}\u{FFFF}".into()),
        ];
        let dxr = |name: &str, params: &[Value]| {
            let call = dxr::MethodCall {
                name: name.into(),
                params: params.to_vec(),
            };
            format!("{DECLARATION}{}", call.to_xml().unwrap())
        };
        assert_eq!(encode_call("M<&", &params).unwrap(), dxr("M<&", &params));
        assert_eq!(
            encode_call("GetVersion", &[]).unwrap(),
            dxr("GetVersion", &[])
        );
    }

    #[test]
    fn characters_xml_forbids_become_replacement_characters_in_answers() {
        let dirty = "a\u{0}b\u{1B}c\u{FFFE}d\u{FFFF}e\r\n\t";
        let members = BTreeMap::from([
            ("z".to_owned(), Value::Integer(1)),
            ("\u{1}a".to_owned(), Value::String(dirty.into())),
        ]);
        let encoded = encode_response(&Value::Struct(members)).unwrap();
        let clean = "a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}e\r\n\t";
        let expected = BTreeMap::from([
            ("z".to_owned(), Value::Integer(1)),
            ("\u{FFFD}a".to_owned(), Value::String(clean.into())),
        ]);
        assert_eq!(encoded, dxr_response(&Value::Struct(expected)));
        let fault = encode_fault(-1, dirty);
        assert!(fault.contains("<string>a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}e&#13;\n\t</string>"));
    }

    #[test]
    fn a_fault_is_written_as_dxr_writes_it() {
        let fault = dxr::Fault::new(-32601, "no <such> method & \"more\"".into());
        let xml = dxr::FaultResponse { fault }.to_xml().unwrap();
        assert_eq!(
            encode_fault(-32601, "no <such> method & \"more\""),
            format!("{DECLARATION}{xml}")
        );
    }

    #[test]
    fn forbidden_types_are_refused_with_their_path() {
        let value = Value::Struct(BTreeMap::from([(
            "a".to_owned(),
            Value::Array(vec![Value::Integer(1), Value::Nil]),
        )]));
        assert_eq!(
            encode_response(&value),
            Err(EncodeError::ForbiddenType {
                path: "value.a[1]".into(),
                kind: "nil"
            })
        );
        assert!(matches!(
            encode_response(&Value::Long(1)),
            Err(EncodeError::ForbiddenType { kind: "i8", .. })
        ));
    }
}
