//! Lenient accessors for the loosely typed values clients send (the GENI
//! AM API, "Data types"): booleans arrive as `boolean`, `int` 0/1 or the strings
//! `"true"`/`"false"`/`"1"`/`"0"`; numbers as `int`, `i8` or digit strings;
//! times as strings (read with the service's time parser) or, from Python
//! clients passing datetime objects, as `dateTime.iso8601` without a zone,
//! which means UTC.

use super::Value;
use chrono::{DateTime, NaiveDate, Utc};
use std::collections::BTreeMap;

/// The boolean a value stands for, if any: `boolean`, `int`/`i8` 0 or 1,
/// or a string `true`/`false`/`1`/`0` (any case, surrounding blanks ignored).
pub fn as_bool(value: &Value) -> Option<bool> {
    match value {
        Value::Boolean(b) => Some(*b),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        },
        other => match as_int(other)? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        },
    }
}

/// The integer a value stands for, if any: `int`, `i8`, or a string of
/// decimal digits (with an optional sign).
pub fn as_int(value: &Value) -> Option<i64> {
    match value {
        Value::Integer(i) => Some(i64::from(*i)),
        Value::Long(i) => Some(*i),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The text of a string value (an untyped `<value>` is a string too).
///
/// A `<base64>` value whose bytes are UTF-8 text is read as that text:
/// Python 3 clients marshal `bytes` that way, and geni-lib reads credential
/// files as bytes, so its credentials arrive as base64 (the GENI AM API,
/// "Data types": be lenient on input).
pub fn as_str(value: &Value) -> Option<&str> {
    match value {
        Value::String(s) => Some(s),
        Value::Base64(bytes) => std::str::from_utf8(bytes).ok(),
        _ => None,
    }
}

/// The members of a struct value.
pub fn as_struct(value: &Value) -> Option<&BTreeMap<String, Value>> {
    match value {
        Value::Struct(members) => Some(members),
        _ => None,
    }
}

/// The member `name` of a struct value (`None` when `value` is not a
/// struct or has no such member).
pub fn member<'v>(value: &'v Value, name: &str) -> Option<&'v Value> {
    as_struct(value)?.get(name)
}

/// The instant of a `dateTime.iso8601` value, which carries no zone and is
/// read as UTC. Times sent as strings are parsed by the service's time module.
pub fn as_xmlrpc_datetime(value: &Value) -> Option<DateTime<Utc>> {
    let Value::DateTime(t) = value else {
        return None;
    };
    let naive = NaiveDate::from_ymd_opt(
        i32::from(t.year()),
        u32::from(t.month()),
        u32::from(t.day()),
    )?
    .and_hms_opt(
        u32::from(t.hour()),
        u32::from(t.minute()),
        u32::from(t.second()),
    )?;
    Some(naive.and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn booleans_are_read_from_every_shape_clients_send() {
        for (value, expected) in [
            (Value::Boolean(true), Some(true)),
            (Value::Integer(0), Some(false)),
            (Value::Long(1), Some(true)),
            (Value::String(" True ".into()), Some(true)),
            (Value::String("0".into()), Some(false)),
            (Value::String("yes".into()), None),
            (Value::Integer(2), None),
            (Value::Double(1.0), None),
        ] {
            assert_eq!(as_bool(&value), expected, "{value:?}");
        }
    }

    #[test]
    fn integers_are_read_from_ints_longs_and_digit_strings() {
        assert_eq!(as_int(&Value::Integer(-3)), Some(-3));
        assert_eq!(as_int(&Value::Long(1 << 40)), Some(1 << 40));
        assert_eq!(as_int(&Value::String(" 42".into())), Some(42));
        assert_eq!(as_int(&Value::String("4x".into())), None);
        assert_eq!(as_int(&Value::Boolean(true)), None);
    }

    #[test]
    fn strings_are_read_from_strings_and_utf8_base64() {
        assert_eq!(as_str(&Value::String("<a/>".into())), Some("<a/>"));
        assert_eq!(
            as_str(&Value::Base64(b"<credential/>".to_vec())),
            Some("<credential/>")
        );
        assert_eq!(as_str(&Value::Base64(vec![0xff, 0xfe])), None);
        assert_eq!(as_str(&Value::Integer(1)), None);
    }

    #[test]
    fn struct_members_are_found_by_name() {
        let options = Value::Struct(BTreeMap::from([(
            "geni_compressed".to_owned(),
            Value::Boolean(true),
        )]));
        assert_eq!(
            member(&options, "geni_compressed"),
            Some(&Value::Boolean(true))
        );
        assert_eq!(member(&options, "geni_available"), None);
        assert_eq!(member(&Value::String("x".into()), "geni_available"), None);
        assert_eq!(as_str(&Value::String("urn".into())), Some("urn"));
        assert_eq!(as_str(&Value::Integer(1)), None);
    }

    #[test]
    fn xmlrpc_datetimes_without_zone_are_utc() {
        let value = Value::DateTime(dxr::DateTime::from_str("20240501T12:00:00").unwrap());
        let expected = DateTime::parse_from_rfc3339("2024-05-01T12:00:00Z").unwrap();
        assert_eq!(
            as_xmlrpc_datetime(&value),
            Some(expected.with_timezone(&Utc))
        );
        assert_eq!(as_xmlrpc_datetime(&Value::String("2024".into())), None);
    }
}
