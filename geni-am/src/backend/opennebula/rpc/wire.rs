//! The bytes on the wire (OPENNEBULA.md §1.3, §8): a `methodCall` with the
//! session as parameter #0, and the reading of a `methodResponse` into an
//! [`Answer`] or an [`RpcError`]. Replies are hostile input: they go through
//! the checked XML-RPC decoder of [`crate::xmlrpc`] (size limit, no DTD or
//! entities), then their shape is checked element by element. A success is
//! `[true, value, 0]`; a failure `[false, message, code, resp_id]` (≤5.8)
//! with a fifth `<i8>` replication index since 5.10; a `<fault>` is the
//! second error channel. Anything else is a transport error whose detail
//! says what was wrong.

use super::session::Session;
use super::{Answer, ErrorCode, Param, RpcError};
use crate::xmlrpc::{self, Value};

/// Encodes the call of `method` with `session` as parameter #0 and then
/// `params`: `<string>` (XML-escaped), `<int>`, `<boolean>`. A string
/// holding a character XML 1.0 cannot carry is refused as a fault (a
/// programming error, never retried) rather than silently altered.
pub fn encode_call(method: &str, session: &Session, params: &[Param]) -> Result<String, RpcError> {
    let mut body = String::with_capacity(256);
    body.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<methodCall><methodName>");
    push_escaped(&mut body, method, method, 0)?;
    body.push_str("</methodName><params>");
    push_string(&mut body, method, 0, session.as_param())?;
    for (index, param) in params.iter().enumerate() {
        match param {
            Param::Str(text) => push_string(&mut body, method, index + 1, text)?,
            Param::Int(value) => {
                body.push_str(&format!("<param><value><int>{value}</int></value></param>"))
            }
            Param::Bool(value) => body.push_str(&format!(
                "<param><value><boolean>{}</boolean></value></param>",
                u8::from(*value)
            )),
        }
    }
    body.push_str("</params></methodCall>\n");
    Ok(body)
}

/// Appends one `<string>` parameter.
fn push_string(body: &mut String, method: &str, index: usize, text: &str) -> Result<(), RpcError> {
    body.push_str("<param><value><string>");
    push_escaped(body, method, text, index)?;
    body.push_str("</string></value></param>");
    Ok(())
}

/// Appends `text` escaped for XML character data; carriage returns are
/// written as references so that the parser's line-end normalisation
/// keeps them.
fn push_escaped(body: &mut String, method: &str, text: &str, index: usize) -> Result<(), RpcError> {
    for c in text.chars() {
        match c {
            '<' => body.push_str("&lt;"),
            '>' => body.push_str("&gt;"),
            '&' => body.push_str("&amp;"),
            '\r' => body.push_str("&#13;"),
            '\t' | '\n' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'.. => {
                body.push(c)
            }
            _ => {
                return Err(RpcError::Fault {
                    method: method.to_owned(),
                    code: i64::from(xmlrpc::fault_code::INVALID_PARAMS),
                    message: format!(
                        "parameter #{index} holds U+{:04X}, which XML 1.0 cannot carry",
                        u32::from(c)
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Reads the reply `body` to a call of `method`: element `[1]` of a
/// success, or the refusal, fault or malformation as an [`RpcError`].
/// Bodies over `limit` bytes are refused unread.
pub fn decode_response(method: &str, body: &[u8], limit: usize) -> Result<Answer, RpcError> {
    let transport = |detail: String| RpcError::Transport {
        method: method.to_owned(),
        detail,
    };
    if body.len() > limit {
        return Err(transport(format!(
            "the reply is {} bytes, more than the limit of {limit} bytes",
            body.len()
        )));
    }
    let value = match xmlrpc::decode_response(body, limit) {
        Ok(Ok(value)) => value,
        Ok(Err(fault)) => {
            return Err(RpcError::Fault {
                method: method.to_owned(),
                code: i64::from(fault.code()),
                message: fault.string().to_owned(),
            });
        }
        Err(e) => return Err(transport(format!("the reply is not XML-RPC: {e}"))),
    };
    read_result(&value).map_err(transport).and_then(|result| {
        result.map_err(|refusal| RpcError::Refused {
            method: method.to_owned(),
            code: ErrorCode::from_code(refusal.code),
            message: refusal.message,
            object: (refusal.resp_id != -1).then_some(refusal.resp_id),
        })
    })
}

/// The fields of a `[false, …]` reply.
struct Refusal {
    message: String,
    code: i64,
    resp_id: i64,
}

/// The result array read: the answer or the refusal, or (outer error)
/// why the value is not a result array.
fn read_result(value: &Value) -> Result<Result<Answer, Refusal>, String> {
    let Value::Array(items) = value else {
        return Err(format!(
            "the reply holds {}, not the result array [status, value, code, …]",
            kind(value)
        ));
    };
    let Some(Value::Boolean(success)) = items.first() else {
        return Err(match items.first() {
            Some(first) => format!(
                "element [0] of the result array is {}, not the boolean status",
                kind(first)
            ),
            None => "the result array is empty".to_owned(),
        });
    };
    let expected = if *success { "3" } else { "4 or 5" };
    let count_fits = if *success {
        items.len() == 3
    } else {
        items.len() == 4 || items.len() == 5
    };
    if !count_fits {
        return Err(format!(
            "the result array has {} elements; a {} holds {expected}",
            items.len(),
            if *success { "success" } else { "failure" },
        ));
    }
    if *success {
        int_at(items, 2, "the error code")?;
        let answer = match &items[1] {
            Value::String(text) => Answer::Str(text.clone()),
            Value::Integer(number) => Answer::Int(i64::from(*number)),
            Value::Long(number) => Answer::Int(*number),
            Value::Boolean(flag) => Answer::Bool(*flag),
            other => {
                return Err(format!(
                    "element [1] of a success is {}; oned answers a string, an integer or a boolean",
                    kind(other)
                ));
            }
        };
        return Ok(Ok(answer));
    }
    let Value::String(message) = &items[1] else {
        return Err(format!(
            "element [1] of a failure is {}, not the error message string",
            kind(&items[1])
        ));
    };
    let code = int_at(items, 2, "the error code")?;
    let resp_id = int_at(items, 3, "the id of the object in error")?;
    if items.len() == 5 {
        int_at(items, 4, "the replication index")?;
    }
    Ok(Err(Refusal {
        message: message.clone(),
        code,
        resp_id,
    }))
}

/// Element `index` as an integer (`<int>`, `<i4>` or `<i8>`).
fn int_at(items: &[Value], index: usize, what: &str) -> Result<i64, String> {
    match &items[index] {
        Value::Integer(number) => Ok(i64::from(*number)),
        Value::Long(number) => Ok(*number),
        other => Err(format!(
            "element [{index}] ({what}) is {}, not an integer",
            kind(other)
        )),
    }
}

/// The XML-RPC type of a value, with an article, for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Integer(_) => "an <int>",
        Value::Long(_) => "an <i8>",
        Value::Boolean(_) => "a <boolean>",
        Value::String(_) => "a <string>",
        Value::Double(_) => "a <double>",
        Value::DateTime(_) => "a <dateTime.iso8601>",
        Value::Base64(_) => "a <base64>",
        Value::Struct(_) => "a <struct>",
        Value::Array(_) => "an <array>",
        Value::Nil => "a <nil/>",
        _ => "a value of an unknown type",
    }
}

#[cfg(test)]
mod tests;
