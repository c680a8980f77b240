//! Manifest builder speed: the manifest of a 1,000-node request (one
//! interface per node, a link per pair of nodes), against the baseline of
//! parsing that request with the project's tree in the same run.

use criterion::{Criterion, criterion_group, criterion_main};
use geni_rspec::Document;
use geni_rspec::manifest;
use std::fmt::Write;
use std::hint::black_box;

const CM: &str = "urn:publicid:IDN+cloud.example.org+authority+cm";

/// A request for `count` unbound VMs linked in pairs.
fn request(count: usize) -> String {
    let mut text = String::from(
        "<?xml version=\"1.0\"?>\n<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" \
         xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" \
         xsi:schemaLocation=\"http://www.geni.net/resources/rspec/3 http://www.geni.net/resources/rspec/3/request.xsd\" \
         type=\"request\">\n",
    );
    for i in 0..count {
        let _ = write!(
            text,
            "  <node client_id=\"vm{i}\" exclusive=\"false\">\n    <sliver_type name=\"default-vm\"/>\n    \
             <interface client_id=\"vm{i}:if0\"/>\n  </node>\n"
        );
    }
    for i in (0..count).step_by(2) {
        let j = i + 1;
        let _ = write!(
            text,
            "  <link client_id=\"link{i}\">\n    <interface_ref client_id=\"vm{i}:if0\"/>\n    \
             <interface_ref client_id=\"vm{j}:if0\"/>\n  </link>\n"
        );
    }
    text.push_str("</rspec>\n");
    text
}

fn bench(c: &mut Criterion) {
    let text = request(1_000);
    let doc = Document::parse(text.as_bytes()).unwrap();
    let annotations = manifest::placeholder_annotations(&doc, CM).unwrap();
    let mut group = c.benchmark_group("manifest_1000_nodes");
    group.bench_function("build", |b| {
        b.iter(|| manifest::build(black_box(&doc), CM, black_box(&annotations)).map(|m| m.root()))
    });
    group.bench_function("baseline_tree_parse_of_the_request", |b| {
        b.iter(|| Document::parse(black_box(text.as_bytes())).map(|d| d.root()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
