//! What the API answers with: the GENI envelope `{code: {geni_code},
//! value, output}` (GENI AM API v3, "Return Structure"; `output` always a string, never `nil`),
//! the sliver-info struct (v3, "Sliver status"), and RSpecs in a string, compressed on
//! request as base64 text of a zlib stream (`geni_compressed`).

use crate::geni::{AmError, GeniCode};
use crate::model::SliverInfo;
use base64::Engine;
use flate2::Compression;
use flate2::write::ZlibEncoder;
use geni_xmlrpc::Value;
use std::collections::BTreeMap;
use std::io::Write;

/// A struct value with `members`.
pub fn fields<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Struct(
        members
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .collect::<BTreeMap<_, _>>(),
    )
}

/// A string value.
pub fn text(s: impl Into<String>) -> Value {
    Value::String(s.into())
}

/// The envelope of a call's outcome: code 0 with the value and an empty
/// output, or the error's code with an empty value and its message.
pub fn envelope(outcome: Result<(Value, String), AmError>) -> Value {
    let (code, value, output) = match outcome {
        Ok((value, output)) => (GeniCode::Success, value, output),
        Err(error) => (error.code, text(""), error.message),
    };
    fields([
        (
            "code",
            fields([("geni_code", Value::Integer(code.as_i32()))]),
        ),
        ("value", value),
        ("output", text(output)),
    ])
}

/// `envelope` with the top-level `geni_api` member GetVersion carries.
pub fn with_api(envelope: Value, api: u32) -> Value {
    match envelope {
        Value::Struct(mut members) => {
            members.insert("geni_api".into(), Value::Integer(api as i32));
            Value::Struct(members)
        }
        other => other,
    }
}

/// The sliver-info struct of one sliver; `geni_error` is always present
/// (empty when nothing is wrong), as Status requires and other methods allow.
pub fn sliver_info(info: &SliverInfo) -> Value {
    fields([
        ("geni_sliver_urn", text(info.urn.clone())),
        ("geni_allocation_status", text(info.allocation.as_str())),
        ("geni_operational_status", text(info.operational.as_str())),
        ("geni_expires", text(crate::time::format(&info.expires))),
        ("geni_error", text(info.error.clone())),
        ("geni_client_id", text(info.client_id.clone())),
    ])
}

/// An array of sliver-info structs.
pub fn sliver_infos(infos: &[SliverInfo]) -> Value {
    Value::Array(infos.iter().map(sliver_info).collect())
}

/// An RSpec as sent: the text, or with `compressed` the base64 text of its
/// zlib (RFC 1950) stream.
pub fn rspec(document: String, compressed: bool) -> Result<Value, AmError> {
    if !compressed {
        return Ok(Value::String(document));
    }
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::default());
    encoder
        .write_all(document.as_bytes())
        .and_then(|()| encoder.finish())
        .map(|zlib| Value::String(base64::engine::general_purpose::STANDARD.encode(zlib)))
        .map_err(|e| AmError::error(format!("the RSpec could not be compressed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AllocationState, OperationalState};
    use flate2::read::ZlibDecoder;
    use geni_xmlrpc::member;
    use std::io::Read;

    #[test]
    fn success_has_code_zero_value_and_a_string_output() {
        let e = envelope(Ok((Value::Boolean(true), String::new())));
        assert_eq!(
            member(&e, "code").and_then(|c| member(c, "geni_code")),
            Some(&Value::Integer(0))
        );
        assert_eq!(member(&e, "value"), Some(&Value::Boolean(true)));
        assert_eq!(member(&e, "output"), Some(&text("")));
        assert_eq!(member(&e, "geni_api"), None);
        assert_eq!(
            member(&with_api(e, 3), "geni_api"),
            Some(&Value::Integer(3))
        );
    }

    #[test]
    fn failure_carries_the_code_and_the_message_as_output() {
        let e = envelope(Err(AmError::search_failed("no sliver x")));
        assert_eq!(
            member(&e, "code").and_then(|c| member(c, "geni_code")),
            Some(&Value::Integer(12))
        );
        assert_eq!(member(&e, "output"), Some(&text("no sliver x")));
        assert_eq!(member(&e, "value"), Some(&text("")));
    }

    #[test]
    fn sliver_info_has_every_member_as_a_string() {
        let info = SliverInfo {
            urn: "urn:publicid:IDN+am.example+sliver+abc".into(),
            client_id: "n1".into(),
            allocation: AllocationState::Provisioned,
            operational: OperationalState::Ready,
            expires: chrono::DateTime::from_timestamp(1_767_225_600, 0).unwrap(),
            error: String::new(),
        };
        let v = sliver_info(&info);
        assert_eq!(
            member(&v, "geni_expires"),
            Some(&text("2026-01-01T00:00:00Z"))
        );
        assert_eq!(
            member(&v, "geni_allocation_status"),
            Some(&text("geni_provisioned"))
        );
        assert_eq!(
            member(&v, "geni_operational_status"),
            Some(&text("geni_ready"))
        );
        assert_eq!(member(&v, "geni_error"), Some(&text("")));
    }

    #[test]
    fn compressed_rspecs_are_base64_of_zlib() {
        let doc = "<rspec type=\"advertisement\"/>".to_owned();
        assert_eq!(rspec(doc.clone(), false).unwrap(), text(doc.clone()));
        let Value::String(packed) = rspec(doc.clone(), true).unwrap() else {
            panic!("not a string");
        };
        let zlib = base64::engine::general_purpose::STANDARD
            .decode(packed)
            .unwrap();
        let mut out = String::new();
        ZlibDecoder::new(&zlib[..])
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, doc);
    }
}
