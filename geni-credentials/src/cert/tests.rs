//! Unit tests of certificate parsing against real GENI certificates.

use super::*;

fn read(path: &str) -> Vec<u8> {
    std::fs::read(crate::corpus().join(path)).unwrap()
}

#[test]
fn reads_the_gcf_test_user() {
    let chain = parse_chain(&read("creds/certs/gcf-test-ca/alice-cert.pem")).unwrap();
    assert_eq!(chain.len(), 2, "alice's file holds her cert and the CA");
    let alice = &chain[0];
    assert_eq!(
        alice.urn().unwrap().as_str(),
        "urn:publicid:IDN+geni:gpo:portal+user+alice"
    );
    assert!(!alice.is_ca());
    assert_eq!(alice.algorithms().signature, "md5WithRSAEncryption");
    assert_eq!(alice.algorithms().key, "rsaEncryption");
    assert_eq!(alice.algorithms().key_bits, 1024);
    assert_eq!(
        alice.legacy(),
        &[
            LegacyFeature::Md5Signature,
            LegacyFeature::ShortRsaKey { bits: 1024 }
        ]
    );
    assert_eq!(alice.not_after().to_rfc3339(), "2016-05-18T18:47:37+00:00");
    assert!(chain[1].is_self_signed());
    assert!(!alice.is_self_signed());
}

#[test]
fn key_id_is_the_sha1_of_the_public_key() {
    // alice has no Subject Key Identifier: the hash is computed
    // (value from `openssl asn1parse` of her public key and sha1sum).
    let alice = GeniCert::from_pem(&read("creds/certs/gcf-test-ca/alice-cert.pem")).unwrap();
    assert_eq!(alice.key_id(), "517e803e307c8800efaa4cc932207e4444515312");
}

#[test]
fn der_and_pem_agree() {
    let alice = GeniCert::from_pem(&read("creds/certs/gcf-test-ca/alice-cert.pem")).unwrap();
    let again = GeniCert::from_der(&alice.to_der()).unwrap();
    assert!(again.same_cert(&alice));
    let from_pem = GeniCert::from_pem(alice.to_pem().as_bytes()).unwrap();
    assert!(from_pem.same_cert(&alice));
}

#[test]
fn missing_urn_is_reported_with_subject() {
    let key_only = read("creds/certs/gcf-test-ca/alice-key.pem");
    assert!(matches!(
        parse_chain(&key_only),
        Err(CertError::NoCertificate)
    ));
    let err = GeniCert::from_der(b"\x30\x03\x02\x01\x01").unwrap_err();
    assert!(matches!(err, CertError::BadDer { index: 0, .. }), "{err}");
}

#[test]
fn oversized_input_is_refused() {
    let big = vec![b'A'; MAX_CERT_INPUT + 1];
    assert!(matches!(parse_chain(&big), Err(CertError::TooLarge { .. })));
}

mod hostile_input {
    use super::*;
    use proptest::prelude::*;

    fn alice_der() -> Vec<u8> {
        GeniCert::from_pem(&read("creds/certs/gcf-test-ca/alice-cert.pem"))
            .unwrap()
            .to_der()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn corrupted_der_never_panics(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8), cut in any::<usize>()) {
            let mut der = alice_der();
            for (at, value) in flips {
                let i = at % der.len();
                der[i] = value;
            }
            der.truncate(1 + cut % der.len());
            if let Ok(cert) = GeniCert::from_der(&der) {
                // Whatever parsed must be readable without panicking.
                let _ = (cert.urn(), cert.uuid(), cert.email(), cert.legacy(), cert.key_id());
            }
        }

        #[test]
        fn arbitrary_text_never_panics(text in "(-----BEGIN CERTIFICATE-----|-----END CERTIFICATE-----|-----parent-----|[A-Za-z0-9+/=\n ]{0,40}){0,8}") {
            let _ = parse_chain(text.as_bytes());
        }
    }
}
