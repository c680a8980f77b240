//! Every real GENI certificate in the corpus parses, and the identity read
//! out of well-known ones matches what `openssl x509 -text` shows.

mod common;

use geni_credentials::{CertError, GeniCert, LegacyFeature, parse_chain};
use std::collections::BTreeMap;

fn certs_in(relative: &str) -> Vec<GeniCert> {
    let bytes = std::fs::read(common::corpus().join("creds/certs").join(relative)).unwrap();
    parse_chain(&bytes).unwrap()
}

#[test]
fn every_corpus_certificate_parses() {
    let mut per_file = BTreeMap::new();
    let mut broken = Vec::new();
    for path in common::files_under(&common::corpus().join("creds/certs")) {
        let bytes = std::fs::read(&path).unwrap();
        if !String::from_utf8_lossy(&bytes).contains("BEGIN CERTIFICATE") {
            continue; // a private key only
        }
        match parse_chain(&bytes) {
            Ok(chain) => {
                per_file.insert(path, chain.len());
            }
            Err(e) => broken.push((path.file_name().unwrap().to_owned(), e)),
        }
    }
    assert_eq!(per_file.len(), 166, "files holding certificates");
    assert_eq!(per_file.values().sum::<usize>(), 182, "certificates in all");
    // jfed8.gid is truncated upstream (OpenSSL cannot read it either).
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert_eq!(broken[0].0, "jfed8.gid");
    assert!(
        matches!(broken[0].1, CertError::BadBase64 { index: 0, .. }),
        "{}",
        broken[0].1
    );
}

#[test]
fn corpus_urns_are_well_formed_where_present() {
    let mut with_urn = 0;
    for path in common::files_under(&common::corpus().join("creds/certs")) {
        let Ok(chain) = parse_chain(&std::fs::read(&path).unwrap()) else {
            continue;
        };
        for cert in chain {
            if cert.uris().iter().any(|u| u.starts_with("urn:publicid:")) {
                let urn = cert
                    .require_urn()
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert!(urn.as_str().starts_with("urn:publicid:IDN+"));
                with_urn += 1;
            }
        }
    }
    assert_eq!(with_urn, 132, "certificates carrying a GENI URN");
}

#[test]
fn gcf_test_ca_identities() {
    let alice = certs_in("gcf-test-ca/alice-cert.pem");
    assert_eq!(
        alice[0].urn().unwrap().as_str(),
        "urn:publicid:IDN+geni:gpo:portal+user+alice"
    );
    assert_eq!(
        alice[1].urn().unwrap().as_str(),
        "urn:publicid:IDN+geni:gpo:portal+authority+sa"
    );
    assert_eq!(alice[0].uuid(), None, "the gcf test CA predates UUIDs");
    let am = certs_in("gcf-test-ca/am-cert.pem");
    assert_eq!(
        am[0].urn().unwrap().as_str(),
        "urn:publicid:IDN+geni:gpo:portal:am1+authority+am"
    );
    assert!(am[0].is_ca());
    let ch = certs_in("gcf-test-ca/ch-cert.pem");
    assert!(!ch[0].is_ca(), "the gcf test root has no basicConstraints");
    assert!(ch[0].is_self_signed());
}

#[test]
fn sfa_gid_uuid_and_chain() {
    let alice = certs_in("sfa-gids/alice-cert.pem");
    assert_eq!(alice.len(), 2);
    assert_eq!(
        alice[0].urn().unwrap().as_str(),
        "urn:publicid:IDN+geni:gpo:gcf+user+alice"
    );
    assert_eq!(
        alice[0].uuid().unwrap().to_string(),
        "54a4536c-3c2e-41a2-a1ff-576451f22c48"
    );
    assert_eq!(
        alice[1].urn().unwrap().as_str(),
        "urn:publicid:IDN+geni:gpo:gcf+authority+sa"
    );
    assert_eq!(
        alice[1].uuid().unwrap().to_string(),
        "c79c847f-d161-405b-9acc-44e5e15761cf"
    );
    let ukl = certs_in("geni-ch-sr/ukl-og.pem");
    assert_eq!(
        ukl[0].urn().unwrap().as_str(),
        "urn:publicid:IDN+geni:glab077.e4.ukl.german-lab.de:gcf:gram+authority+am"
    );
    assert_eq!(
        ukl[0].uuid().unwrap().to_string(),
        "7b5ff2df-6118-42c5-ba9e-cf5d009e124a"
    );
}

#[test]
fn fed4fire_root_email_and_modern_algorithms() {
    let imec = certs_in("edgenet-f4f/trusted_roots__ilabt.imec.be.pem");
    let root = &imec[0];
    assert_eq!(
        root.urn().unwrap().as_str(),
        "urn:publicid:IDN+ilabt.imec.be+authority+ca"
    );
    assert_eq!(root.email(), Some("helpdesk@ilabt.imec.be"));
    assert!(root.is_ca());
    assert_eq!(root.algorithms().signature, "sha256WithRSAEncryption");
    assert_eq!(root.algorithms().key_bits, 4096);
    assert!(root.legacy().is_empty());
    assert_eq!(root.not_after().to_rfc3339(), "2119-12-31T23:59:59+00:00");
}

#[test]
fn legacy_certificates_are_flagged() {
    let cloudlab = certs_in("geni-ch-sr/utah-clab-cm.pem");
    assert_eq!(
        cloudlab[0].urn().unwrap().as_str(),
        "urn:publicid:IDN+utah.cloudlab.us+authority+cm"
    );
    assert_eq!(
        cloudlab[0].legacy(),
        &[
            LegacyFeature::Sha1Signature,
            LegacyFeature::ShortRsaKey { bits: 1024 }
        ]
    );
    let plc = certs_in("sfa-trusted/plc_ca.crt");
    assert!(
        plc[0].urn().is_none(),
        "PlanetLab's root carries no GENI URN"
    );
    assert!(
        plc[0]
            .require_urn()
            .unwrap_err()
            .to_string()
            .contains("PlanetLab Root CA")
    );
    assert!(plc[0].legacy().contains(&LegacyFeature::Md5Signature));
}

#[test]
fn commercial_chain_has_no_geni_identity() {
    let wall2 = certs_in("geni-ch-sr/wall2-ca.pem");
    assert_eq!(wall2.len(), 3);
    assert!(wall2.iter().all(|c| c.urn().is_none() && c.is_ca()));
}
