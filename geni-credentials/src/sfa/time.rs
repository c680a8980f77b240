//! GENI times (the AM API's "Datetimes" rules), read leniently in the one
//! place the project reads them — credential `<expires>`, speaks-for
//! statements, and the times clients send in calls (the aggregate wraps
//! [`parse_expiry`]) — and written one way, `YYYY-MM-DDTHH:MM:SSZ`.
//!
//! Accepted: RFC 3339 with `Z` or any offset (`+00:00`, `+0000`), lowercase
//! `t`/`z`, a space instead of `T`, fractional seconds, no zone at all
//! (read as UTC, as SFA issuers write `<expires>` and omni `--no-tz` sends),
//! and the XML-RPC `dateTime.iso8601` forms `20240501T12:00:00` and
//! `20240501T120000`.

use chrono::{DateTime, NaiveDateTime, Utc};

/// Zone-less layouts, tried after RFC 3339; the time is taken as UTC.
const NAIVE_FORMATS: [&str; 3] = [
    "%Y-%m-%dT%H:%M:%S%.f",
    "%Y%m%dT%H:%M:%S%.f",
    "%Y%m%dT%H%M%S%.f",
];

/// Layouts with an offset that RFC 3339 does not allow (`+0000`).
const OFFSET_FORMATS: [&str; 2] = ["%Y-%m-%dT%H:%M:%S%.f%z", "%Y%m%dT%H:%M:%S%.f%z"];

/// Parses a GENI time leniently (see the module doc); `None` if no
/// accepted form matches.
pub fn parse_expiry(text: &str) -> Option<DateTime<Utc>> {
    let normal = normalise(text);
    if let Ok(t) = DateTime::parse_from_rfc3339(&normal) {
        return Some(t.with_timezone(&Utc));
    }
    if let Some(t) = OFFSET_FORMATS
        .iter()
        .find_map(|format| DateTime::parse_from_str(&normal, format).ok())
    {
        return Some(t.with_timezone(&Utc));
    }
    let zoneless = normal.strip_suffix('Z').unwrap_or(&normal);
    NAIVE_FORMATS
        .iter()
        .find_map(|format| NaiveDateTime::parse_from_str(zoneless, format).ok())
        .map(|t| t.and_utc())
}

/// Trims, uppercases a lowercase `t` separator and `z` zone, and turns a
/// space separator into `T`.
fn normalise(text: &str) -> String {
    let mut out: Vec<u8> = text.trim().as_bytes().to_vec();
    let separator = out.iter().position(|&b| matches!(b, b'T' | b't' | b' '));
    if let Some(i) = separator {
        out[i] = b'T';
    }
    if let Some(last) = out.last_mut()
        && *last == b'z'
    {
        *last = b'Z';
    }
    String::from_utf8(out).unwrap_or_default()
}

/// Formats a time the way credentials are written (`YYYY-MM-DDTHH:MM:SSZ`).
pub fn format_expiry(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_forms_issuers_write() {
        let expected = DateTime::parse_from_rfc3339("2013-07-12T09:44:00Z")
            .unwrap()
            .with_timezone(&Utc);
        for text in [
            "2013-07-12T09:44:00",
            "2013-07-12T09:44:00Z",
            "2013-07-12t09:44:00z",
            "2013-07-12 09:44:00",
            "2013-07-12T09:44:00.000Z",
            "2013-07-12T11:44:00+02:00",
            "20130712T09:44:00",
            " 2013-07-12T09:44:00 ",
        ] {
            assert_eq!(parse_expiry(text), Some(expected), "{text}");
        }
        assert_eq!(format_expiry(expected), "2013-07-12T09:44:00Z");
    }

    #[test]
    fn refuses_garbage() {
        for text in ["", "tomorrow", "2013-13-12T09:44:00", "2013-07-12"] {
            assert_eq!(parse_expiry(text), None, "{text}");
        }
    }
}
