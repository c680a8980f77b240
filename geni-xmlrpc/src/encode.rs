//! Encoding responses and faults. Only the types every client reads are
//! emitted (`int`, `boolean`, `string`, `double`, `struct`, `array`); a
//! value holding `nil`, `i8`, `dateTime.iso8601` or `base64` is refused,
//! naming where it sits. Characters XML 1.0 does not allow (control
//! characters from stack traces, say) are replaced by U+FFFD so that
//! Python's parser never fails on an answer.

use super::Value;
use std::collections::BTreeMap;

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
    /// The serializer failed.
    #[error("response could not be serialised: {0}")]
    Serialize(String),
}

/// Encodes a successful `methodResponse` carrying `value`.
pub fn encode_response(value: &Value) -> Result<String, EncodeError> {
    let clean = sanitize(value, &mut String::from("value"))?;
    let xml = dxr::MethodResponse { value: clean }
        .to_xml()
        .map_err(|e| EncodeError::Serialize(e.to_string()))?;
    Ok(format!("{DECLARATION}{xml}"))
}

/// Encodes a `methodCall` (as the client sends requests). Any type may be
/// sent, so tests can exercise the server's leniency on input.
pub fn encode_call(method: &str, params: &[Value]) -> Result<String, EncodeError> {
    let call = dxr::MethodCall {
        name: method.into(),
        params: params.to_vec(),
    };
    let xml = call
        .to_xml()
        .map_err(|e| EncodeError::Serialize(e.to_string()))?;
    Ok(format!("{DECLARATION}{xml}"))
}

/// Encodes a fault response with `code` and `message`.
pub fn encode_fault(code: i32, message: &str) -> String {
    let members = BTreeMap::from([
        ("faultCode".to_owned(), Value::Integer(code)),
        ("faultString".to_owned(), Value::String(clean_text(message))),
    ]);
    let fault = xml_value(&Value::Struct(members));
    format!("{DECLARATION}<methodResponse><fault>{fault}</fault></methodResponse>")
}

/// Serialises one value that holds only strings and ints (cannot fail).
fn xml_value(value: &Value) -> String {
    value
        .to_xml()
        .unwrap_or_else(|_| "<value></value>".to_owned())
}

/// A copy of `value` with text made XML-safe, or the path of a forbidden type.
fn sanitize(value: &Value, path: &mut String) -> Result<Value, EncodeError> {
    let forbidden = |kind| EncodeError::ForbiddenType {
        path: path.clone(),
        kind,
    };
    Ok(match value {
        Value::Integer(i) => Value::Integer(*i),
        Value::Boolean(b) => Value::Boolean(*b),
        Value::Double(d) => Value::Double(*d),
        Value::String(s) => Value::String(clean_text(s)),
        Value::Struct(members) => {
            let mut out = BTreeMap::new();
            for (name, member) in members {
                let len = path.len();
                path.push('.');
                path.push_str(name);
                out.insert(clean_text(name), sanitize(member, path)?);
                path.truncate(len);
            }
            Value::Struct(out)
        }
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{index}]"));
                out.push(sanitize(item, path)?);
                path.truncate(len);
            }
            Value::Array(out)
        }
        Value::Long(_) => return Err(forbidden("i8")),
        Value::Nil => return Err(forbidden("nil")),
        Value::DateTime(_) => return Err(forbidden("dateTime.iso8601")),
        Value::Base64(_) => return Err(forbidden("base64")),
        _ => return Err(forbidden("unknown")),
    })
}

/// Replaces characters XML 1.0 forbids by U+FFFD; carriage returns are
/// kept (the serialiser escapes them).
fn clean_text(text: &str) -> String {
    text.chars()
        .map(|c| if is_xml_char(c) { c } else { '\u{FFFD}' })
        .collect()
}

/// XML 1.0 `Char` production.
fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}
