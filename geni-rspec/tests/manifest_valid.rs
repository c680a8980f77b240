//! Built manifests and advertisements are well-formed for the project's own
//! tree (parse, round-trip) and valid against the project's schemas.
//!
//! For every corpus request the official schemas accept (`VALIDATION.tsv`;
//! third-party extension schemas aside), its manifest is built with placeholder annotations
//! for a CM no file names, and for the CM named first in the file. The only
//! schema complaint allowed is the one the AM cannot fix without breaking
//! the pass-through rule: a link of another component manager, copied
//! unchanged, has no `vlantag`.

use geni_rspec::Document;
use geni_rspec::RSpec;
use geni_rspec::manifest::{self, Ownership};
use geni_rspec::{IssueKind, RspecKind, Validator};
use std::path::{Path, PathBuf};

const TEST_CM: &str = "urn:publicid:IDN+views.test.example+authority+cm";

fn corpus(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .join(relative)
}

/// Corpus requests every schema of `VALIDATION.tsv` accepts (the official
/// request schema, and the one with the extensions where one is listed).
fn officially_valid_requests() -> Vec<String> {
    let table = std::fs::read_to_string(corpus("VALIDATION.tsv")).unwrap();
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|line| line.split('\t').collect())
        .collect();
    let mut files: Vec<String> = rows
        .iter()
        .filter(|f| f[0].starts_with("rspec/request/") && f.len() > 2)
        .map(|f| f[0].to_owned())
        .collect();
    files.dedup();
    files.retain(|file| {
        let verdicts = rows.iter().filter(|f| f[0] == file.as_str());
        let official = rows.iter().any(|f| {
            f[0] == file.as_str() && matches!(f[1], "xsd/3/request.xsd" | "xsd/2/request.xsd")
        });
        official
            && verdicts
                .filter(|f| !f[1].starts_with("xsd/third-party/"))
                .all(|f| f[2] == "yes")
    });
    files
}

/// Lines of the links in `manifest` that another CM owns and that have no
/// `vlantag`.
fn foreign_links_without_vlantag(manifest: &Document, cm: &str) -> Vec<u32> {
    let rspec = RSpec::new(manifest).unwrap();
    let owned = Ownership::of(&rspec, cm);
    rspec
        .links()
        .filter(|l| !owned.links.contains(&l.id()) && l.vlantag().is_none())
        .map(|l| l.line())
        .collect()
}

/// Builds, round-trips and validates the manifest of `relative` for `cm`.
fn check(validator: &Validator, relative: &str, cm: &str) {
    let request = Document::parse(&std::fs::read(corpus(relative)).unwrap()).unwrap();
    let annotations = manifest::placeholder_annotations(&request, cm).unwrap();
    let built = manifest::build(&request, cm, &annotations).unwrap();
    let bytes = built.to_bytes();
    let reparsed = Document::parse(&bytes).unwrap_or_else(|e| panic!("{relative}: {e}"));
    assert_eq!(reparsed.to_bytes(), bytes, "{relative}: round trip");
    let Err(invalid) = validator.validate_as(&bytes, RspecKind::Manifest) else {
        return;
    };
    let allowed = foreign_links_without_vlantag(&reparsed, cm);
    for issue in &invalid.issues {
        let excused = issue.kind == IssueKind::Schema
            && issue.element.as_deref() == Some("link")
            && issue.message.contains("vlantag")
            && allowed.contains(&issue.line);
        assert!(excused, "{relative} for {cm}: {issue}");
    }
}

#[test]
fn manifests_of_officially_valid_requests_validate() {
    let validator = Validator::new().unwrap();
    let files = officially_valid_requests();
    assert!(
        files.len() >= 120,
        "only {} valid requests listed",
        files.len()
    );
    for relative in &files {
        check(&validator, relative, TEST_CM);
        let request = Document::parse(&std::fs::read(corpus(relative)).unwrap()).unwrap();
        let named = RSpec::new(&request)
            .unwrap()
            .nodes()
            .find_map(|n| n.component_manager_id().map(|c| c.into_owned()));
        // FITeagle files name their CM with an http URL; an AM's CM is a URN.
        if let Some(cm) = named.filter(|cm| manifest::urn_authority(cm).is_some()) {
            check(&validator, relative, &cm);
        }
    }
}

