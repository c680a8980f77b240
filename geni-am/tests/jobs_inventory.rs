//! The inventory refresh over the OpenNebula backend against the OpenNebula
//! simulator: the advertisement follows the cloud's live hosts. A host
//! disabled after start is advertised unavailable after a refresh (and
//! available again once enabled), a host filled by others too; a host
//! added is advertised with its capacity; a host removed while a sliver is
//! bound to it stays in the components, unavailable, with its sliver; and
//! while the backend cannot be read the components stay as they were.

mod core_support;
mod jobs_support;

on_both_stores!(OpenNebula:
    a_disabled_or_filled_host_is_advertised_unavailable_after_a_refresh,
    a_host_added_to_the_cloud_is_advertised,
    a_host_removed_under_a_sliver_stays_unavailable_with_its_sliver,
    a_backend_error_keeps_the_components_as_they_were,
);

use geni_am::geni::GeniCode;
use geni_am::store::components::ComponentRow;
use geni_rspec::Document;
use geni_rspec::RSpec;
use jobs_support::{AUTHORITY, Harness, SLICE, eventually, fast_jobs};
use onesim::OneSim;

/// The simulator's seeded host: 8 CPUs (800 hundredths of a CPU share, as
/// OpenNebula capacity is counted), 16 GiB.
const SEEDED: &str = "localhost";
/// Its OpenNebula id.
const SEEDED_ID: i32 = 0;
/// OpenNebula's host states (`STATE`).
const MONITORED: i32 = 2;
const DISABLED: i32 = 4;

fn component_id(name: &str) -> String {
    format!("urn:publicid:IDN+{AUTHORITY}+node+{name}")
}

/// `(component_name, available)` of every node of the advertisement, the
/// `geni_available` view (available nodes only) or the full one.
fn advertised(harness: &Harness, available_only: bool) -> Vec<(String, bool)> {
    let ad = harness.aggregate.advertisement(available_only).unwrap();
    let doc = Document::parse(ad.as_bytes()).unwrap();
    RSpec::new(&doc)
        .unwrap()
        .nodes()
        .map(|node| {
            let name = node.component_name().unwrap().into_owned();
            (name, node.available_now().unwrap())
        })
        .collect()
}

/// Waits until the `geni_available` view lists exactly `names`.
fn wait_available(harness: &Harness, names: &[&str]) {
    eventually(&format!("only {names:?} advertised available"), || {
        let listed = advertised(harness, true);
        listed
            .iter()
            .map(|(name, _)| name.as_str())
            .eq(names.iter().copied())
    });
}

/// The components row of host `name`.
fn row(harness: &Harness, name: &str) -> ComponentRow {
    let id = component_id(name);
    let rows = harness.store.components().unwrap();
    rows.into_iter()
        .find(|row| row.id == id)
        .unwrap_or_else(|| panic!("no component {id}"))
}

/// Creates host `name` through `one.host.allocate` (as `onehost create`
/// does), then gives it what its first monitoring reports: MONITORED, with
/// `cpus` cores and `memory_mib` MiB. Returns its id.
fn add_host(onesim: &OneSim, name: &str, cpus: i64, memory_mib: i64) -> i32 {
    let call = format!(
        "<?xml version=\"1.0\"?><methodCall><methodName>one.host.allocate</methodName><params>\
         <param><value><string>oneadmin:onetest</string></value></param>\
         <param><value><string>{name}</string></value></param>\
         <param><value><string>kvm</string></value></param>\
         <param><value><string>kvm</string></value></param>\
         </params></methodCall>"
    );
    let reply = onesim.answer(&call);
    assert!(reply.contains("<boolean>1</boolean>"), "{reply}");
    let id = onesim.host_id(name).unwrap();
    onesim.set_host_state(id, MONITORED);
    onesim.set_host_capacity(id, cpus * 100, memory_mib * 1024);
    id
}

/// A request for one node of type `small` bound to host `name`.
fn bound_request(name: &str) -> String {
    let component = component_id(name);
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" type=\"request\">\n  <node client_id=\"bound\" component_id=\"{component}\" exclusive=\"false\">\n    <sliver_type name=\"small\"/>\n  </node>\n</rspec>\n"
    )
}

