//! Aggregate operations on the store against the RSpec work they cannot
//! avoid, measured in the same run:
//!
//! * Allocate + Delete of an N-node request on SQLite (and PostgreSQL when
//!   `DATABASE_URL` is set), against validating and parsing the request
//!   (`Validator::validate_as` + `Document::parse`), the baseline;
//! * Describe of a provisioned N-sliver slice, against building its
//!   manifest from the parsed request with `geni_rspec::manifest::build`, the
//!   baseline.
//!
//! `cargo bench -p geni-am --bench core -- --warm-up-time 1 --measurement-time 3`

use chrono::{TimeDelta, Utc};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use geni_am::core::{Aggregate, AggregateConfig, Policy, ProvisionOptions};
use geni_am::model::{Principal, Selector};
use geni_am::store::Store;
use geni_am::store::components::{ComponentDetails, ComponentRow, DiskImageSpec, SliverTypeSpec};
use geni_rspec::Document;
use geni_rspec::manifest::{build, placeholder_annotations};
use geni_rspec::{RspecKind, Validator};

const CM: &str = "urn:publicid:IDN+bench.example+authority+cm";
const SLICE: &str = "urn:publicid:IDN+ch.bench.example+slice+bench";

/// A request of `n` unbound `default-vm` nodes, each with an interface.
fn request(n: usize) -> String {
    let nodes: String = (0..n)
        .map(|i| {
            format!(
                "  <node client_id=\"n{i}\" exclusive=\"false\">\n    <sliver_type name=\"default-vm\"/>\n    <interface client_id=\"n{i}:if0\"/>\n  </node>\n"
            )
        })
        .collect();
    format!(
        "<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:schemaLocation=\"http://www.geni.net/resources/rspec/3 http://www.geni.net/resources/rspec/3/request.xsd\" type=\"request\">\n{nodes}</rspec>\n"
    )
}

/// Eight hosts with room for 512 slivers each.
fn inventory() -> Vec<ComponentRow> {
    (0..8)
        .map(|i| ComponentRow {
            id: format!("urn:publicid:IDN+bench.example+node+h{i}"),
            name: format!("h{i}"),
            cpus: 512,
            memory_mb: 512 * 1024,
            max_vms: 512,
            exclusive: false,
            available: true,
            details: ComponentDetails {
                hardware_types: vec!["kvm-host".into()],
                sliver_types: vec![SliverTypeSpec {
                    max_cores: None,
                    max_ram_mb: None,
                    max_disk_gb: None,
                    name: "default-vm".into(),
                    cpus: 1,
                    cores: None,
                    memory_mb: 1024,
                    disk_images: vec![DiskImageSpec {
                        name: "urn:publicid:IDN+bench.example+image+ubuntu".into(),
                        os: None,
                        version: None,
                        description: None,
                        default: true,
                    }],
                }],
                location: None,
            },
        })
        .collect()
}

fn aggregate(url: &str) -> Aggregate {
    let store = Store::open(url, 4).expect("store");
    store
        .sync_components(&inventory(), Utc::now())
        .expect("inventory");
    let config = AggregateConfig {
        authority: "bench.example".into(),
        am_urn: "urn:publicid:IDN+bench.example+authority+am".into(),
        cm_urn: CM.into(),
        policy: Policy::default(),
        ssh: Default::default(),
    };
    Aggregate::new(store, config).expect("aggregate")
}

fn principal() -> Principal {
    Principal {
        caller_urn: "urn:publicid:IDN+ch.bench.example+user+alice".into(),
        speaking_for: None,
        slice_urn: Some(SLICE.into()),
        credential_expires: Utc::now() + TimeDelta::days(30),
    }
}

/// The stores to measure: a SQLite file, and PostgreSQL when configured.
fn stores(dir: &tempfile::TempDir) -> Vec<(&'static str, String)> {
    let mut out = vec![(
        "sqlite",
        dir.path()
            .join("bench.sqlite")
            .to_string_lossy()
            .into_owned(),
    )];
    if let Ok(url) = std::env::var("DATABASE_URL") {
        out.push(("postgres", url));
    }
    out
}

fn bench_allocate(c: &mut Criterion) {
    let validator = Validator::new().expect("schemas");
    let dir = tempfile::tempdir().expect("tempdir");
    let aggregates: Vec<(&str, Aggregate)> = stores(&dir)
        .into_iter()
        .map(|(name, url)| (name, aggregate(&url)))
        .collect();
    let slice = Selector::Slice(SLICE.into());
    let mut group = c.benchmark_group("allocate");
    for n in [1usize, 20] {
        let text = request(n);
        group.bench_with_input(
            BenchmarkId::new("validate+parse (baseline)", n),
            &text,
            |b, t| {
                b.iter(|| {
                    validator
                        .validate_as(t.as_bytes(), RspecKind::Request)
                        .expect("valid");
                    Document::parse(t.as_bytes()).expect("parses")
                })
            },
        );
        for (name, am) in &aggregates {
            group.bench_with_input(
                BenchmarkId::new(format!("allocate+delete {name}"), n),
                &text,
                |b, t| {
                    b.iter(|| {
                        am.allocate(&principal(), SLICE, t).expect("allocated");
                        am.delete(&principal(), &slice).expect("deleted")
                    })
                },
            );
        }
    }
    group.finish();
}

fn bench_describe(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let slice = Selector::Slice(SLICE.into());
    let mut group = c.benchmark_group("describe");
    let n = 20;
    let text = request(n);
    let doc = Document::parse(text.as_bytes()).expect("parses");
    let annotations = placeholder_annotations(&doc, CM).expect("annotations");
    group.bench_function(BenchmarkId::new("manifest::build (baseline)", n), |b| {
        b.iter(|| build(&doc, CM, &annotations).expect("manifest").to_bytes())
    });
    for (name, url) in stores(&dir) {
        let am = aggregate(&url);
        let _ = am.delete(&principal(), &slice);
        am.allocate(&principal(), SLICE, &text).expect("allocated");
        am.provision(&principal(), &slice, &ProvisionOptions::default())
            .expect("provisioned");
        group.bench_function(BenchmarkId::new(format!("describe {name}"), n), |b| {
            b.iter(|| am.describe(&slice).expect("described"))
        });
        am.delete(&principal(), &slice).expect("deleted");
    }
    group.finish();
}

criterion_group!(benches, bench_allocate, bench_describe);
criterion_main!(benches);
