//! Advertisement builder speed: writing the ad of 10,000 nodes, against the
//! baseline of parsing that same ad with the project's tree in the same run.

use chrono::{TimeZone, Utc};
use criterion::{Criterion, criterion_group, criterion_main};
use geni_rspec::advert::{self, DiskImage, Inventory, InventoryNode, Location, SliverOffer};
use std::collections::BTreeMap;
use std::hint::black_box;

/// An inventory of `count` KVM hosts, each offering one VM type with two images.
fn inventory(count: usize) -> Inventory {
    let image = |name: &str, default| DiskImage {
        name: format!("urn:publicid:IDN+cloud.example.org+image+{name}"),
        os: Some("Linux".into()),
        version: None,
        description: Some(format!("{name} cloud image")),
        default,
    };
    Inventory {
        component_manager_id: "urn:publicid:IDN+cloud.example.org+authority+cm".into(),
        generated: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
        expires: Utc.with_ymd_and_hms(2026, 1, 1, 1, 0, 0).unwrap(),
        nodes: (0..count)
            .map(|i| InventoryNode {
                component_id: format!("urn:publicid:IDN+cloud.example.org+node+host{i}"),
                component_name: format!("host{i}"),
                exclusive: false,
                available: i % 7 != 0,
                hardware_types: vec!["kvm-host".into()],
                sliver_types: vec![SliverOffer {
                    max_size: None,
                    name: "default-vm".into(),
                    disk_images: vec![image("ubuntu22", true), image("debian12", false)],
                }],
                location: Some(Location {
                    country: "BE".into(),
                    latitude: Some("51.05".into()),
                    longitude: Some("3.72".into()),
                }),
            })
            .collect(),
        state_machines: BTreeMap::new(),
    }
}

fn bench(c: &mut Criterion) {
    let inventory = inventory(10_000);
    let text = advert::build(&inventory);
    let mut group = c.benchmark_group("advert_10000_nodes");
    group.bench_function("build", |b| b.iter(|| advert::build(black_box(&inventory))));
    group.bench_function("baseline_tree_parse_of_the_same_ad", |b| {
        b.iter(|| geni_rspec::Document::parse(black_box(text.as_bytes())).map(|d| d.root()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
