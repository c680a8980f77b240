//! Certificate chain verification: the full trust-store check (OpenSSL
//! chain building at a given time plus the GENI namespace rule) against a
//! baseline of the bare RSA signature checks of the same links, measured in
//! the same run. Results and the command are in `docs/PERFORMANCE.md`.

use chrono::{DateTime, TimeZone, Utc};
use criterion::{Criterion, criterion_group, criterion_main};
use geni_credentials::TrustStore;
use geni_credentials::devca::Authority;
use geni_credentials::{GeniCert, parse_chain};
use std::hint::black_box;
use std::path::Path;

fn corpus(relative: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .join(relative);
    std::fs::read(path).expect("corpus file")
}

/// The baseline: each certificate's signature checked with its issuer's key.
fn signatures_only(chain: &[GeniCert]) -> bool {
    chain.windows(2).all(|pair| {
        let key = pair[1].x509().public_key().expect("issuer key");
        pair[0].x509().verify(&key).expect("signature check")
    })
}

fn bench_chain(
    c: &mut Criterion,
    name: &str,
    store: &TrustStore,
    chain: &[GeniCert],
    at: DateTime<Utc>,
) {
    let mut full = chain.to_vec();
    full.push(
        store
            .verify_chain(chain, at)
            .expect("chain verifies")
            .root()
            .clone(),
    );
    full.dedup_by(|a, b| a.same_cert(b));
    assert!(signatures_only(&full));
    let mut group = c.benchmark_group(name);
    group.bench_function("baseline: RSA signature checks only", |b| {
        b.iter(|| signatures_only(black_box(&full)))
    });
    group.bench_function("TrustStore::verify_chain", |b| {
        b.iter(|| store.verify_chain(black_box(chain), at).expect("verifies"))
    });
    group.finish();
}

fn chains(c: &mut Criterion) {
    // A development CA chain: root, intermediate, user; RSA 2048, SHA-256.
    let root = Authority::root("geni-am.test", "ca").expect("root");
    let ma = root.intermediate("ma", "ma").expect("intermediate");
    let alice = ma.user("alice").expect("user");
    let mut one_root = TrustStore::new();
    one_root.add_root(root.cert().clone());
    bench_chain(
        c,
        "devca 3-level, 1 root",
        &one_root,
        &alice.chain(),
        Utc::now(),
    );

    // The same chain against the 110 real GENI clearinghouse roots plus ours.
    let mut many_roots = TrustStore::from_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/creds/certs/geni-ch-sr"),
    )
    .expect("corpus roots");
    many_roots.add_root(root.cert().clone());
    bench_chain(
        c,
        "devca 3-level, 111 roots",
        &many_roots,
        &alice.chain(),
        Utc::now(),
    );

    // The real gcf test user: MD5, 1024-bit RSA, root without basicConstraints.
    let gcf_alice = parse_chain(&corpus("creds/certs/gcf-test-ca/alice-cert.pem")).expect("alice");
    let mut gcf_root = TrustStore::new();
    gcf_root.add_root(
        GeniCert::from_pem(&corpus("creds/certs/gcf-test-ca/ch-cert.pem")).expect("root"),
    );
    let at = Utc
        .with_ymd_and_hms(2014, 1, 1, 0, 0, 0)
        .single()
        .expect("time");
    bench_chain(
        c,
        "gcf alice (MD5, 1024-bit)",
        &gcf_root,
        &gcf_alice[..1],
        at,
    );
}

criterion_group!(benches, chains);
criterion_main!(benches);
