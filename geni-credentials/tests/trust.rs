//! Chain verification with real corpus chains (verified "as of" a time
//! inside their validity) and with development-CA chains that include an
//! intermediate, plus every refusal the trust store can give.

mod common;

use chrono::{DateTime, TimeZone, Utc};
use geni_credentials::RefusalKind;
use geni_credentials::devca::{Authority, Defect};
use geni_credentials::{GeniCert, parse_chain};
use geni_credentials::{TrustError, TrustLoadError, TrustStore};

fn corpus_certs(relative: &str) -> Vec<GeniCert> {
    let path = common::corpus().join("creds/certs").join(relative);
    parse_chain(&std::fs::read(path).unwrap()).unwrap()
}

fn store_of(files: &[&str]) -> TrustStore {
    let mut store = TrustStore::new();
    for file in files {
        store
            .add_file(&common::corpus().join("creds/certs").join(file))
            .unwrap();
    }
    store
}

fn at(y: i32, m: u32, d: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, 0, 0, 0).unwrap()
}

#[test]
fn loads_trust_root_directories() {
    let certs = common::corpus().join("creds/certs");
    assert_eq!(
        TrustStore::from_dir(&certs.join("sfa-trusted"))
            .unwrap()
            .roots()
            .len(),
        2
    );
    assert_eq!(
        TrustStore::from_dir(&certs.join("geni-ch-sr"))
            .unwrap()
            .roots()
            .len(),
        110
    );
    // Private keys beside the roots (*.key) are not read.
    assert_eq!(
        TrustStore::from_dir(&certs.join("edgenet-f4f"))
            .unwrap()
            .roots()
            .len(),
        3
    );
    let broken = TrustStore::from_dir(&certs.join("sfa-gids")).unwrap_err();
    assert!(matches!(broken, TrustLoadError::BadRoot { .. }), "{broken}");
    assert!(broken.to_string().contains("jfed8.gid"), "{broken}");
    let empty = tempfile::tempdir().unwrap();
    assert!(matches!(
        TrustStore::from_dir(empty.path()),
        Err(TrustLoadError::Empty { .. })
    ));
}

#[test]
fn gcf_test_users_chain_to_the_test_ca() {
    let store = store_of(&["gcf-test-ca/ch-cert.pem"]);
    for (file, urn) in [
        (
            "gcf-test-ca/alice-cert.pem",
            "urn:publicid:IDN+geni:gpo:portal+user+alice",
        ),
        (
            "gcf-test-ca/bob-cert.pem",
            "urn:publicid:IDN+geni:gpo:portal+user+bob",
        ),
        (
            "gcf-test-ca/am-cert.pem",
            "urn:publicid:IDN+geni:gpo:portal:am1+authority+am",
        ),
    ] {
        let chain = corpus_certs(file);
        // The leaf alone: the issuer comes from the trust store.
        let verified = store.verify(&chain[0], &[], at(2014, 1, 1)).unwrap();
        assert_eq!(verified.leaf_urn().unwrap().as_str(), urn);
        assert_eq!(
            verified.issuer_urns()[0].as_str(),
            "urn:publicid:IDN+geni:gpo:portal+authority+sa"
        );
    }
}

#[test]
fn real_gcf_chains_verify_with_their_roots() {
    let store = store_of(&["sfa-gids/felix-aist-crm.gid"]);
    let alice = corpus_certs("sfa-gids/my_roots__alice-cert.pem");
    let verified = store.verify_chain(&alice, at(2016, 1, 1)).unwrap();
    assert_eq!(
        verified.leaf_urn().unwrap().as_str(),
        "urn:publicid:IDN+geni:gpo:gcf+user+alice"
    );
    assert_eq!(
        verified.root().uuid().unwrap().to_string(),
        "214f716c-4627-453c-8b93-ecc8cd9a23ea"
    );

    let ukl = corpus_certs("geni-ch-sr/ukl-og.pem");
    let mut ukl_root = TrustStore::new();
    ukl_root.add_root(ukl[1].clone());
    let verified = ukl_root.verify(&ukl[0], &[], at(2016, 1, 1)).unwrap();
    assert_eq!(
        verified.leaf_urn().unwrap().as_str(),
        "urn:publicid:IDN+geni:glab077.e4.ukl.german-lab.de:gcf:gram+authority+am"
    );

    let cbas = corpus_certs("sfa-gids/felix-aist-cbas-ma.gid");
    let mut cbas_root = TrustStore::new();
    cbas_root.add_root(cbas[1].clone());
    assert!(cbas_root.verify_chain(&cbas, at(2016, 1, 1)).is_ok());
}

