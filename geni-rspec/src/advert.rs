//! The advertisement builder: from the AM's inventory to a GENI v3
//! `<rspec type="advertisement">` (ListResources).
//!
//! Every node carries `component_id`, `component_manager_id`,
//! `component_name`, `exclusive`, its hardware and sliver types (with disk
//! images), `<available now=…>` and its location; one `rspec_opstate` per
//! sliver type advertises the operational state machine (GENI AM API v3
//! specification, section "Operational States").
//! The document is written in one pass with a streaming writer, so ten
//! thousand nodes take milliseconds, and it reads back with
//! [`Document`](crate::Document).

mod opstate;
mod writer;

pub use opstate::{Action, State, StateMachine, Wait};

use crate::validate::{RspecKind, RspecVersion};
use crate::view::{ns, schema_url};
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, BTreeSet};
use writer::XmlWriter;

/// Schema of the opstate extension in advertisements.
const OPSTATE_AD_SCHEMA: &str = "http://www.geni.net/resources/rspec/ext/opstate/1/ad.xsd";

/// What the AM can hand out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inventory {
    /// URN of the AM's component manager, written on every node.
    pub component_manager_id: String,
    /// When the advertisement was made.
    pub generated: DateTime<Utc>,
    /// Until when it may be relied on.
    pub expires: DateTime<Utc>,
    /// The allocatable components.
    pub nodes: Vec<InventoryNode>,
    /// State machine per sliver type name; sliver types not listed get
    /// [`StateMachine::virtual_machine`].
    pub state_machines: BTreeMap<String, StateMachine>,
}

/// One allocatable component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InventoryNode {
    /// Its URN, unique and stable under the AM's authority.
    pub component_id: String,
    /// Its short name.
    pub component_name: String,
    /// Whether it is handed out whole (`true`) or shared between slivers.
    pub exclusive: bool,
    /// Whether anything can be allocated on it now.
    pub available: bool,
    /// Hardware type names, e.g. `pc` or `kvm-host`.
    pub hardware_types: Vec<String>,
    /// What can run on it.
    pub sliver_types: Vec<SliverOffer>,
    /// Where it is.
    pub location: Option<Location>,
}

/// A sliver type offered on a node with the disk images it can boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SliverOffer {
    /// Sliver type name, e.g. `default-vm`.
    pub name: String,
    /// The largest size a request may ask for (Emulab `<xen>`), if the
    /// type can be sized.
    pub max_size: Option<crate::view::VmSize>,
    /// Bootable images.
    pub disk_images: Vec<DiskImage>,
}

/// A bootable disk image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskImage {
    /// Image URN.
    pub name: String,
    /// Operating system, e.g. `Linux`.
    pub os: Option<String>,
    /// Operating system version.
    pub version: Option<String>,
    /// One line for people.
    pub description: Option<String>,
    /// Whether it boots when the request names no image.
    pub default: bool,
}

/// Where a node is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// ISO 3166 country code.
    pub country: String,
    /// Decimal degrees.
    pub latitude: Option<String>,
    /// Decimal degrees.
    pub longitude: Option<String>,
}

/// Formats a time the way GENI wants it: `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339(time: &DateTime<Utc>) -> String {
    time.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Writes the advertisement of `inventory`.
