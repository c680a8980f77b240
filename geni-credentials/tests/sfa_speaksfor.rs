//! Speaks-for: a tool presenting an ABAC credential signed by a user acts
//! as that user (and the user's slice credential then authorises the call);
//! every speaks-for rule refuses with its precise reason. The unsigned ABAC
//! template of the corpus has the shape the signer produces.

mod common;
mod sfa_fixture;

use chrono::{DateTime, Utc};
use geni_credentials::RefusalKind;
use geni_credentials::devca::Identity;
use geni_credentials::sfa;
use geni_credentials::sign::{self, Algorithms};
use geni_credentials::speaksfor::{self, SpeaksForError};
use geni_credentials::xmldsig::{C14nMethod, DigestMethod, Document, SignatureMethod};
use sfa_fixture::{days, pki};

/// A speaks-for credential signed by `user` for `tool`.
fn statement(user: &Identity, tool: &Identity, expires: DateTime<Utc>) -> String {
    sign::speaks_for(
        &user.signing_key(),
        tool.cert(),
        expires,
        Algorithms::default(),
    )
    .unwrap()
}

fn tool() -> &'static Identity {
    static TOOL: std::sync::OnceLock<Identity> = std::sync::OnceLock::new();
    TOOL.get_or_init(|| pki().root.tool("portal").unwrap())
}

/// Verifies `xml` for the portal tool speaking for alice, now.
fn check(xml: &str) -> Result<speaksfor::SpeaksFor, SpeaksForError> {
    let pki = pki();
    speaksfor::verify(
        xml.as_bytes(),
        &pki.trust,
        &tool().chain(),
        pki.alice.urn(),
        Utc::now(),
    )
}

#[test]
fn a_tool_speaking_for_alice_becomes_alice_and_her_slice_credential_works() {
    let pki = pki();
    let abac = statement(&pki.alice, tool(), days(1));
    let caller = speaksfor::effective_caller(
        &tool().chain(),
        Some(pki.alice.urn()),
        &[abac.as_bytes()],
        &pki.trust,
        Utc::now(),
    )
    .unwrap();
    assert!(caller.same_as(pki.alice.urn()));
    let request = sfa::Request {
        caller: &caller,
        ..pki.request(&pki.alice)
    };
    sfa::verify(pki.slice_credential().as_bytes(), &pki.trust, &request).unwrap();
    let v = check(&abac).unwrap();
    assert!(v.tool.same_as(tool().urn()));
}

#[test]
fn without_the_option_the_caller_is_the_tool_itself() {
    let pki = pki();
    let caller =
        speaksfor::effective_caller(&tool().chain(), None, &[], &pki.trust, Utc::now()).unwrap();
    assert!(caller.same_as(tool().urn()));
    let missing = speaksfor::effective_caller(
        &tool().chain(),
        Some(pki.alice.urn()),
        &[],
        &pki.trust,
        Utc::now(),
    );
    assert_eq!(missing.unwrap_err().kind(), RefusalKind::Forbidden);
}

#[test]
fn exclusive_c14n_sha256_statements_verify_too() {
    let pki = pki();
    let algorithms = Algorithms {
        c14n: C14nMethod::Exclusive,
        signature: SignatureMethod::RsaSha256,
        digest: DigestMethod::Sha256,
    };
    let xml =
        sign::speaks_for(&pki.alice.signing_key(), tool().cert(), days(1), algorithms).unwrap();
    check(&xml).unwrap();
}

#[test]
fn every_speaks_for_rule_refuses_precisely() {
    let pki = pki();
    let good = statement(&pki.alice, tool(), days(1));
    let cases: Vec<(&str, String, RefusalKind, &str)> = vec![
        (
            "expired",
            statement(&pki.alice, tool(), days(-1)),
            RefusalKind::CredentialExpired,
            "Expired",
        ),
        (
            "signed by another user",
            statement(&pki.bob, tool(), days(1)),
            RefusalKind::CredentialMismatch,
            "SignerNotUser",
        ),
        (
            "for another tool",
            statement(&pki.alice, &pki.carol, days(1)),
            RefusalKind::CredentialMismatch,
            "KeyMismatch",
        ),
        (
            "statement altered",
            good.replacen("<role>speaks_for_", "<role>speaks_for_x", 1),
            RefusalKind::CredentialInvalid,
            "Credential",
        ),
        (
            "an SFA credential instead",
            pki.slice_credential(),
            RefusalKind::CredentialInvalid,
            "NotAbac",
        ),
        (
            "delegated",
            pki.delegate(
                &pki.slice_credential(),
                &pki.alice,
                &pki.bob,
                &sfa_fixture::all_delegatable(),
                days(1),
                Algorithms::default(),
            ),
            RefusalKind::CredentialInvalid,
            "Delegated",
        ),
    ];
    for (name, xml, kind, reason) in cases {
        let err = check(&xml).expect_err(name);
        let debug = format!("{err:?}");
        assert!(debug.starts_with(reason), "{name}: {err}");
        assert_eq!(err.kind(), kind, "{name}: {err}");
    }
}

#[test]
fn signed_statements_have_the_shape_of_the_corpus_abac_template() {
    let template =
        std::fs::read(common::corpus().join("creds/templates/geni-ch__abac_credential.xml"))
            .unwrap();
    let template = Document::parse(&template).unwrap();
    let pki = pki();
    let signed = statement(&pki.alice, tool(), days(1));
    let signed = Document::parse(signed.as_bytes()).unwrap();
    let shape = |doc: &Document| -> Vec<String> {
        let credential = doc
            .root()
            .unwrap()
            .children_named(None, "credential")
            .next()
            .unwrap();
        let mut names = Vec::new();
        let mut stack = vec![credential];
        while let Some(node) = stack.pop() {
            names.push(node.name().to_owned());
            stack.extend(node.children());
        }
        names.sort();
        names.dedup();
        names
    };
    let (expected, got) = (shape(&template), shape(&signed));
    let missing: Vec<&String> = expected.iter().filter(|n| !got.contains(n)).collect();
    assert!(
        missing.is_empty(),
        "elements of the template not produced: {missing:?}"
    );
}
