//! GENI times (AMAPI.md §2.17): lenient parsing of what clients send and the
//! one format the AM emits, `YYYY-MM-DDTHH:MM:SSZ`.
//!
//! Accepted: RFC 3339 with `Z` or any offset (`+00:00`, `+0000`), lowercase
//! `t`/`z`, a space instead of `T`, fractional seconds, no zone at all
//! (read as UTC, as omni `--no-tz` and zone-less credential `<expires>`
//! send), and the XML-RPC `dateTime.iso8601` form `20240501T12:00:00`.

use chrono::{DateTime, NaiveDateTime, Utc};

/// A time that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a date and time; expected RFC 3339, e.g. 2024-05-01T12:00:00Z (a missing zone means UTC)"
)]
pub struct TimeError(pub String);

/// Zone-less layouts, tried after RFC 3339; the time is taken as UTC.
const NAIVE_FORMATS: [&str; 3] = [
    "%Y-%m-%dT%H:%M:%S%.f",
    "%Y%m%dT%H:%M:%S%.f",
    "%Y%m%dT%H%M%S%.f",
];

/// Layouts with an offset that RFC 3339 does not allow (`+0000`).
const OFFSET_FORMATS: [&str; 2] = ["%Y-%m-%dT%H:%M:%S%.f%z", "%Y%m%dT%H:%M:%S%.f%z"];

/// Parses a client-supplied time leniently (see the module doc).
pub fn parse(text: &str) -> Result<DateTime<Utc>, TimeError> {
    let normal = normalise(text);
    if let Ok(t) = DateTime::parse_from_rfc3339(&normal) {
        return Ok(t.with_timezone(&Utc));
    }
    for format in OFFSET_FORMATS {
        if let Ok(t) = DateTime::parse_from_str(&normal, format) {
            return Ok(t.with_timezone(&Utc));
        }
    }
    let zoneless = normal.strip_suffix('Z').unwrap_or(&normal);
    NAIVE_FORMATS
        .iter()
        .find_map(|format| NaiveDateTime::parse_from_str(zoneless, format).ok())
        .map(|t| t.and_utc())
        .ok_or_else(|| TimeError(text.to_owned()))
}

/// Formats `time` the one way the AM emits times: `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format(time: &DateTime<Utc>) -> String {
    time.format("%Y-%m-%dT%H:%M:%SZ").to_string()
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

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn noon() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2024, 5, 1, 12, 0, 0).unwrap()
    }

    #[test]
    fn every_documented_spelling_parses_to_the_same_instant() {
        for text in [
            "2024-05-01T12:00:00Z",
            "2024-05-01T12:00:00+00:00",
            "2024-05-01T14:00:00+02:00",
            "2024-05-01T07:00:00-05:00",
            "2024-05-01T12:00:00+0000",
            "2024-05-01t12:00:00z",
            "2024-05-01 12:00:00Z",
            "2024-05-01T12:00:00",
            "2024-05-01 12:00:00",
            "  2024-05-01T12:00:00Z\n",
            "20240501T12:00:00",
            "20240501T12:00:00Z",
            "20240501T120000",
        ] {
            assert_eq!(parse(text), Ok(noon()), "{text}");
        }
    }

    #[test]
    fn fractions_are_kept_when_parsing() {
        let t = parse("2024-05-01T12:00:00.250000+00:00").unwrap();
        assert_eq!(t.timestamp_subsec_millis(), 250);
        assert_eq!(
            parse("2024-05-01T12:00:00.5").unwrap().timestamp(),
            noon().timestamp()
        );
    }

    #[test]
    fn nonsense_is_refused_with_the_text_in_the_message() {
        for text in [
            "",
            "tomorrow",
            "2024-13-01T00:00:00Z",
            "2024-05-01",
            "12:00",
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.to_string().contains(&format!("`{text}`")), "{err}");
        }
    }

    #[test]
    fn emits_without_fractions_with_z() {
        let t = parse("2024-05-01T12:00:00.999+02:00").unwrap();
        assert_eq!(format(&t), "2024-05-01T10:00:00Z");
        assert_eq!(parse(&format(&noon())), Ok(noon()));
    }
}
