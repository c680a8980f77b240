//! Real requests from the corpus (Jacks, Flack, jFed, geni-lib, omni,
//! stitcher tests, tutorials…) through Allocate, Provision, Describe and
//! Delete. The aggregate plays the component manager the request names
//! first (or an unbound one), with an inventory offering what the request
//! asks for; every manifest must be a valid manifest listing exactly the
//! request's nodes of this aggregate with their sliver URNs, and the nodes
//! of other component managers must be copied byte for byte. Requests
//! with no node this aggregate could own (OpenFlow-only, or a component
//! manager that is not a URN) are refused with BADARGS.

mod core_support;

use core_support::*;
use geni_am::core::{Aggregate, AggregateConfig, Policy, ProvisionOptions};
use geni_am::model::Selector;
use geni_am::store::Store;
use geni_am::store::components::{ComponentDetails, ComponentRow, DiskImageSpec, SliverTypeSpec};
use geni_rspec::Document;
use geni_rspec::manifest::{Ownership, urn_authority};
use geni_rspec::{Node, RSpec};
use geni_rspec::{RspecKind, Validator};
use std::collections::BTreeSet;
use std::sync::Arc;

/// The component manager the aggregate plays for `doc`.
fn chosen_cm(doc: &Document) -> String {
    RSpec::new(doc)
        .unwrap()
        .nodes()
        .find_map(|n| n.component_manager_id().map(|c| c.into_owned()))
        .filter(|c| urn_authority(c).is_some())
        .unwrap_or_else(|| CM.to_owned())
}

/// An inventory that can hold every node of `doc` owned by `cm`.
fn inventory_for(doc: &Document, cm: &str) -> Vec<ComponentRow> {
    let rspec = RSpec::new(doc).unwrap();
    let owned = Ownership::of(&rspec, cm);
    let nodes: Vec<Node<'_>> = owned.nodes.iter().map(|&id| Node::new(doc, id)).collect();
    let mut types: BTreeSet<String> = BTreeSet::from(["default-vm".to_owned()]);
    let mut images: BTreeSet<String> = BTreeSet::new();
    let mut bound: BTreeSet<String> = BTreeSet::new();
    for n in &nodes {
        if let Some(t) = n.sliver_type() {
            types.extend(t.name().map(|s| s.into_owned()));
            images.extend(
                t.disk_images()
                    .filter_map(|d| d.name().map(|s| s.into_owned())),
            );
        }
        bound.extend(n.component_id().map(|s| s.into_owned()));
    }
    let authority = urn_authority(cm).unwrap().to_owned();
    // Room for the sizes the corpus asks with <emulab:xen> (up to 4 cores,
    // 4096 MiB, 8 GB).
    let spec = |name: &String| SliverTypeSpec {
        max_cores: Some(8),
        max_ram_mb: Some(8192),
        max_disk_gb: Some(64),
        name: name.clone(),
        cpus: 1,
        cores: None,
        memory_mb: 256,
        disk_images: images
            .iter()
            .map(|i| DiskImageSpec {
                name: i.clone(),
                os: None,
                version: None,
                description: None,
                default: false,
            })
            .collect(),
    };
    let generic = (0..=nodes.len()).map(|i| format!("urn:publicid:IDN+{authority}+node+spare{i}"));
    bound
        .into_iter()
        .chain(generic)
        .enumerate()
        .map(|(i, id)| ComponentRow {
            id,
            name: format!("c{i}"),
            cpus: 64,
            memory_mb: 64 * 1024,
            max_vms: 64,
            exclusive: false,
            available: true,
            details: ComponentDetails {
                hardware_types: vec!["pc".into()],
                sliver_types: types.iter().map(spec).collect(),
                location: None,
            },
        })
        .collect()
}

/// An aggregate playing `cm` on a fresh SQLite file.
fn aggregate_for(dir: &tempfile::TempDir, cm: &str, inventory: &[ComponentRow]) -> Aggregate {
    let url = dir.path().join("am.sqlite").to_string_lossy().into_owned();
    let store = Store::open(&url, 2).unwrap();
    store.sync_components(inventory, start()).unwrap();
    let authority = urn_authority(cm).unwrap().to_owned();
    let config = AggregateConfig {
        am_urn: format!("urn:publicid:IDN+{authority}+authority+am"),
        authority,
        cm_urn: cm.to_owned(),
        policy: Policy::default(),
        ssh: Default::default(),
    };
    Aggregate::new(store, config)
        .unwrap()
        .with_clock(Arc::new(start))
}

