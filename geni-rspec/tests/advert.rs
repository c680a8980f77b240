//! The advertisement builder writes GENI v3 ads that read back through the
//! project's tree and views with everything the inventory said.

use chrono::{TimeZone, Utc};
use geni_rspec::Document;
use geni_rspec::RspecKind;
use geni_rspec::advert::{
    self, DiskImage, Inventory, InventoryNode, Location, SliverOffer, StateMachine,
};
use geni_rspec::{RSpec, VmSize};
use std::collections::BTreeMap;

const CM: &str = "urn:publicid:IDN+cloud.example.org+authority+cm";

fn node(index: usize, available: bool) -> InventoryNode {
    InventoryNode {
        component_id: format!("urn:publicid:IDN+cloud.example.org+node+host{index}"),
        component_name: format!("host{index}"),
        exclusive: false,
        available,
        hardware_types: vec!["kvm-host".into()],
        sliver_types: vec![
            SliverOffer {
                max_size: None,
                name: "default-vm".into(),
                disk_images: vec![DiskImage {
                    name: "urn:publicid:IDN+cloud.example.org+image+ubuntu22".into(),
                    os: Some("Linux".into()),
                    version: Some("22.04".into()),
                    description: Some("Ubuntu 22.04 <LTS> & \"friends\"".into()),
                    default: true,
                }],
            },
            SliverOffer {
                max_size: Some(VmSize {
                    cores: 4,
                    ram_mb: 8192,
                    disk_gb: Some(40),
                }),
                name: "raw-vm".into(),
                disk_images: vec![],
            },
        ],
        location: Some(Location {
            country: "BE".into(),
            latitude: Some("51.05".into()),
            longitude: Some("3.72".into()),
        }),
    }
}

fn inventory(nodes: usize) -> Inventory {
    Inventory {
        component_manager_id: CM.into(),
        generated: Utc.with_ymd_and_hms(2026, 11, 21, 12, 0, 0).unwrap(),
        expires: Utc.with_ymd_and_hms(2026, 11, 21, 13, 0, 0).unwrap(),
        nodes: (0..nodes).map(|i| node(i, i % 3 != 0)).collect(),
        state_machines: BTreeMap::new(),
    }
}

#[test]
fn ad_reads_back_with_every_node_attribute() {
    let text = advert::build(&inventory(5));
    let doc = Document::parse(text.as_bytes()).unwrap();
    let rspec = RSpec::new(&doc).unwrap();
    assert_eq!(rspec.rspec_type(), Some(RspecKind::Advertisement));
    assert_eq!(rspec.generated().as_deref(), Some("2026-11-21T12:00:00Z"));
    assert_eq!(rspec.expires().as_deref(), Some("2026-11-21T13:00:00Z"));
    let location = rspec.schema_location().unwrap();
    assert!(location.contains(
        "http://www.geni.net/resources/rspec/3 http://www.geni.net/resources/rspec/3/ad.xsd"
    ));
    assert!(location.contains("http://www.geni.net/resources/rspec/ext/opstate/1 http://www.geni.net/resources/rspec/ext/opstate/1/ad.xsd"));
    let nodes: Vec<_> = rspec.nodes().collect();
    assert_eq!(nodes.len(), 5);
    for (index, node) in nodes.iter().enumerate() {
        assert_eq!(node.component_manager_id().as_deref(), Some(CM));
        assert_eq!(
            node.component_name().as_deref(),
            Some(format!("host{index}").as_str())
        );
        assert_eq!(node.exclusive(), Some(false));
        assert_eq!(
            node.available_now(),
            Some(index % 3 != 0),
            "every node says whether it is available"
        );
        assert_eq!(
            node.hardware_types().next().unwrap().name().as_deref(),
            Some("kvm-host")
        );
        assert_eq!(node.location().unwrap().country().as_deref(), Some("BE"));
    }
    let vm = nodes[0].sliver_types().next().unwrap();
    let image = vm.disk_images().next().unwrap();
    assert_eq!(
        image.description().as_deref(),
        Some("Ubuntu 22.04 <LTS> & \"friends\""),
        "escaped and read back"
    );
    assert_eq!(image.default().as_deref(), Some("true"));
    assert_eq!(nodes[0].sliver_types().count(), 2);
    assert!(vm.xen().is_none(), "a type without bounds advertises none");
    let sized = nodes[0].sliver_types().nth(1).unwrap();
    let bounds = sized.xen().expect("the bounds as an emulab:xen");
    assert_eq!(
        [bounds.cores(), bounds.ram(), bounds.disk()].map(|v| v.map(|v| v.into_owned())),
        [Some("4".into()), Some("8192".into()), Some("40".into())]
    );
}

