//! RFC 3151 transcription between public identifiers (`IDN a//b type name`)
//! and URNs (`urn:publicid:IDN+a:b+type+name`), with the rules applied in the
//! same order as the GENI reference implementation (gcf `publicid_xforms`).

use super::{URN_PREFIX, UrnError};

/// The transcription rules, applied top to bottom from public id to URN and
/// bottom to top (each pair reversed) from URN to public id.
const XFORMS: [(&str, &str); 11] = [
    ("%", "%25"),
    (";", "%3B"),
    ("+", "%2B"),
    (" ", "+"),
    ("#", "%23"),
    ("?", "%3F"),
    ("'", "%27"),
    ("::", ";"),
    (":", "%3A"),
    ("//", ":"),
    ("/", "%2F"),
];

/// Transcribes one public-id text into URN form: trims, collapses runs of
/// whitespace to one space, then applies the escapes in order.
pub fn to_urn_form(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    XFORMS
        .iter()
        .fold(collapsed, |acc, (from, to)| acc.replace(from, to))
}

/// Undoes [`to_urn_form`]: applies the reversed escapes in reverse order.
pub fn from_urn_form(text: &str) -> String {
    XFORMS
        .iter()
        .rev()
        .fold(text.to_owned(), |acc, (from, to)| acc.replace(to, from))
}

/// Turns a public identifier `IDN <authority> <type> <name>` into its URN.
///
/// The leading `IDN` keyword is required; sub-authorities are written
/// `top//sub1//sub2`.
pub fn publicid_to_urn(publicid: &str) -> Result<String, UrnError> {
    let trimmed = publicid.trim_start();
    let rest = trimmed
        .strip_prefix("IDN")
        .filter(|r| r.starts_with(char::is_whitespace))
        .ok_or_else(|| UrnError::NotPublicId(publicid.to_owned()))?;
    if rest.trim().is_empty() {
        return Err(UrnError::NotPublicId(publicid.to_owned()));
    }
    Ok(format!("{URN_PREFIX}{}", to_urn_form(rest)))
}

/// Turns a GENI URN back into its public identifier `IDN <authority> <type> <name>`.
pub fn urn_to_publicid(urn: &str) -> Result<String, UrnError> {
    let rest = urn
        .strip_prefix(URN_PREFIX)
        .ok_or_else(|| UrnError::BadPrefix(urn.to_owned()))?;
    Ok(format!("IDN {}", from_urn_form(rest)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn spec_examples_transcribe() {
        assert_eq!(
            publicid_to_urn("IDN plc//princeton authority sa").unwrap(),
            "urn:publicid:IDN+plc:princeton+authority+sa"
        );
        assert_eq!(
            publicid_to_urn("IDN gcf//gpo//gpolab node switch 1 port 2").unwrap(),
            "urn:publicid:IDN+gcf:gpo:gpolab+node+switch+1+port+2"
        );
    }

    #[test]
    fn escapes_follow_gcf_order() {
        assert_eq!(to_urn_form("a::b"), "a;b");
        assert_eq!(to_urn_form("a:b"), "a%3Ab");
        assert_eq!(to_urn_form("a/b"), "a%2Fb");
        assert_eq!(
            to_urn_form("50% off; a+b #1 ?'"),
            "50%25+off%3B+a%2Bb+%231+%3F%27"
        );
        assert_eq!(to_urn_form("  a \t  b  "), "a+b");
    }

    #[test]
    fn urn_back_to_publicid() {
        assert_eq!(
            urn_to_publicid("urn:publicid:IDN+ch.geni.net:proj+slice+s1").unwrap(),
            "IDN ch.geni.net//proj slice s1"
        );
    }

    #[test]
    fn rejects_text_without_idn_keyword() {
        assert!(matches!(
            publicid_to_urn("IDNX a b c"),
            Err(UrnError::NotPublicId(_))
        ));
        assert!(matches!(
            publicid_to_urn("IDN   "),
            Err(UrnError::NotPublicId(_))
        ));
        assert!(matches!(
            urn_to_publicid("urn:x"),
            Err(UrnError::BadPrefix(_))
        ));
    }

    proptest! {
        #[test]
        fn publicid_round_trips(words in proptest::collection::vec("[a-zA-Z0-9%;+#?':/._-]{1,12}", 1..6)) {
            let text = words.join(" ");
            prop_assert_eq!(from_urn_form(&to_urn_form(&text)), text);
        }
    }
}
