//! Lenient reading of credential `<expires>` values: RFC 3339 with `Z` or an
//! offset, lowercase `t`/`z`, a space instead of `T`, fractional seconds, no
//! zone at all (UTC, as SFA issuers write it) and the XML-RPC
//! `dateTime.iso8601` form `20240501T12:00:00`.

use chrono::{DateTime, NaiveDateTime, Utc};

/// Parses an expiry time; `None` if no accepted form matches.
pub fn parse_expiry(text: &str) -> Option<DateTime<Utc>> {
    let mut normal = text.trim().to_ascii_uppercase();
    if normal.as_bytes().get(10) == Some(&b' ') {
        normal.replace_range(10..11, "T");
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(&normal) {
        return Some(t.with_timezone(&Utc));
    }
    let naive = normal.strip_suffix('Z').unwrap_or(&normal);
    ["%Y-%m-%dT%H:%M:%S%.f", "%Y%m%dT%H:%M:%S%.f"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(naive, f).ok())
        .map(|t| t.and_utc())
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
