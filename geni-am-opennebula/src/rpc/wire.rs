//! The bytes on the wire (the OpenNebula XML-RPC API reference, "XML-RPC
//! Methods"): a `methodCall` with the session as parameter #0, and the
//! reading of a `methodResponse` into an [`Answer`] or an [`RpcError`].
//! Calls are encoded, and replies decoded, by the aggregate's one XML-RPC
//! codec ([`geni_xmlrpc`], on `dxr`). Replies are hostile input: the
//! decoder checks them (size limit, no DTD or entities, bounded nesting),
//! then their shape is checked element by element. A success is
//! `[true, value, 0]`; a failure `[false, message, code, resp_id]` (≤5.8)
//! with a fifth `<i8>` replication index since 5.10; a `<fault>` is the
//! second error channel. Anything else is a transport error whose detail
//! says what was wrong.

use super::session::Session;
use super::{Answer, ErrorCode, Param, RpcError};
use geni_xmlrpc::{self as xmlrpc, Value};

/// Encodes the call of `method` with `session` as parameter #0 and then
/// `params`: `<string>`, `<i4>`, `<boolean>`. A string holding a character
/// XML 1.0 cannot carry is refused as a fault (a programming error, never
/// retried) rather than silently altered.
///
/// One byte-exactness rule is applied after the codec: a carriage return
/// in a string is written as the reference `&#13;`, because an XML parser
/// (oned's included) turns a literal CR or CR LF into LF, and CONTEXT
/// scripts and keys must reach the VM as sent.
pub fn encode_call(method: &str, session: &Session, params: &[Param]) -> Result<String, RpcError> {
    let mut values = Vec::with_capacity(params.len() + 1);
    values.push(Value::String(checked(method, 0, session.as_param())?));
    for (index, param) in params.iter().enumerate() {
        values.push(match param {
            Param::Str(text) => Value::String(checked(method, index + 1, text)?),
            Param::Int(value) => Value::Integer(*value),
            Param::Bool(value) => Value::Boolean(*value),
        });
    }
    checked(method, 0, method)?;
    let body = xmlrpc::encode_call(method, &values).map_err(|e| RpcError::Fault {
        method: method.to_owned(),
        code: i64::from(xmlrpc::fault_code::INVALID_PARAMS),
        message: e.to_string(),
    })?;
    Ok(if body.contains('\r') {
        body.replace('\r', "&#13;")
    } else {
        body
    })
}

/// `text` (parameter #`index` of a call of `method`) when XML 1.0 can
/// carry every character of it, else the fault that refuses the call.
fn checked(method: &str, index: usize, text: &str) -> Result<String, RpcError> {
    let refused = text.chars().find(|c| {
        !matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
    });
    match refused {
        None => Ok(text.to_owned()),
        Some(c) => Err(RpcError::Fault {
            method: method.to_owned(),
            code: i64::from(xmlrpc::fault_code::INVALID_PARAMS),
            message: format!(
                "parameter #{index} holds U+{:04X}, which XML 1.0 cannot carry",
                u32::from(c)
            ),
        }),
    }
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
