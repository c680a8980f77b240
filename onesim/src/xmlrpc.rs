//! The XML-RPC layer: decoding a `<methodCall>` into typed values and encoding
//! replies byte for byte as oned's xmlrpc-c writes them (CRLF line ends, `<i4>`
//! codes, `<i8>` replication index, `<fault>` structs).

use crate::xml::{self, Content, Element};

/// One XML-RPC value of a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `<string>` (or an untyped value).
    Str(String),
    /// `<int>` / `<i4>`.
    Int(i32),
    /// `<i8>`.
    I8(i64),
    /// `<boolean>`.
    Bool(bool),
    /// `<double>`.
    Double(f64),
    /// `<array>`.
    Array(Vec<Value>),
    /// `<struct>` (members are not needed by any simulated method).
    Struct,
    /// `<nil/>`.
    Nil,
}

/// A decoded `<methodCall>`.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// `methodName`.
    pub method: String,
    /// The parameters in order.
    pub params: Vec<Value>,
}

/// Decodes a `<methodCall>` body; the error text is the fault string of a -503 fault.
pub fn parse_call(body: &str) -> Result<Call, String> {
    let root = xml::parse(body).map_err(|e| format!("Call XML not a proper XML-RPC call.  {e}"))?;
    if root.name != "methodCall" {
        return Err("Call XML not a proper XML-RPC call.  Root element is not <methodCall>".into());
    }
    let method = root
        .child("methodName")
        .map(|m| m.value().to_owned())
        .ok_or("Call XML not a proper XML-RPC call.  No <methodName>")?;
    let params = match root.child("params") {
        Some(params) => params
            .children()
            .iter()
            .map(|param| {
                param
                    .child("value")
                    .ok_or("<param> without <value>".to_owned())
                    .and_then(decode_value)
            })
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    Ok(Call { method, params })
}

fn decode_value(value: &Element) -> Result<Value, String> {
    let typed = match &value.content {
        Content::Children(c) if c.len() == 1 => &c[0],
        Content::Children(_) => return Err("<value> with several elements".into()),
        _ => return Ok(Value::Str(value.value().to_owned())),
    };
    let text = typed.value().trim();
    let bad = |what: &str| format!("invalid {what} value '{text}'");
    Ok(match typed.name.as_str() {
        "string" => Value::Str(typed.value().to_owned()),
        "int" | "i4" => Value::Int(text.parse().map_err(|_| bad("int"))?),
        "i8" => Value::I8(text.parse().map_err(|_| bad("i8"))?),
        "boolean" => match text {
            "0" => Value::Bool(false),
            "1" => Value::Bool(true),
            _ => return Err(bad("boolean")),
        },
        "double" => Value::Double(text.parse().map_err(|_| bad("double"))?),
        "array" => Value::Array(match typed.child("data") {
            Some(data) => data
                .children()
                .iter()
                .map(decode_value)
                .collect::<Result<_, _>>()?,
            None => Vec::new(),
        }),
        "struct" => Value::Struct,
        "nil" => Value::Nil,
        other => return Err(format!("unknown value type <{other}>")),
    })
}

/// Element 1 of a successful reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload {
    /// `<string>`.
    Str(String),
    /// `<i4>`.
    Int(i32),
}

/// A reply to a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// `[true, payload, 0]`.
    Success(Payload),
    /// `[false, message, code, resp_id(, i8 -1)]`.
    Failure {
        /// Full message including the `[method]` prefix.
        message: String,
        /// Error code (table 1.4).
        code: i32,
        /// Object id for NO_EXISTS, else -1.
        resp_id: i32,
    },
    /// An XML-RPC `<fault>`.
    Fault {
        /// faultCode.
        code: i32,
        /// faultString.
        text: String,
    },
}

const HEAD: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<methodResponse>\r\n";

/// Escapes a string value the way xmlrpc-c does.
fn escape_string(value: &str, out: &mut String) {
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#x0d;"),
            _ => out.push(c),
        }
    }
}

fn push_string(value: &str, out: &mut String) {
    out.push_str("<value><string>");
    escape_string(value, out);
    out.push_str("</string></value>\r\n");
}

/// Encodes a reply; `five_elements` selects the 5.10+ failure array with the `<i8>` element.
pub fn encode_reply(reply: &Reply, five_elements: bool) -> String {
    let mut out = String::from(HEAD);
    match reply {
        Reply::Fault { code, text } => {
            out.push_str("<fault>\r\n<value><struct>\r\n<member><name>faultCode</name>\r\n");
            out.push_str(&format!("<value><i4>{code}</i4></value></member>\r\n"));
            out.push_str("<member><name>faultString</name>\r\n<value><string>");
            escape_string(text, &mut out);
            out.push_str("</string></value></member>\r\n</struct></value>\r\n</fault>\r\n");
        }
        Reply::Success(payload) => {
            out.push_str("<params>\r\n<param><value><array><data>\r\n<value><boolean>1</boolean></value>\r\n");
            match payload {
                Payload::Str(s) => push_string(s, &mut out),
                Payload::Int(i) => out.push_str(&format!("<value><i4>{i}</i4></value>\r\n")),
            }
            out.push_str("<value><i4>0</i4></value>\r\n");
            out.push_str("</data></array></value></param>\r\n</params>\r\n");
        }
        Reply::Failure {
            message,
            code,
            resp_id,
        } => {
            out.push_str("<params>\r\n<param><value><array><data>\r\n<value><boolean>0</boolean></value>\r\n");
            push_string(message, &mut out);
            out.push_str(&format!(
                "<value><i4>{code}</i4></value>\r\n<value><i4>{resp_id}</i4></value>\r\n"
            ));
            if five_elements {
                out.push_str("<value><i8>-1</i8></value>\r\n");
            }
            out.push_str("</data></array></value></param>\r\n</params>\r\n");
        }
    }
    out.push_str("</methodResponse>\r\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_every_scalar_type() {
        let body = "<?xml version='1.0'?><methodCall><methodName>one.x</methodName><params>\
            <param><value><string>a&amp;b</string></value></param><param><value><i4>-3</i4></value></param>\
            <param><value><boolean>1</boolean></value></param><param><value>bare</value></param>\
            <param><value><i8>5000000000</i8></value></param><param><value><string> </string></value></param>\
            </params></methodCall>";
        let call = parse_call(body).expect("decodes");
        assert_eq!(call.method, "one.x");
        assert_eq!(
            call.params,
            vec![
                Value::Str("a&b".into()),
                Value::Int(-3),
                Value::Bool(true),
                Value::Str("bare".into()),
                Value::I8(5_000_000_000),
                Value::Str(" ".into())
            ]
        );
    }

    #[test]
    fn refuses_broken_calls() {
        assert!(parse_call("<methodCall><params/></methodCall>").is_err());
        assert!(parse_call("<methodCall><methodName>x</methodName><params><param><value><int>z</int></value></param></params></methodCall>").is_err());
        assert!(parse_call("<!DOCTYPE a><methodCall/>").is_err());
    }

    #[test]
    fn four_and_five_element_failures() {
        let failure = Reply::Failure {
            message: "[m] x".into(),
            code: 1024,
            resp_id: 7,
        };
        assert!(
            encode_reply(&failure, true)
                .contains("<value><i4>7</i4></value>\r\n<value><i8>-1</i8></value>")
        );
        assert!(!encode_reply(&failure, false).contains("<i8>"));
    }
}