#[test]
fn whole_ch_directory_as_roots() {
    let store = TrustStore::from_dir(&common::corpus().join("creds/certs/geni-ch-sr")).unwrap();
    let ukl = corpus_certs("geni-ch-sr/ukl-og.pem");
    assert!(store.verify_chain(&ukl, at(2016, 1, 1)).is_ok());
    // A commercial TLS chain verifies as X.509 but carries no GENI URN.
    let wall2 = corpus_certs("geni-ch-sr/wall2-ca.pem");
    let err = store.verify_chain(&wall2, at(2019, 1, 1)).unwrap_err();
    assert!(matches!(err, TrustError::Certificate(_)), "{err}");
    assert!(err.to_string().contains("has no GENI URN"), "{err}");
}

#[test]
fn corpus_refusals_are_precise() {
    let store = store_of(&["gcf-test-ca/ch-cert.pem"]);
    let alice = corpus_certs("gcf-test-ca/alice-cert.pem");
    let expired = store.verify_chain(&alice, at(2017, 1, 1)).unwrap_err();
    assert!(matches!(expired, TrustError::Expired { .. }), "{expired}");
    // The test root expires one second before alice: the root's own
    // validity is checked, and the refusal names it.
    let root_gone = Utc.with_ymd_and_hms(2016, 5, 18, 18, 47, 37).unwrap();
    let err = store.verify_chain(&alice, root_gone).unwrap_err();
    assert!(matches!(err, TrustError::Expired { depth: 1, .. }), "{err}");
    assert!(
        err.to_string()
            .contains("urn:publicid:IDN+geni:gpo:portal+authority+sa"),
        "{err}"
    );
    let early = store.verify_chain(&alice, at(2011, 1, 1)).unwrap_err();
    assert!(matches!(early, TrustError::NotYetValid { .. }), "{early}");
    assert_eq!(early.kind(), RefusalKind::CredentialInvalid);
    // The other gcf CA (geni:gpo:gcf) does not vouch for the portal's users.
    let other = store_of(&["sfa-gids/felix-aist-crm.gid"]);
    let untrusted = other.verify(&alice[0], &[], at(2015, 1, 1)).unwrap_err();
    assert!(
        matches!(untrusted, TrustError::UntrustedRoot { .. }),
        "{untrusted}"
    );
    assert!(
        untrusted
            .to_string()
            .contains("geni//gpo//portal.authority.sa"),
        "{untrusted}"
    );
}

#[test]
fn devca_chain_with_intermediate() {
    let root = Authority::root("geni-am.test", "ca").unwrap();
    let ma = root.intermediate("ma", "ma").unwrap();
    let alice = ma.user("alice").unwrap();
    let mut store = TrustStore::new();
    store.add_root(root.cert().clone());
    let now = Utc::now();
    let verified = store.verify_chain(&alice.chain(), now).unwrap();
    assert_eq!(verified.certificates().len(), 3);
    assert_eq!(verified.leaf_urn().unwrap(), alice.urn());
    let issuers: Vec<&str> = verified.issuer_urns().iter().map(|u| u.as_str()).collect();
    assert_eq!(
        issuers,
        [
            "urn:publicid:IDN+geni-am.test:ma+authority+ma",
            "urn:publicid:IDN+geni-am.test+authority+ca"
        ]
    );
    // Without the intermediate the chain cannot be built.
    let err = store.verify(alice.cert(), &[], now).unwrap_err();
    assert!(matches!(err, TrustError::UntrustedRoot { .. }), "{err}");
    // Trusting the intermediate directly is enough (gcf accepts any trusted issuer).
    let mut ma_only = TrustStore::new();
    ma_only.add_root(ma.cert().clone());
    assert_eq!(
        ma_only
            .verify(alice.cert(), &[], now)
            .unwrap()
            .certificates()
            .len(),
        2
    );
}