#[test]
fn one_opstate_machine_per_sliver_type() {
    let text = advert::build(&inventory(3));
    let doc = Document::parse(text.as_bytes()).unwrap();
    let rspec = RSpec::new(&doc).unwrap();
    let machine = StateMachine::virtual_machine();
    let opstates: Vec<_> = rspec.opstates().collect();
    let covered: Vec<Vec<String>> = opstates
        .iter()
        .map(|o| o.sliver_types().map(|t| t.into_owned()).collect())
        .collect();
    assert_eq!(covered, [["default-vm"], ["raw-vm"]]);
    for opstate in &opstates {
        assert_eq!(opstate.aggregate_manager_id().as_deref(), Some(CM));
        assert_eq!(opstate.start().as_deref(), Some(machine.start.as_str()));
        let states: Vec<String> = opstate
            .states()
            .filter_map(|s| s.name().map(|n| n.into_owned()))
            .collect();
        let expected: Vec<&str> = machine.states.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(states, expected);
        let ready = opstate.state("geni_ready").unwrap();
        let actions: Vec<(String, String)> = ready
            .actions()
            .map(|a| {
                (
                    a.name().unwrap().into_owned(),
                    a.next().unwrap().into_owned(),
                )
            })
            .collect();
        assert_eq!(
            actions,
            [
                ("geni_restart".to_owned(), "geni_configuring".to_owned()),
                ("geni_stop".to_owned(), "geni_stopping".to_owned()),
                (
                    "geni_update_users".to_owned(),
                    "geni_updating_users".to_owned()
                ),
            ]
        );
        assert_eq!(
            ready.description().as_deref(),
            Some("The virtual machine is running; users can log in.")
        );
        let configuring = opstate.state("geni_configuring").unwrap();
        let waits: Vec<(String, String)> = configuring
            .waits()
            .map(|(kind, next)| (kind.into_owned(), next.into_owned()))
            .collect();
        assert_eq!(
            waits,
            [
                ("geni_success".to_owned(), "geni_ready".to_owned()),
                ("geni_failure".to_owned(), "geni_failed".to_owned()),
            ]
        );
    }
}

#[test]
fn a_custom_machine_replaces_the_default_for_its_sliver_type() {
    let mut inv = inventory(1);
    let mut custom = StateMachine::virtual_machine();
    custom.start = "geni_notready".into();
    inv.state_machines.insert("raw-vm".into(), custom);
    let text = advert::build(&inv);
    let doc = Document::parse(text.as_bytes()).unwrap();
    let starts: Vec<String> = RSpec::new(&doc)
        .unwrap()
        .opstates()
        .map(|o| o.start().unwrap().into_owned())
        .collect();
    assert_eq!(starts, ["geni_pending_allocation", "geni_notready"]);
}

#[test]
fn ten_thousand_nodes_parse_back() {
    let text = advert::build(&inventory(10_000));
    let doc = Document::parse(text.as_bytes()).unwrap();
    let rspec = RSpec::new(&doc).unwrap();
    assert_eq!(rspec.nodes().count(), 10_000);
    assert!(rspec.nodes().all(|n| n.available_now().is_some()));
}

#[test]
fn empty_inventory_is_still_an_advertisement() {
    let text = advert::build(&inventory(0));
    let doc = Document::parse(text.as_bytes()).unwrap();
    let rspec = RSpec::new(&doc).unwrap();
    assert_eq!(rspec.rspec_type(), Some(RspecKind::Advertisement));
    assert_eq!(rspec.nodes().count(), 0);
}