pub fn build(inventory: &Inventory) -> String {
    let mut w = XmlWriter::with_capacity(1024 + inventory.nodes.len() * 512);
    let schema_location = format!(
        "{v3} {ad} {opstate} {OPSTATE_AD_SCHEMA}",
        v3 = ns::GENI_V3,
        ad = schema_url(RspecVersion::GeniV3, RspecKind::Advertisement),
        opstate = ns::OPSTATE,
    );
    let (generated, expires) = (rfc3339(&inventory.generated), rfc3339(&inventory.expires));
    w.open(
        0,
        "rspec",
        &[
            ("xmlns", Some(ns::GENI_V3)),
            ("xmlns:xsi", Some(ns::XSI)),
            ("xsi:schemaLocation", Some(&schema_location)),
            ("type", Some(RspecKind::Advertisement.type_attribute())),
            ("generated", Some(&generated)),
            ("expires", Some(&expires)),
        ],
    );
    let sliver_types: BTreeSet<&str> = inventory
        .nodes
        .iter()
        .flat_map(|n| n.sliver_types.iter().map(|s| s.name.as_str()))
        .collect();
    let standard = StateMachine::virtual_machine();
    for sliver_type in sliver_types {
        let machine = inventory
            .state_machines
            .get(sliver_type)
            .unwrap_or(&standard);
        write_opstate(
            &mut w,
            &inventory.component_manager_id,
            sliver_type,
            machine,
        );
    }
    for node in &inventory.nodes {
        write_node(&mut w, &inventory.component_manager_id, node);
    }
    w.close(0, "rspec");
    w.finish()
}

/// One `<rspec_opstate>` for `sliver_type`.
fn write_opstate(w: &mut XmlWriter, cm: &str, sliver_type: &str, machine: &StateMachine) {
    w.open(
        1,
        "rspec_opstate",
        &[
            ("xmlns", Some(ns::OPSTATE)),
            ("aggregate_manager_id", Some(cm)),
            ("start", Some(&machine.start)),
        ],
    );
    w.empty(2, "sliver_type", &[("name", Some(sliver_type))]);
    for state in &machine.states {
        w.open(2, "state", &[("name", Some(&state.name))]);
        for action in &state.actions {
            w.open(
                3,
                "action",
                &[("name", Some(&action.name)), ("next", Some(&action.next))],
            );
            w.text_element(4, "description", &action.description);
            w.close(3, "action");
        }
        for wait in &state.waits {
            w.empty(
                3,
                "wait",
                &[("type", Some(&wait.outcome)), ("next", Some(&wait.next))],
            );
        }
        w.text_element(3, "description", &state.description);
        w.close(2, "state");
    }
    w.close(1, "rspec_opstate");
}

/// One `<node>`.
fn write_node(w: &mut XmlWriter, cm: &str, node: &InventoryNode) {
    w.open(
        1,
        "node",
        &[
            ("component_id", Some(&node.component_id)),
            ("component_manager_id", Some(cm)),
            ("component_name", Some(&node.component_name)),
            ("exclusive", Some(bool_str(node.exclusive))),
        ],
    );
    for hardware_type in &node.hardware_types {
        w.empty(2, "hardware_type", &[("name", Some(hardware_type))]);
    }
    for offer in &node.sliver_types {
        if offer.disk_images.is_empty() && offer.max_size.is_none() {
            w.empty(2, "sliver_type", &[("name", Some(&offer.name))]);
            continue;
        }
        w.open(2, "sliver_type", &[("name", Some(&offer.name))]);
        if let Some(size) = &offer.max_size {
            let (cores, ram) = (size.cores.to_string(), size.ram_mb.to_string());
            let disk = size.disk_gb.map(|d| d.to_string());
            w.empty(
                3,
                "emulab:xen",
                &[
                    ("xmlns:emulab", Some(ns::EMULAB)),
                    ("cores", Some(&cores)),
                    ("ram", Some(&ram)),
                    ("disk", disk.as_deref()),
                ],
            );
        }
        for image in &offer.disk_images {
            w.empty(
                3,
                "disk_image",
                &[
                    ("name", Some(&image.name)),
                    ("os", image.os.as_deref()),
                    ("version", image.version.as_deref()),
                    ("description", image.description.as_deref()),
                    ("default", image.default.then_some("true")),
                ],
            );
        }
        w.close(2, "sliver_type");
    }
    w.empty(2, "available", &[("now", Some(bool_str(node.available)))]);
    if let Some(location) = &node.location {
        w.empty(
            2,
            "location",
            &[
                ("country", Some(&location.country)),
                ("latitude", location.latitude.as_deref()),
                ("longitude", location.longitude.as_deref()),
            ],
        );
    }
    w.close(1, "node");
}

fn bool_str(value: bool) -> &'static str {
    if value { "true" } else { "false" }
}
