//! Unit tests of chain verification against the gcf test CA of the corpus.

use super::*;
use crate::cert::parse_chain;
use crate::refusal::RefusalKind;
use chrono::TimeZone;

fn gcf(file: &str) -> Vec<GeniCert> {
    let path = crate::corpus().join("creds/certs/gcf-test-ca").join(file);
    parse_chain(&std::fs::read(path).unwrap()).unwrap()
}

fn gcf_roots() -> TrustStore {
    let mut store = TrustStore::new();
    store.add_root(gcf("ch-cert.pem").remove(0));
    store
}

fn year(y: i32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, 1, 1, 0, 0, 0).unwrap()
}

#[test]
fn md5_chain_verifies_to_a_root_without_ca_flag() {
    let alice = gcf("alice-cert.pem");
    let verified = gcf_roots().verify(&alice[0], &[], year(2014)).unwrap();
    assert_eq!(verified.certificates().len(), 2);
    assert_eq!(
        verified.leaf_urn().unwrap().as_str(),
        "urn:publicid:IDN+geni:gpo:portal+user+alice"
    );
    assert_eq!(
        verified.issuer_urns()[0].as_str(),
        "urn:publicid:IDN+geni:gpo:portal+authority+sa"
    );
    assert!(verified.root().same_cert(&gcf("ch-cert.pem")[0]));
}

#[test]
fn expiry_names_the_certificate() {
    let alice = gcf("alice-cert.pem");
    let err = gcf_roots().verify_chain(&alice, year(2020)).unwrap_err();
    assert!(matches!(err, TrustError::Expired { .. }), "{err}");
    assert_eq!(err.kind(), RefusalKind::CredentialExpired);
    assert!(err.to_string().contains("expired at 2016-05-18"), "{err}");
}

#[test]
fn not_yet_valid_before_issue() {
    let alice = gcf("alice-cert.pem");
    let err = gcf_roots().verify_chain(&alice, year(2010)).unwrap_err();
    assert!(matches!(err, TrustError::NotYetValid { .. }), "{err}");
}

#[test]
fn empty_store_trusts_nothing() {
    let alice = gcf("alice-cert.pem");
    let err = TrustStore::new()
        .verify_chain(&alice, year(2014))
        .unwrap_err();
    assert!(matches!(err, TrustError::UntrustedRoot { .. }), "{err}");
    assert_eq!(err.kind(), RefusalKind::CredentialSignerUntrusted);
}

#[test]
fn a_cached_chain_is_refused_once_a_certificate_has_expired() {
    let alice = gcf("alice-cert.pem");
    let store = gcf_roots();
    store.verify_chain(&alice, year(2014)).unwrap();
    let err = store.verify_chain(&alice, year(2020)).unwrap_err();
    assert!(matches!(err, TrustError::Expired { .. }), "{err}");
    let err = store.verify_chain(&alice, year(2010)).unwrap_err();
    assert!(matches!(err, TrustError::NotYetValid { .. }), "{err}");
}

#[test]
fn the_same_chain_verified_twice_is_served_from_the_cache() {
    let alice = gcf("alice-cert.pem");
    let store = gcf_roots();
    let first = store.verify_shared(&alice[0], &[], year(2014)).unwrap();
    let second = store.verify_shared(&alice[0], &[], year(2015)).unwrap();
    assert!(Arc::ptr_eq(&first, &second));
    let x509 = store.verify_x509(alice[0].x509(), &[], year(2014)).unwrap();
    assert!(
        Arc::ptr_eq(&first, &x509),
        "both entry points share the cache"
    );
}

#[test]
fn a_presented_chain_shares_the_cache_and_names_its_leaf_for_resumed_sessions() {
    let alice = gcf("alice-cert.pem");
    let ch = gcf("ch-cert.pem").remove(0);
    let store = gcf_roots();
    let sent = [ch.x509().clone()];
    let first = store
        .verify_x509(alice[0].x509(), &sent, year(2014))
        .unwrap();
    let presented = PresentedChain::new(vec![alice[0].x509().clone(), ch.x509().clone()]).unwrap();
    let again = store.verify_presented(&presented, year(2014)).unwrap();
    assert!(Arc::ptr_eq(&first, &again), "the same keys as verify_x509");
    let fresh = gcf_roots();
    let verified = fresh.verify_presented(&presented, year(2014)).unwrap();
    let resumed = fresh
        .verify_resumed_x509(alice[0].x509(), year(2014))
        .unwrap();
    assert!(
        Arc::ptr_eq(&verified, &resumed),
        "a resumed session finds the chain its leaf verified with"
    );
}

#[test]
fn changing_the_roots_gives_a_new_generation_and_forgets_verified_chains() {
    let alice = gcf("alice-cert.pem");
    let mut store = gcf_roots();
    let copy = store.clone();
    assert_eq!(copy.generation(), store.generation());
    let before = store.generation();
    let first = store.verify_shared(&alice[0], &[], year(2014)).unwrap();
    store.add_root(gcf("ch-cert.pem").remove(0));
    assert_ne!(store.generation(), before);
    let again = store.verify_shared(&alice[0], &[], year(2014)).unwrap();
    assert!(!Arc::ptr_eq(&first, &again));
    assert_ne!(
        TrustStore::new().generation(),
        TrustStore::new().generation()
    );
}

#[test]
fn a_refusal_is_not_remembered() {
    let alice = gcf("alice-cert.pem");
    let mut store = TrustStore::new();
    assert!(store.verify_chain(&alice, year(2014)).is_err());
    store.add_root(gcf("ch-cert.pem").remove(0));
    store.verify_chain(&alice, year(2014)).unwrap();
}

#[test]
fn a_shared_store_whose_roots_are_replaced_verifies_against_the_new_ones_only() {
    let alice = gcf("alice-cert.pem");
    let shared = Arc::new(TrustStore::new());
    let before = shared.generation();
    assert!(shared.verify(&alice[0], &[], year(2014)).is_err());
    let other_holder = Arc::clone(&shared);
    other_holder.replace(gcf_roots());
    assert_ne!(shared.generation(), before);
    let verified = shared.verify(&alice[0], &[], year(2014)).unwrap();
    assert!(verified.root().same_cert(&gcf("ch-cert.pem")[0]));
    assert_eq!(shared.roots().len(), 1);
    // Back to no roots: what verified before is not served from a cache.
    shared.replace(TrustStore::new());
    assert!(shared.verify(&alice[0], &[], year(2014)).is_err());
}