#[test]
fn the_empty_manifest_validates_and_has_no_nodes() {
    let empty = manifest::empty().unwrap();
    let rspec = RSpec::new(&empty).unwrap();
    assert_eq!(rspec.rspec_type(), Some(RspecKind::Manifest));
    assert_eq!(rspec.nodes().count() + rspec.links().count(), 0);
    Validator::new()
        .unwrap()
        .validate_as(&empty.to_bytes(), RspecKind::Manifest)
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn advertisements_validate_with_the_opstate_and_size_extensions() {
    use chrono::{TimeZone, Utc};
    use geni_rspec::advert::{self, DiskImage, Inventory, InventoryNode, Location, SliverOffer};
    let node = |i: usize| InventoryNode {
        component_id: format!("urn:publicid:IDN+cloud.example.org+node+host{i}"),
        component_name: format!("host{i}"),
        exclusive: i == 0,
        available: i != 1,
        hardware_types: vec!["kvm-host".into()],
        sliver_types: vec![SliverOffer {
            max_size: Some(geni_rspec::VmSize {
                cores: 4,
                ram_mb: 8192,
                disk_gb: Some(40),
            }),
            name: "default-vm".into(),
            disk_images: vec![DiskImage {
                name: "urn:publicid:IDN+cloud.example.org+image+ubuntu22".into(),
                os: Some("Linux".into()),
                version: Some("22.04".into()),
                description: None,
                default: true,
            }],
        }],
        location: Some(Location {
            country: "BE".into(),
            latitude: None,
            longitude: None,
        }),
    };
    let inventory = Inventory {
        component_manager_id: "urn:publicid:IDN+cloud.example.org+authority+cm".into(),
        generated: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
        expires: Utc.with_ymd_and_hms(2026, 1, 2, 0, 0, 0).unwrap(),
        nodes: (0..3).map(node).collect(),
        state_machines: Default::default(),
    };
    let text = advert::build(&inventory);
    Validator::new()
        .unwrap()
        .validate_as(text.as_bytes(), RspecKind::Advertisement)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
}

#[test]
fn a_fully_annotated_manifest_validates_with_ssh_user_and_proxy() {
    use geni_rspec::manifest::{IpAddress, Login, Proxy, SshUser};
    let cm = "urn:publicid:IDN+instageni.clemson.edu+authority+cm";
    let relative = "rspec/request/geni-tutorials__ig-clemson.rspec";
    let request = Document::parse(&std::fs::read(corpus(relative)).unwrap()).unwrap();
    let mut annotations = manifest::placeholder_annotations(&request, cm).unwrap();
    assert!(!annotations.nodes.is_empty());
    for (client_id, node) in annotations.nodes.iter_mut() {
        let host = format!("{client_id}.clemson.example");
        node.hostname = Some(host.clone());
        node.component_name = Some(format!("pc-{client_id}"));
        node.logins = vec![
            Login::ssh("gw.clemson.example", 2222, "alice"),
            Login::ssh(&host, 22, "alice"),
        ];
        node.users = vec![SshUser {
            login: "alice".into(),
            user_urn: Some("urn:publicid:IDN+ch.geni.net+user+alice".into()),
            public_keys: vec!["ssh-ed25519 AAAAC3Nz alice@laptop".into()],
        }];
        node.proxy = Some(Proxy {
            proxy: "alice@gw.clemson.example:2222".into(),
            target: format!("alice@{host}:22"),
        });
    }
    for (index, interface) in annotations.interfaces.values_mut().enumerate() {
        interface.mac_address = Some(format!("02:00:00:00:00:{index:02x}"));
        interface.ips = vec![IpAddress::ipv4(
            &format!("10.1.0.{}", index + 1),
            "255.255.255.0",
        )];
    }
    let built = manifest::build(&request, cm, &annotations).unwrap();
    let bytes = built.to_bytes();
    Validator::new()
        .unwrap()
        .validate_as(&bytes, RspecKind::Manifest)
        .unwrap_or_else(|e| panic!("{e}\n{}", String::from_utf8_lossy(&bytes)));
}