/// The real requests that validate as GENI v3 / PG v2 requests.
fn valid_requests() -> Vec<(String, String)> {
    let validator = Validator::new().unwrap();
    let mut out = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(corpus().join("rspec/request"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    for path in paths {
        let bytes = std::fs::read(&path).unwrap();
        if validator.validate_as(&bytes, RspecKind::Request).is_ok() {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            out.push((name, String::from_utf8(bytes).unwrap()));
        }
    }
    out
}

/// Whether `request` has nodes or links that another component manager
/// owns (copied unchanged, they may lack what a manifest needs).
fn has_foreign(request: &Document, cm: &str) -> bool {
    let root = RSpec::new(request).unwrap();
    let owned = Ownership::of(&root, cm);
    root.nodes().count() != owned.nodes.len() || root.links().count() != owned.links.len()
}

/// Checks a manifest of `request` made by `cm`: valid (when everything in
/// it is ours), our nodes with sliver ids from `slivers`, foreign nodes
/// unchanged.
fn check_manifest(
    name: &str,
    request: &Document,
    manifest: &str,
    cm: &str,
    slivers: &[(String, String)],
) {
    let validator = Validator::new().unwrap();
    let checked = if has_foreign(request, cm) {
        validator
            .validate(manifest.as_bytes())
            .map(|_| ())
            .or_else(|e| {
                // Foreign links keep the request's shape (no vlantag); nothing else may be wrong.
                let only_foreign = e.issues.iter().all(|i| i.message.contains("vlantag"));
                if only_foreign { Ok(()) } else { Err(e) }
            })
    } else {
        validator
            .validate_as(manifest.as_bytes(), RspecKind::Manifest)
            .map(|_| ())
    };
    if let Err(e) = checked {
        panic!("{name}: manifest invalid: {e}\n{manifest}");
    }
    let m = Document::parse(manifest.as_bytes()).unwrap();
    let mroot = RSpec::new(&m).unwrap();
    for (client_id, urn) in slivers {
        let node = mroot
            .node(client_id)
            .unwrap_or_else(|| panic!("{name}: {client_id} missing"));
        assert_eq!(
            node.sliver_id().as_deref(),
            Some(urn.as_str()),
            "{name}: {client_id}"
        );
    }
    let rroot = RSpec::new(request).unwrap();
    for node in rroot.nodes().filter(|n| {
        n.component_manager_id()
            .is_some_and(|c| !c.eq_ignore_ascii_case(cm))
    }) {
        let cid = node.client_id().unwrap();
        let copy = mroot
            .node(&cid)
            .unwrap_or_else(|| panic!("{name}: foreign {cid} dropped"));
        assert_eq!(
            m.node_to_bytes(copy.id()),
            request.node_to_bytes(node.id()),
            "{name}: foreign node {cid} changed"
        );
    }
}

#[test]
fn real_requests_go_through_the_whole_lifecycle() {
    let requests = valid_requests();
    assert!(
        requests.len() >= 40,
        "only {} valid requests",
        requests.len()
    );
    let (mut foreign_seen, mut nodeless) = (0, 0);
    for (name, text) in &requests {
        let doc = Document::parse(text.as_bytes()).unwrap();
        let cm = chosen_cm(&doc);
        let dir = tempfile::tempdir().unwrap();
        let am = aggregate_for(&dir, &cm, &inventory_for(&doc, &cm));
        let p = principal(30);
        let ours = Ownership::of(&RSpec::new(&doc).unwrap(), &cm).nodes.len();
        if ours == 0 {
            let err = am.allocate(&p, SLICE, text).unwrap_err().answered();
            assert!(err.message.contains("no node"), "{name}: {err}");
            nodeless += 1;
            continue;
        }
        let a = match am.allocate(&p, SLICE, text) {
            Ok(a) => a,
            Err(e) => panic!("{name}: Allocate refused: {e}"),
        };
        let pairs: Vec<(String, String)> = a
            .slivers
            .iter()
            .map(|s| (s.client_id.clone(), s.urn.clone()))
            .collect();
        assert_eq!(pairs.len(), ours, "{name}: one sliver per node of ours");
        check_manifest(name, &doc, &a.manifest, &cm, &pairs);
        foreign_seen += RSpec::new(&doc).unwrap().nodes().count() - ours;

        let options = ProvisionOptions {
            users: vec![alice()],
            ..ProvisionOptions::default()
        };
        let prov = am
            .provision(&p, &Selector::Slice(SLICE.into()), &options)
            .unwrap();
        check_manifest(name, &doc, &prov.manifest, &cm, &pairs);
        let d = am.describe(&Selector::Slice(SLICE.into())).unwrap();
        check_manifest(name, &doc, &d.manifest, &cm, &pairs);
        let deleted = am.delete(&p, &Selector::Slice(SLICE.into())).unwrap();
        assert_eq!(deleted.len(), ours, "{name}");
    }
    assert!(
        foreign_seen > 0,
        "no multi-aggregate request exercised the copy rule"
    );
    assert!(
        nodeless < requests.len() / 4,
        "{nodeless} requests without nodes"
    );
}
