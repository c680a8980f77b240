//! RSpec validation throughput (secure parse + identification + XSD
//! validation, plus the semantic checks for requests) against libxml2's
//! plain DOM parse of the same bytes, measured in the same run.
//!
//! Run: `cargo bench -p geni-rspec --bench validate -- --warm-up-time 1 --measurement-time 3`

mod docs;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use geni_rspec::{RspecKind, Validator};
use geni_xml::Document as Xml2Doc;
use std::hint::black_box;

fn validate(c: &mut Criterion) {
    let validator = Validator::new().unwrap();
    let inputs = [
        (
            "advertisement-10000-nodes",
            RspecKind::Advertisement,
            docs::advertisement(docs::AD_NODES),
        ),
        (
            "request-1000-nodes",
            RspecKind::Request,
            docs::request(docs::REQUEST_NODES),
        ),
    ];
    let mut group = c.benchmark_group("rspec-validate");
    group.sample_size(10);
    for (name, kind, text) in &inputs {
        let bytes = text.as_bytes();
        let checked = validator.validate_as(bytes, *kind);
        assert!(checked.is_ok(), "{name}: {checked:?}");
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("libxml2-dom-parse", name),
            bytes,
            |b, bytes| b.iter(|| Xml2Doc::parse(black_box(bytes)).unwrap()),
        );
        group.bench_with_input(BenchmarkId::new("validate", name), bytes, |b, bytes| {
            b.iter(|| validator.validate_as(black_box(bytes), *kind).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, validate);
criterion_main!(benches);
