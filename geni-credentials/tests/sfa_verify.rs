//! Credentials that must verify: fresh slice credentials with 0–3 levels of
//! delegation, partial privileges, every accepted algorithm set.

mod sfa_fixture;

use geni_credentials::privilege::Privilege;
use geni_credentials::sfa;
use geni_credentials::sign::Algorithms;
use geni_credentials::xmldsig::{C14nMethod, DigestMethod, SignatureMethod};
use sfa_fixture::{all_delegatable, days, pki};

#[test]
fn a_slice_credential_verifies_for_its_owner() {
    let pki = pki();
    let xml = pki.slice_credential();
    let v = sfa::verify(xml.as_bytes(), &pki.trust, &pki.request(&pki.alice)).unwrap();
    assert!(v.owner.same_as(pki.alice.urn()));
    assert!(v.target.same_as(pki.slice.urn()));
    assert_eq!(v.chain.len(), 1);
    assert_eq!(v.privileges, all_delegatable().into_iter().collect());
}

#[test]
fn every_level_of_a_three_level_delegation_verifies_for_its_owner() {
    let pki = pki();
    let steps = [
        (&pki.alice, &pki.bob, all_delegatable(), 20),
        (
            &pki.bob,
            &pki.carol,
            vec![Privilege::new("control", true)],
            10,
        ),
        (
            &pki.carol,
            &pki.alice,
            vec![Privilege::new("control", false)],
            5,
        ),
    ];
    let mut xml = pki.slice_credential();
    for (level, (from, to, privileges, expires)) in steps.into_iter().enumerate() {
        xml = pki.delegate(
            &xml,
            from,
            to,
            &privileges,
            days(expires),
            Algorithms::default(),
        );
        let v = sfa::verify(xml.as_bytes(), &pki.trust, &pki.request(to)).unwrap();
        assert_eq!(v.chain.len(), level + 2);
        assert_eq!(v.privileges, privileges.iter().cloned().collect());
        assert!(v.owner.same_as(to.urn()));
        let root_signer = &v.chain[level + 1].signer;
        assert!(
            root_signer.contains("sfa.test+authority+sa"),
            "{root_signer}"
        );
    }
}

#[test]
fn sha256_and_exclusive_c14n_credentials_verify() {
    let pki = pki();
    let algorithms = Algorithms {
        c14n: C14nMethod::Exclusive,
        signature: SignatureMethod::RsaSha256,
        digest: DigestMethod::Sha256,
    };
    let (root, alice, slice) = (pki.root.identity(), &pki.alice, &pki.slice);
    let xml = pki.credential(root, alice, slice, &all_delegatable(), days(1), algorithms);
    sfa::verify(xml.as_bytes(), &pki.trust, &pki.request(&pki.alice)).unwrap();
}
