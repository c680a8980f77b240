//! GENI times (the AM API's "Datetimes" rules) as the API takes and gives
//! them, through the project's one reader and writer of times,
//! `geni_credentials::sfa::time`: lenient parsing of what clients send and the
//! one format the AM emits, `YYYY-MM-DDTHH:MM:SSZ`.
//! The spellings accepted are listed there.

use chrono::{DateTime, Utc};
use geni_credentials::sfa::time::{format_expiry, parse_expiry};

/// A time that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a date and time; expected RFC 3339, e.g. 2024-05-01T12:00:00Z (a missing zone means UTC)"
)]
pub struct TimeError(pub String);

/// Parses a client-supplied time leniently, as credentials' times are read
/// (see the module doc).
pub fn parse(text: &str) -> Result<DateTime<Utc>, TimeError> {
    parse_expiry(text).ok_or_else(|| TimeError(text.to_owned()))
}

/// Formats `time` the one way the AM emits times: `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format(time: &DateTime<Utc>) -> String {
    format_expiry(*time)
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
