//! The cache of verified credential documents never serves a verdict the
//! full verification would not give: expiry of credentials and
//! certificates is judged at every call's time, the call's owner, target
//! and privilege are checked on every call, other bytes or other roots are
//! verified afresh.

mod sfa_fixture;

use chrono::Utc;
use geni_credentials::TrustStore;
use geni_credentials::devca::Authority;
use geni_credentials::privilege::Privilege;
use geni_credentials::sfa::{self, Request, SfaError};
use geni_credentials::sign::Algorithms;
use sfa_fixture::{days, pki};

#[test]
fn a_remembered_credential_is_refused_once_it_has_expired() {
    let pki = pki();
    let xml = pki.slice_credential();
    let request = pki.request(&pki.alice);
    sfa::verify(xml.as_bytes(), &pki.trust, &request).unwrap();
    let later = Request {
        at: days(31),
        ..request
    };
    let err = sfa::verify(xml.as_bytes(), &pki.trust, &later).unwrap_err();
    assert!(matches!(err, SfaError::Expired { .. }), "{err}");
}

#[test]
fn a_remembered_credential_is_refused_once_a_certificate_in_it_has_expired() {
    let pki = pki();
    let spec = pki
        .root
        .spec_for("user", "dave")
        .unwrap()
        .valid(Utc::now() - chrono::Duration::days(1), days(5));
    let dave = pki.root.issue(spec).unwrap();
    let xml = pki.credential(
        pki.root.identity(),
        &dave,
        &pki.slice,
        &[Privilege::new("*", false)],
        days(30),
        Algorithms::default(),
    );
    let request = pki.request(&dave);
    sfa::verify(xml.as_bytes(), &pki.trust, &request).unwrap();
    let later = Request {
        at: days(10),
        ..request
    };
    let err = sfa::verify(xml.as_bytes(), &pki.trust, &later).unwrap_err();
    assert!(
        matches!(err, SfaError::Untrusted { role: "owner", .. }),
        "{err}"
    );
    assert!(err.to_string().contains("expired"), "{err}");
}

#[test]
fn a_remembered_credential_still_checks_the_caller_target_and_privilege() {
    let pki = pki();
    let xml = pki.credential(
        pki.root.identity(),
        &pki.alice,
        &pki.slice,
        &[Privilege::new("info", false)],
        days(30),
        Algorithms::default(),
    );
    let info = Request {
        operation: Some("listslices"),
        ..pki.request(&pki.alice)
    };
    sfa::verify(xml.as_bytes(), &pki.trust, &info).unwrap();
    let err = sfa::verify(xml.as_bytes(), &pki.trust, &pki.request(&pki.alice)).unwrap_err();
    assert!(matches!(err, SfaError::PrivilegeMissing(_)), "{err}");
    let bob = Request {
        caller: pki.bob.urn(),
        ..info.clone()
    };
    let err = sfa::verify(xml.as_bytes(), &pki.trust, &bob).unwrap_err();
    assert!(matches!(err, SfaError::OwnerNotCaller { .. }), "{err}");
    let other = Request {
        target: Some(pki.alice.urn()),
        ..info
    };
    let err = sfa::verify(xml.as_bytes(), &pki.trust, &other).unwrap_err();
    assert!(matches!(err, SfaError::TargetMismatch { .. }), "{err}");
}

#[test]
fn one_changed_byte_of_a_remembered_credential_is_verified_afresh() {
    let pki = pki();
    let xml = pki.slice_credential();
    let request = pki.request(&pki.alice);
    sfa::verify(xml.as_bytes(), &pki.trust, &request).unwrap();
    let at = xml.find("<SignatureValue>").unwrap() + "<SignatureValue>".len();
    let mut tampered = xml.into_bytes();
    tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
    let err = sfa::verify(&tampered, &pki.trust, &request).unwrap_err();
    assert!(matches!(err, SfaError::Signature { .. }), "{err}");
}

#[test]
fn a_credential_remembered_under_other_roots_is_refused() {
    let pki = pki();
    let xml = pki.slice_credential();
    let request = pki.request(&pki.alice);
    sfa::verify(xml.as_bytes(), &pki.trust, &request).unwrap();
    let mut strangers = TrustStore::new();
    strangers.add_root(
        Authority::root("elsewhere.test", "sa")
            .unwrap()
            .cert()
            .clone(),
    );
    let err = sfa::verify(xml.as_bytes(), &strangers, &request).unwrap_err();
    assert!(matches!(err, SfaError::Untrusted { .. }), "{err}");
}
