//! The bodies of the credentials fuzz targets, one function per target.
//! The fuzz targets call them with libFuzzer's inputs;
//! `geni-am/tests/fuzz_replay.rs` includes this file and calls them with every
//! committed seed and crash input, so a regression fails `cargo test`.
//! Credentials are verified at fixed times against the fixed roots of
//! `fixtures/` (written by `geni-credentials/examples/fuzz_fixtures.rs`, plus the
//! corpus's `topdomain` authority), so a signed seed verifies completely.

use chrono::{DateTime, TimeZone, Utc};
use geni_credentials::TrustStore;
use geni_credentials::sfa::{self, Request};
use geni_credentials::speaksfor;
use geni_credentials::{GeniCert, parse_chain};
use geni_credentials::{Urn, publicid_to_urn};
use std::sync::OnceLock;

/// `urn`: URN parsing never panics; an accepted URN formats back to
/// exactly its input, re-parses to the same parts, and its public id, HRN
/// and name rule can be computed.
pub fn urn(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = publicid_to_urn(text);
    let Ok(urn) = Urn::parse(text) else {
        return;
    };
    assert_eq!(urn.to_string(), text, "formatting changed the URN");
    let again = Urn::from_parts(urn.authority(), urn.type_text(), urn.name())
        .expect("the parts of a valid URN rebuild it");
    assert_eq!(again, urn);
    let _ = (urn.to_publicid(), urn.hrn(), urn.check_name());
    assert!(
        urn.is_authority_for(&urn),
        "a URN is an authority for itself"
    );
}

/// `cert`: certificate parsing (PEM chains or DER) never panics, and every
/// accessor of an accepted certificate works.
pub fn cert(data: &[u8]) {
    let Ok(chain) = parse_chain(data) else {
        return;
    };
    for cert in &chain {
        let _ = (
            cert.require_urn(),
            cert.uuid(),
            cert.emails(),
            cert.dns_names(),
        );
        let _ = (
            cert.legacy(),
            cert.algorithms(),
            cert.is_self_signed(),
            cert.key_id(),
        );
        let der = cert.to_der();
        let again = GeniCert::from_der(&der).expect("own DER re-parses");
        assert!(again.same_cert(cert));
    }
}

/// `sfa`: verifying `data` as the credential of each fixed call never
/// panics; a credential that verifies is owned by the caller, targets the
/// call's object and has not expired at the call's time. Returns for how
/// many of the calls it verified.
pub fn sfa(data: &[u8]) -> usize {
    let mut verified_for = 0;
    for call in fixed().calls.iter() {
        let request = Request {
            caller: &call.caller,
            target: Some(&call.target),
            operation: call.operation,
            at: call.at,
        };
        if let Ok(verified) = sfa::verify(data, &fixed().trust, &request) {
            assert!(
                verified.owner.same_as(&call.caller),
                "owner is not the caller"
            );
            assert!(
                verified.target.same_as(&call.target),
                "target is not the object"
            );
            assert!(verified.expires > call.at, "an expired credential verified");
            assert!(!verified.chain.is_empty(), "a verified chain is empty");
            verified_for += 1;
        }
    }
    verified_for
}

/// `speaksfor`: verifying `data` as the development tool's speaks-for
/// credential for alice never panics; one that verifies makes alice the
/// caller and has not expired. Returns whether it verified.
pub fn speaksfor(data: &[u8]) -> bool {
    let f = fixed();
    let at = utc(2030, 1, 1);
    if let Ok(statement) = speaksfor::verify(data, &f.trust, &f.tool, &f.alice, at) {
        assert!(statement.user.same_as(&f.alice), "the user changed");
        assert!(statement.expires > at, "an expired statement verified");
        let caller = speaksfor::effective_caller(&f.tool, Some(&f.alice), &[data], &f.trust, at)
            .expect("a statement that verifies makes its user the caller");
        assert!(caller.same_as(&f.alice));
        return true;
    }
    false
}

/// One call a credential is verified for.
struct Call {
    caller: Urn,
    target: Urn,
    operation: Option<&'static str>,
    at: DateTime<Utc>,
}

/// The roots, the tool chain and the calls, built once.
struct Fixed {
    trust: TrustStore,
    tool: Vec<GeniCert>,
    alice: Urn,
    calls: Vec<Call>,
}

fn fixed() -> &'static Fixed {
    static FIXED: OnceLock<Fixed> = OnceLock::new();
    FIXED.get_or_init(|| {
        let mut trust = TrustStore::new();
        for pem in [
            &include_bytes!("../fixtures/dev-root.crt")[..],
            include_bytes!("../fixtures/topdomain.gid"),
        ] {
            for root in parse_chain(pem).expect("a fixture root parses") {
                trust.add_root(root);
            }
        }
        let urn = |text: &str| Urn::parse(text).expect("a fixture URN parses");
        let call = |caller: &str, target: &str, operation, at| Call {
            caller: urn(caller),
            target: urn(target),
            operation,
            at,
        };
        let topdomain = "urn:publicid:IDN+topdomain+authority+sa";
        let pi = "urn:publicid:IDN+topdomain:nitos+user+pi";
        let alice = "urn:publicid:IDN+fuzz.example.org+user+alice";
        Fixed {
            trust,
            tool: parse_chain(include_bytes!("../fixtures/dev-tool.crt"))
                .expect("the fixture tool chain parses"),
            alice: urn(alice),
            calls: vec![
                call(topdomain, topdomain, None, utc(2013, 7, 1)),
                call(pi, pi, Some("resolve"), utc(2013, 6, 1)),
                call(
                    alice,
                    "urn:publicid:IDN+fuzz.example.org+slice+s1",
                    Some("createsliver"),
                    utc(2030, 1, 1),
                ),
            ],
        }
    })
}

fn utc(year: i32, month: u32, day: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(year, month, day, 0, 0, 0)
        .single()
        .expect("a valid date")
}
