//! Unit and property tests of URN parsing, formatting and comparison.

use super::*;
use proptest::prelude::*;

#[test]
fn parses_the_four_parts() {
    let urn = Urn::parse("urn:publicid:IDN+ch.geni.net:proj+slice+s1").unwrap();
    assert_eq!(urn.authority(), "ch.geni.net:proj");
    assert_eq!(urn.sub_authorities(), vec!["ch.geni.net", "proj"]);
    assert_eq!(urn.urn_type(), &UrnType::Slice);
    assert_eq!(urn.name(), "s1");
    assert_eq!(
        urn.to_string(),
        "urn:publicid:IDN+ch.geni.net:proj+slice+s1"
    );
}

#[test]
fn name_may_contain_plus() {
    let urn = Urn::parse("urn:publicid:IDN+gcf:gpo:gpolab+node+switch+1+port+2").unwrap();
    assert_eq!(urn.name(), "switch+1+port+2");
    assert_eq!(
        urn.to_publicid(),
        "IDN gcf//gpo//gpolab node switch 1 port 2"
    );
}

#[test]
fn rejects_what_gcf_rejects() {
    assert!(matches!(
        Urn::parse("urn:publicid:IDN+a+b"),
        Err(UrnError::MissingPart { part: "name", .. })
    ));
    assert!(matches!(
        Urn::parse("urn:publicid:IDN++slice+s"),
        Err(UrnError::MissingPart {
            part: "authority",
            ..
        })
    ));
    assert!(matches!(
        Urn::parse("urn:publicid:IDN+a++s"),
        Err(UrnError::MissingPart { part: "type", .. })
    ));
    assert!(matches!(
        Urn::parse("urn:publicid:IDN+a+slice+"),
        Err(UrnError::MissingPart { part: "name", .. })
    ));
    assert!(matches!(
        Urn::parse("urn:other:IDN+a+slice+s"),
        Err(UrnError::BadPrefix(_))
    ));
    for bad in ["a b", "a|b", "a?b", "a/b", "a#b", "a\tb"] {
        let text = format!("urn:publicid:IDN+auth+node+{bad}");
        assert!(
            matches!(Urn::parse(&text), Err(UrnError::ForbiddenChar { .. })),
            "{bad}"
        );
    }
    assert!(matches!(
        Urn::parse("urn:publicid:IDN+a::b+slice+s"),
        Err(UrnError::EmptySubAuthority { .. })
    ));
    let long = format!("urn:publicid:IDN+a+node+{}", "x".repeat(MAX_URN_LEN));
    assert!(matches!(Urn::parse(&long), Err(UrnError::TooLong { .. })));
    assert!(Urn::parse("urn:publicid:IDN+a+slice").is_err());
    assert!(Urn::parse("urn:publicid:IDN+a+slice+s").is_ok());
}

#[test]
fn typed_parse_checks_type_and_name() {
    assert!(Urn::parse_as("urn:publicid:IDN+a+slice+ok-1", &UrnType::Slice).is_ok());
    let err = Urn::parse_as("urn:publicid:IDN+a+user+bob", &UrnType::Slice).unwrap_err();
    assert!(matches!(err, UrnError::WrongType { .. }));
    assert!(err.to_string().contains("expected \"slice\""), "{err}");
    assert!(matches!(
        Urn::parse_as("urn:publicid:IDN+a+slice+bad_name", &UrnType::Slice),
        Err(UrnError::BadName { .. })
    ));
}

#[test]
fn compares_authorities_case_insensitively() {
    let a = Urn::parse("urn:publicid:IDN+CH.geni.net+slice+MySlice").unwrap();
    let b = Urn::parse("urn:publicid:IDN+ch.geni.net+slice+myslice").unwrap();
    assert!(a.same_as(&b));
    assert_ne!(a, b, "the text itself is preserved");
    let c = Urn::parse("urn:publicid:IDN+ch.geni.net+sliver+X").unwrap();
    let d = Urn::parse("urn:publicid:IDN+ch.geni.net+sliver+x").unwrap();
    assert!(!c.same_as(&d), "sliver names compare exactly");
}

#[test]
fn hrn_and_authority_rule() {
    let ca = Urn::parse("urn:publicid:IDN+ch.geni.net+authority+ca").unwrap();
    let slice = Urn::parse("urn:publicid:IDN+ch.geni.net:proj+slice+s1").unwrap();
    assert_eq!(ca.hrn(), "ch\\.geni\\.net");
    assert_eq!(slice.hrn(), "ch\\.geni\\.net.proj.s1");
    assert!(ca.is_authority_for(&slice));
    assert!(ca.is_authority_for(&ca));
    let a = Urn::parse("urn:publicid:IDN+a+authority+sa").unwrap();
    let ab = Urn::parse("urn:publicid:IDN+a.b+user+x").unwrap();
    assert!(!a.is_authority_for(&ab), "a is not an authority for a\\.b");
    assert!(!slice.is_authority_for(&ca));
}

#[test]
fn publicid_and_urn_agree() {
    let urn = publicid_to_urn("IDN plc//princeton authority sa").unwrap();
    let parsed = Urn::parse(&urn).unwrap();
    assert_eq!(parsed.authority(), "plc:princeton");
    assert_eq!(
        urn_to_publicid(&urn).unwrap(),
        "IDN plc//princeton authority sa"
    );
}

/// Valid URNs: authority of 1-3 DNS-like segments, a type, and a name
/// that may contain `+`, `:`, `%` escapes.
fn valid_urn() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec("[a-zA-Z0-9][a-zA-Z0-9.-]{0,10}", 1..4),
        "[a-z]{1,10}",
        "[a-zA-Z0-9][a-zA-Z0-9.+:%_-]{0,20}",
    )
        .prop_map(|(auth, kind, name)| format!("urn:publicid:IDN+{}+{kind}+{name}", auth.join(":")))
}

proptest! {
    #[test]
    fn format_parse_round_trips(text in valid_urn()) {
        let urn = Urn::parse(&text).unwrap();
        prop_assert_eq!(urn.to_string(), text.clone());
        let again = Urn::from_parts(urn.authority(), urn.type_text(), urn.name()).unwrap();
        prop_assert_eq!(again, urn);
    }

    #[test]
    fn urn_publicid_round_trips(
        auth in proptest::collection::vec("[a-zA-Z0-9][a-zA-Z0-9.:-]{0,10}", 1..4),
        name in proptest::collection::vec("[a-zA-Z0-9%;+#?':/._-]{1,8}", 1..4),
    ) {
        // Every URN produced by transcription turns back into the same URN.
        let publicid = format!("IDN {} node {}", auth.join("//"), name.join(" "));
        let urn = publicid_to_urn(&publicid).unwrap();
        let back = urn_to_publicid(&urn).unwrap();
        prop_assert_eq!(publicid_to_urn(&back).unwrap(), urn);
        prop_assert_eq!(back, publicid);
    }

    #[test]
    fn parse_never_panics(text in "urn:publicid:IDN\\+\\PC{0,40}") {
        let _ = Urn::parse(&text);
    }
}
