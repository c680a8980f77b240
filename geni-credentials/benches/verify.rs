//! Verification of a slice credential with 1 and with 3 levels of
//! delegation (`sfa::verify`: parse, wrapping defence, C14N and digests,
//! every XML signature, every certificate against the trust root, the
//! delegation and authority rules), next to the raw OpenSSL RSA
//! verifications it contains, measured in the same run: each XML signature
//! over its canonical `SignedInfo`, each distinct certificate with its
//! issuer's key, and the root signer's check of the target certificate.

#[path = "../tests/sfa_fixture/mod.rs"]
mod sfa_fixture;

use criterion::{Criterion, criterion_group, criterion_main};
use geni_credentials::devca::Identity;
use geni_credentials::sfa;
use geni_credentials::sign::Algorithms;
use geni_credentials::xmldsig::DSIG_NS;
use geni_credentials::xmldsig::{Document, Signature, key_verifies};
use openssl::pkey::{PKey, Public};
use openssl::x509::X509;
use sfa_fixture::{all_delegatable, days, pki};

/// The RSA verifications `sfa::verify` performs on one credential.
struct Floor {
    /// (signer certificate, algorithm, canonical SignedInfo, signature value)
    signatures: Vec<(
        X509,
        geni_credentials::xmldsig::SignatureMethod,
        Vec<u8>,
        Vec<u8>,
    )>,
    /// (certificate, issuer key)
    certificates: Vec<(X509, PKey<Public>)>,
}

impl Floor {
    fn of(xml: &str, owners: &[&Identity]) -> Self {
        let pki = pki();
        let doc = Document::parse(xml.as_bytes()).unwrap();
        let signatures = doc
            .elements()
            .into_iter()
            .filter(|n| n.is(Some(DSIG_NS), "Signature"))
            .map(|node| {
                let signature = Signature::parse(node).unwrap();
                let signed = signature.signed_bytes().unwrap();
                let signer = signature.certificates()[0].clone();
                assert!(key_verifies(
                    &signer,
                    signature.method(),
                    &signed,
                    signature.value()
                ));
                (
                    signer,
                    signature.method(),
                    signed,
                    signature.value().to_vec(),
                )
            })
            .collect();
        let root_key = pki.root.cert().x509().public_key().unwrap();
        let mut leaves: Vec<X509> = owners.iter().map(|o| o.cert().x509().clone()).collect();
        leaves.sort_by_key(|c| c.to_der().unwrap());
        leaves.dedup_by_key(|c| c.to_der().unwrap());
        // Each distinct owner/signer, the slice as target, and the slice
        // again for the root signer's authority check.
        leaves.push(pki.slice.cert().x509().clone());
        leaves.push(pki.slice.cert().x509().clone());
        let certificates = leaves.into_iter().map(|c| (c, root_key.clone())).collect();
        Self {
            signatures,
            certificates,
        }
    }

    fn count(&self) -> usize {
        self.signatures.len() + self.certificates.len()
    }

    fn run(&self) -> bool {
        let xml = self
            .signatures
            .iter()
            .all(|(cert, method, signed, value)| key_verifies(cert, *method, signed, value));
        let certs = self
            .certificates
            .iter()
            .all(|(cert, key)| cert.verify(key).unwrap());
        xml && certs
    }
}

fn verification(c: &mut Criterion) {
    let pki = pki();
    let people = [&pki.alice, &pki.bob, &pki.carol];
    for levels in [1usize, 3] {
        let mut xml = pki.slice_credential();
        let mut owners = vec![&pki.alice];
        for level in 0..levels {
            let (from, to) = (people[level % 3], people[(level + 1) % 3]);
            xml = pki.delegate(
                &xml,
                from,
                to,
                &all_delegatable(),
                days(20 - level as i64),
                Algorithms::default(),
            );
            owners.push(to);
        }
        let caller = *owners.last().unwrap();
        let request = pki.request(caller);
        sfa::verify(xml.as_bytes(), &pki.trust, &request).unwrap();
        let floor = Floor::of(&xml, &owners);
        assert!(floor.run());
        let mut group = c.benchmark_group(format!(
            "slice credential, {levels} delegation level(s), {} RSA verifications",
            floor.count()
        ));
        group.bench_function("raw OpenSSL RSA verifications (floor)", |b| {
            b.iter(|| floor.run())
        });
        group.bench_function("sfa::verify", |b| {
            b.iter(|| sfa::verify(xml.as_bytes(), &pki.trust, &request).unwrap())
        });
        group.finish();
    }
}

/// What the first sight of a certificate costs before the decode cache
/// holds it (OpenSSL 3.0's key decoder), for the cold-path estimate.
fn decoding(c: &mut Criterion) {
    let der = pki().alice.cert().to_der();
    c.bench_function("decode one certificate (X509::from_der)", |b| {
        b.iter(|| X509::from_der(&der).unwrap())
    });
}

criterion_group!(benches, verification, decoding);
criterion_main!(benches);