fn a_disabled_or_filled_host_is_advertised_unavailable_after_a_refresh(mut harness: Harness) {
    assert_eq!(advertised(&harness, true), [(SEEDED.to_owned(), true)]);
    harness.start(fast_jobs());

    harness.onesim().set_host_state(SEEDED_ID, DISABLED);
    wait_available(&harness, &[]);
    assert_eq!(advertised(&harness, false), [(SEEDED.to_owned(), false)]);
    let disabled = row(&harness, SEEDED);
    assert_eq!((disabled.cpus, disabled.memory_mb), (800, 16384), "kept");

    harness.onesim().set_host_state(SEEDED_ID, MONITORED);
    wait_available(&harness, &[SEEDED]);

    // Others' VMs leave less than the smallest type (0.5 CPU) unallocated.
    harness.onesim().set_host_capacity(SEEDED_ID, 40, 16 << 20);
    wait_available(&harness, &[]);
    assert_eq!(advertised(&harness, false), [(SEEDED.to_owned(), false)]);
    assert_eq!(row(&harness, SEEDED).cpus, 40, "the capacity follows");
}

fn a_host_added_to_the_cloud_is_advertised(mut harness: Harness) {
    harness.start(fast_jobs());
    add_host(harness.onesim(), "spare", 4, 8192);
    wait_available(&harness, &[SEEDED, "spare"]);
    let spare = row(&harness, "spare");
    assert_eq!((spare.cpus, spare.memory_mb), (400, 8192));
    let types: Vec<&str> = spare
        .details
        .sliver_types
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(types, ["small"]);
    let urns = harness
        .allocate_document(SLICE, &bound_request("spare"))
        .unwrap();
    let sliver = harness.store.sliver(&urns[0]).unwrap().unwrap();
    assert_eq!(sliver.component_id, component_id("spare"));
}

fn a_host_removed_under_a_sliver_stays_unavailable_with_its_sliver(mut harness: Harness) {
    let spare = add_host(harness.onesim(), "spare", 4, 8192);
    harness.start(fast_jobs());
    wait_available(&harness, &[SEEDED, "spare"]);
    let urns = harness
        .allocate_document(SLICE, &bound_request("spare"))
        .unwrap();

    // `onehost delete`: the sliver is only allocated, so the host has no VM.
    assert!(harness.onesim().remove_host(spare));
    wait_available(&harness, &[SEEDED]);
    assert_eq!(
        advertised(&harness, false),
        [(SEEDED.to_owned(), true), ("spare".to_owned(), false)]
    );
    let kept = row(&harness, "spare");
    assert!(!kept.available);
    assert_eq!((kept.cpus, kept.memory_mb), (400, 8192));
    let sliver = harness.store.sliver(&urns[0]).unwrap().unwrap();
    assert_eq!(sliver.allocation_state.as_str(), "geni_allocated");
    assert_eq!(sliver.component_id, component_id("spare"));
    let refused = harness
        .allocate_document(
            "urn:publicid:IDN+ch.geni.net:jobs+slice+late",
            &bound_request("spare"),
        )
        .unwrap_err();
    assert_eq!(refused.code, GeniCode::InsufficientNodes, "{refused}");
}

fn a_backend_error_keeps_the_components_as_they_were(mut harness: Harness) {
    harness.start(fast_jobs());
    let before = harness.store.components().unwrap();
    // The password changes in OpenNebula, not in the aggregate's
    // configuration: every call fails. Meanwhile the host is disabled.
    let onesim = harness.onesim();
    onesim.set_password("oneadmin", "rotated");
    onesim.set_host_state(SEEDED_ID, DISABLED);
    // Each refresh (every 100 ms) starts with the VM pool, what this
    // aggregate's VMs hold, and that call is refused; the poller (every
    // 50 ms) reads the pool too, so twelve refused reads span at least
    // three refreshes.
    let reads = onesim.call_count("one.vmpool.info");
    eventually("twelve refused VM pool reads", || {
        onesim.call_count("one.vmpool.info") >= reads + 12
    });
    assert_eq!(harness.store.components().unwrap(), before);
    assert_eq!(advertised(&harness, true), [(SEEDED.to_owned(), true)]);

    onesim.set_password("oneadmin", "onetest");
    wait_available(&harness, &[]);
}
