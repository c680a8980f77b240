//! Calling the AM API over TLS and reading its answers: argument builders
//! (credential wrappers, option structs, URN lists), the GENI envelope
//! `{code, value, output}` of an answer and the sliver-info structs in it.

use base64::Engine;
use geni_am::client::Client;
use geni_xmlrpc::Value;
use std::collections::BTreeMap;
use std::io::Read;

/// A string value.
pub fn s(text: &str) -> Value {
    Value::String(text.to_owned())
}

/// An array of strings.
pub fn strs(items: &[&str]) -> Value {
    Value::Array(items.iter().map(|item| s(item)).collect())
}

/// A struct from `(name, value)` members.
pub fn st(members: Vec<(&str, Value)>) -> Value {
    Value::Struct(
        members
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .collect(),
    )
}

/// A v3 credential list holding one SFA credential.
pub fn creds(xml: &str) -> Value {
    Value::Array(vec![sfa(xml)])
}

/// The v3 wrapper of an SFA credential.
pub fn sfa(xml: &str) -> Value {
    st(vec![
        ("geni_type", s("geni_sfa")),
        ("geni_version", s("3")),
        ("geni_value", s(xml)),
    ])
}

/// `geni_rspec_version` for GENI 3.
pub fn rspec_version() -> Value {
    st(vec![("type", s("GENI")), ("version", s("3"))])
}

/// `geni_users` (or v2 `users`) for alice with one key.
pub fn users(urn: &str, key: &str) -> Value {
    Value::Array(vec![st(vec![("urn", s(urn)), ("keys", strs(&[key]))])])
}

/// The GENI envelope of an answer.
#[derive(Debug, Clone)]
pub struct Envelope {
    /// `code.geni_code`.
    pub code: i32,
    /// `value` (an empty string when absent).
    pub value: Value,
    /// `output` (empty when absent).
    pub output: String,
    /// The whole answer.
    pub raw: Value,
}

impl Envelope {
    /// The value as a string (panics otherwise).
    pub fn text(&self) -> &str {
        geni_xmlrpc::as_str(&self.value)
            .unwrap_or_else(|| panic!("value is not a string: {self:?}"))
    }

    /// A member of the value struct.
    pub fn member(&self, name: &str) -> &Value {
        geni_xmlrpc::member(&self.value, name).unwrap_or_else(|| panic!("no {name} in {self:?}"))
    }

    /// `value.geni_rspec` (Allocate, Provision, Describe).
    pub fn rspec(&self) -> String {
        geni_xmlrpc::as_str(self.member("geni_rspec"))
            .expect("geni_rspec is a string")
            .to_owned()
    }

    /// The sliver-info structs: `value.geni_slivers` when the value is a
    /// struct, else the value itself (Provision, Renew, POA, Delete).
    pub fn slivers(&self) -> Vec<Sliver> {
        let list = match &self.value {
            Value::Struct(_) => self.member("geni_slivers"),
            other => other,
        };
        let Value::Array(items) = list else {
            panic!("no sliver list in {self:?}")
        };
        items.iter().map(Sliver::from_value).collect()
    }

    /// Asserts success and returns self.
    pub fn ok(self) -> Envelope {
        assert_eq!(self.code, 0, "call failed: {}", self.output);
        self
    }
}

/// One sliver-info struct (GENI AM API v3, "Sliver info").
#[derive(Debug, Clone, PartialEq)]
pub struct Sliver {
    /// `geni_sliver_urn`.
    pub urn: String,
    /// `geni_allocation_status`.
    pub allocation: String,
    /// `geni_operational_status` (empty when absent).
    pub operational: String,
    /// `geni_expires`.
    pub expires: String,
    /// `geni_error` (empty when absent).
    pub error: String,
}

impl Sliver {
    fn from_value(value: &Value) -> Sliver {
        let get = |name: &str| {
            geni_xmlrpc::member(value, name)
                .and_then(geni_xmlrpc::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        Sliver {
            urn: get("geni_sliver_urn"),
            allocation: get("geni_allocation_status"),
            operational: get("geni_operational_status"),
            expires: get("geni_expires"),
            error: get("geni_error"),
        }
    }

    /// `geni_expires` parsed.
    pub fn expires_at(&self) -> chrono::DateTime<chrono::Utc> {
        geni_am::time::parse(&self.expires)
            .unwrap_or_else(|e| panic!("geni_expires {:?}: {e}", self.expires))
    }
}

/// Calls `method` and returns its GENI envelope; a fault fails the test.
pub fn call(client: &mut Client, method: &str, params: Vec<Value>) -> Envelope {
    match client.call(method, &params) {
        Ok(Ok(raw)) => envelope(raw),
        Ok(Err(fault)) => panic!("{method}: XML-RPC fault {fault:?}"),
        Err(error) => panic!("{method}: transport error: {error}"),
    }
}

/// Reads the envelope out of an answer.
pub fn envelope(raw: Value) -> Envelope {
    let code = geni_xmlrpc::member(&raw, "code")
        .and_then(|code| geni_xmlrpc::member(code, "geni_code"))
        .and_then(geni_xmlrpc::as_int)
        .unwrap_or_else(|| panic!("no code.geni_code in {raw:?}")) as i32;
    let value = geni_xmlrpc::member(&raw, "value")
        .cloned()
        .unwrap_or_else(|| s(""));
    let output = geni_xmlrpc::member(&raw, "output")
        .and_then(geni_xmlrpc::as_str)
        .unwrap_or_default()
        .to_owned();
    Envelope {
        code,
        value,
        output,
        raw,
    }
}

/// The text of a `geni_compressed` answer: base64 of a zlib stream.
pub fn decompress(text: &str) -> String {
    let compact: String = text.split_whitespace().collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(compact)
        .expect("compressed value is base64");
    let mut out = String::new();
    flate2::read::ZlibDecoder::new(bytes.as_slice())
        .read_to_string(&mut out)
        .expect("compressed value is zlib");
    out
}

/// The options struct `{geni_rspec_version: GENI 3}` plus `extra`.
pub fn with_version(extra: Vec<(&str, Value)>) -> Value {
    let mut members: BTreeMap<String, Value> = BTreeMap::new();
    members.insert("geni_rspec_version".into(), rspec_version());
    for (name, value) in extra {
        members.insert(name.into(), value);
    }
    Value::Struct(members)
}