#[test]
fn devca_defects_are_refused_with_their_reason() {
    let root = Authority::root("geni-am.test", "sa").unwrap();
    let mut store = TrustStore::new();
    store.add_root(root.cert().clone());
    let now = Utc::now();
    let verify = |defect| store.verify_chain(&root.defective("x", defect).unwrap().chain(), now);

    let expired = verify(Defect::Expired).unwrap_err();
    assert!(
        matches!(expired, TrustError::Expired { depth: 0, .. }),
        "{expired}"
    );
    assert_eq!(expired.kind(), RefusalKind::CredentialExpired);
    assert!(matches!(
        verify(Defect::NotYetValid),
        Err(TrustError::NotYetValid { depth: 0, .. })
    ));
    let namespace = verify(Defect::WrongNamespace).unwrap_err();
    assert!(
        matches!(namespace, TrustError::NamespaceViolation { .. }),
        "{namespace}"
    );
    assert_eq!(namespace.kind(), RefusalKind::CredentialSignerUntrusted);
    let legacy = verify(Defect::Legacy).unwrap();
    assert!(
        !legacy.leaf().legacy().is_empty(),
        "legacy certificates verify and are flagged"
    );

    let rogue = Authority::from(root.defective("rogue", Defect::NotACa).unwrap());
    let victim = rogue.user("victim").unwrap();
    let not_ca = store.verify_chain(&victim.chain(), now).unwrap_err();
    assert!(
        matches!(not_ca, TrustError::NotACa { depth: 1, .. }),
        "{not_ca}"
    );
}

#[test]
fn signer_must_be_an_authority_covering_the_subject() {
    let root = Authority::root("geni-am.test", "sa").unwrap();
    let mut store = TrustStore::new();
    store.add_root(root.cert().clone());
    let now = Utc::now();
    // A CA-flagged user certificate issuing another user: not an authority URN.
    let mut spec = root.spec_for("user", "mallory").unwrap();
    spec.is_ca = true;
    let mallory = Authority::from(root.issue(spec).unwrap());
    let victim = mallory.user("victim").unwrap();
    let err = store.verify_chain(&victim.chain(), now).unwrap_err();
    assert!(
        matches!(err, TrustError::SignerNotAuthority { .. }),
        "{err}"
    );
    // `geni-am` is not an authority for `geni-am.test` (whole components only).
    let short = Authority::root("geni-am", "sa").unwrap();
    let cousin = Authority::from(
        short
            .issue(
                short
                    .spec_for("authority", "sa")
                    .map(|mut s| {
                        s.urn = root.urn().clone();
                        s.is_ca = true;
                        s
                    })
                    .unwrap(),
            )
            .unwrap(),
    );
    let mut short_store = TrustStore::new();
    short_store.add_root(short.cert().clone());
    let err = short_store.verify(cousin.cert(), &[], now).unwrap_err();
    assert!(
        matches!(err, TrustError::NamespaceViolation { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("geni-am.test"), "{err}");
}

#[test]
fn tampered_signature_is_refused() {
    let root = Authority::root("geni-am.test", "sa").unwrap();
    let alice = root.user("alice").unwrap();
    let mut der = alice.cert().to_der();
    let last = der.len() - 1;
    der[last] ^= 0x01; // the last byte of the signature value
    let tampered = GeniCert::from_der(&der).unwrap();
    let mut store = TrustStore::new();
    store.add_root(root.cert().clone());
    let err = store.verify(&tampered, &[], Utc::now()).unwrap_err();
    assert!(
        matches!(err, TrustError::BadSignature { depth: 0, .. }),
        "{err}"
    );
    assert_eq!(err.kind(), RefusalKind::CredentialInvalid);
}
