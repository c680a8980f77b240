//! Unit tests of the development CA: what issued certificates contain.

use super::*;
use crate::cert::LegacyFeature;

#[test]
fn root_is_a_self_signed_geni_authority() {
    let root = Authority::root("geni-am.test", "sa").unwrap();
    let cert = root.cert();
    assert_eq!(
        cert.urn().unwrap().as_str(),
        "urn:publicid:IDN+geni-am.test+authority+sa"
    );
    assert!(cert.is_ca());
    assert!(cert.is_self_signed());
    assert!(cert.uuid().is_some());
    assert_eq!(cert.email(), Some("sa@geni-am.test"));
    assert_eq!(cert.algorithms().signature, "sha256WithRSAEncryption");
    assert_eq!(cert.algorithms().key_bits, 2048);
    assert!(cert.legacy().is_empty());
}

#[test]
fn issues_users_slices_tools_and_servers() {
    let root = Authority::root("geni-am.test", "ca").unwrap();
    let alice = root.user("alice").unwrap();
    assert_eq!(
        alice.urn().as_str(),
        "urn:publicid:IDN+geni-am.test+user+alice"
    );
    assert_eq!(alice.cert().email(), Some("alice@geni-am.test"));
    assert!(!alice.cert().is_ca());
    assert_eq!(alice.issuers().len(), 1);
    assert!(
        alice
            .cert()
            .x509()
            .verify(root.cert().x509().public_key().unwrap().as_ref())
            .unwrap()
    );
    assert_eq!(
        root.slice("s1").unwrap().urn().as_str(),
        "urn:publicid:IDN+geni-am.test+slice+s1"
    );
    assert_eq!(
        root.tool("portal-x").unwrap().urn().as_str(),
        "urn:publicid:IDN+geni-am.test+tool+portal-x"
    );
    let am = root.server("am", &["localhost", "127.0.0.1"]).unwrap();
    assert_eq!(
        am.urn().as_str(),
        "urn:publicid:IDN+geni-am.test+authority+am"
    );
    assert_eq!(am.cert().dns_names(), &["localhost".to_owned()]);
    assert!(am.cert().subject().contains("CN=localhost"));
    assert_eq!(
        am.cert().ip_addresses(),
        &["127.0.0.1".parse::<std::net::IpAddr>().unwrap()]
    );
    assert!(matches!(root.slice("bad_slice"), Err(DevCaError::Urn(_))));
}

#[test]
fn intermediates_live_in_a_sub_authority() {
    let root = Authority::root("geni-am.test", "ca").unwrap();
    let ma = root.intermediate("ma", "ma").unwrap();
    assert_eq!(
        ma.urn().as_str(),
        "urn:publicid:IDN+geni-am.test:ma+authority+ma"
    );
    assert!(ma.cert().is_ca());
    let bob = ma.user("bob").unwrap();
    assert_eq!(
        bob.urn().as_str(),
        "urn:publicid:IDN+geni-am.test:ma+user+bob"
    );
    assert_eq!(bob.chain().len(), 3);
}

#[test]
fn defects_are_what_they_say() {
    let root = Authority::root("geni-am.test", "sa").unwrap();
    let now = chrono::Utc::now();
    assert!(
        root.defective("old", Defect::Expired)
            .unwrap()
            .cert()
            .not_after()
            < now
    );
    assert!(
        root.defective("early", Defect::NotYetValid)
            .unwrap()
            .cert()
            .not_before()
            > now
    );
    let stranger = root.defective("eve", Defect::WrongNamespace).unwrap();
    assert_eq!(stranger.urn().authority(), "elsewhere.invalid");
    let not_ca = root.defective("rogue", Defect::NotACa).unwrap();
    assert!(!not_ca.cert().is_ca());
    assert_eq!(
        not_ca.urn().as_str(),
        "urn:publicid:IDN+geni-am.test:rogue+authority+sa"
    );
    let legacy = root.defective("old_style", Defect::Legacy).unwrap();
    assert_eq!(
        legacy.cert().legacy(),
        &[
            LegacyFeature::Sha1Signature,
            LegacyFeature::ShortRsaKey { bits: 1024 }
        ]
    );
}

#[test]
fn pem_files_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let root = Authority::root("geni-am.test", "sa").unwrap();
    let alice = root.user("alice").unwrap();
    let (cert_path, key_path) = alice.write_pem(dir.path(), "alice").unwrap();
    let read = Identity::read_pem(&cert_path, &key_path).unwrap();
    assert!(read.cert().same_cert(alice.cert()));
    assert_eq!(read.issuers().len(), 1);
    assert!(read.key().public_eq(alice.key()));
    let (_, other_key) = root.identity().write_pem(dir.path(), "root").unwrap();
    assert!(matches!(
        Identity::read_pem(&cert_path, &other_key),
        Err(DevCaError::KeyMismatch { .. })
    ));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key_path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[test]
fn a_subject_key_identifier_is_the_sha1_of_the_public_key() {
    // The dev CA writes a Subject Key Identifier (RFC 5280 method 1): the
    // key id read from it and the one computed from the key agree.
    let root = Authority::root("geni-am.test", "sa").unwrap();
    let computed = crate::cert::public_key_sha1(root.cert().x509())
        .map(hex::encode)
        .unwrap();
    assert_eq!(root.cert().key_id(), computed);
}
