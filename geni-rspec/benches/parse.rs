//! Parse + serialize throughput of the lossless tree against libxml2's own
//! DOM parse of the same bytes, measured in the same run.
//!
//! Run: `cargo bench -p geni-rspec --bench parse -- --warm-up-time 1 --measurement-time 3`

mod docs;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use geni_rspec::Document;
use geni_xml::Document as Xml2Doc;
use std::hint::black_box;

fn parse(c: &mut Criterion) {
    let inputs = [
        (
            "advertisement-10000-nodes",
            docs::advertisement(docs::AD_NODES),
        ),
        ("request-1000-nodes", docs::request(docs::REQUEST_NODES)),
    ];
    let mut group = c.benchmark_group("rspec-parse");
    group.sample_size(10);
    for (name, text) in &inputs {
        let bytes = text.as_bytes();
        assert_eq!(Document::parse(bytes).unwrap().to_bytes(), bytes);
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("libxml2-dom-parse", name),
            bytes,
            |b, bytes| b.iter(|| Xml2Doc::parse(black_box(bytes)).unwrap()),
        );
        group.bench_with_input(BenchmarkId::new("tree-parse", name), bytes, |b, bytes| {
            b.iter(|| Document::parse(black_box(bytes)).unwrap())
        });
        group.bench_with_input(
            BenchmarkId::new("tree-parse-serialize", name),
            bytes,
            |b, bytes| b.iter(|| Document::parse(black_box(bytes)).unwrap().to_bytes()),
        );
    }
    group.finish();
}

criterion_group!(benches, parse);
criterion_main!(benches);
