//! VM sizes asked the way geni-lib and jFed write them, `<emulab:xen cores
//! ram disk>` inside `sliver_type`: granted within the sliver type's
//! bounds, counted against the component's capacity at the size asked,
//! shown in the manifest and refused beyond a bound with the bound in the
//! message; the advertisement carries the bounds in the same extension.
//! On SQLite and PostgreSQL.

mod core_support;

use core_support::*;
use geni_am::core::Aggregate;
use geni_am::geni::GeniCode;
use geni_am::store::components::ComponentRow;
use geni_rspec::Document;
use geni_rspec::RSpec;

/// One 4-CPU host whose `emulab-xen` type (1 CPU, 512 MiB) may grow to 4
/// cores, 4096 MiB and a 20 GB disk.
fn sized_host() -> ComponentRow {
    let mut row = host("h1", 4);
    row.memory_mb = 8192;
    let xen = &mut row.details.sliver_types[1];
    (xen.max_cores, xen.max_ram_mb, xen.max_disk_gb) = (Some(4), Some(4096), Some(20));
    row
}

/// A request for one `emulab-xen` node `client_id` with `xen` as the
/// attributes of its `<emulab:xen>`.
fn sized_request(client_id: &str, xen: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" xmlns:emulab=\"http://www.protogeni.net/resources/rspec/ext/emulab/1\" type=\"request\">\n  <node client_id=\"{client_id}\" exclusive=\"false\">\n    <sliver_type name=\"emulab-xen\">\n      <emulab:xen {xen}/>\n    </sliver_type>\n  </node>\n</rspec>\n"
    )
}

/// `(cores, ram, disk)` of the `<emulab:xen>` of node `client_id`.
fn xen_of(rspec: &str, client_id: &str) -> [Option<String>; 3] {
    let doc = Document::parse(rspec.as_bytes()).unwrap();
    let root = RSpec::new(&doc).unwrap();
    let node = root
        .nodes()
        .find(|n| n.client_id().as_deref() == Some(client_id))
        .unwrap_or_else(|| panic!("node {client_id} in {rspec}"));
    let sliver_type = node.sliver_type().expect("a sliver type");
    let xen = sliver_type
        .xen()
        .unwrap_or_else(|| panic!("an emulab:xen in {rspec}"));
    [xen.cores(), xen.ram(), xen.disk()].map(|v| v.map(|v| v.into_owned()))
}

fn some(values: [&str; 3]) -> [Option<String>; 3] {
    values.map(|v| (!v.is_empty()).then(|| v.to_owned()))
}

fn a_sized_node_gets_its_size_counted_and_shown(am: &Aggregate) {
    let p = principal(7);
    let big = sized_request("big", "cores=\"2\" ram=\"2048\" disk=\"20\"");
    let allocation = am.allocate(&p, SLICE, &big).unwrap();
    assert_eq!(
        xen_of(&allocation.manifest, "big"),
        some(["2", "2048", "20"])
    );
    let plain = am
        .allocate(&p, SLICE, &request(&["plain"], "emulab-xen"))
        .unwrap();
    assert_eq!(
        xen_of(&plain.manifest, "plain"),
        some(["1", "512", ""]),
        "a node without a size shows the type's"
    );
    let second = sized_request("second", "cores=\"1\"");
    am.allocate(&p, SLICE, &second).unwrap();
    let err = am
        .allocate(&p, SLICE, &sized_request("third", "cores=\"2\""))
        .unwrap_err()
        .answered();
    assert_eq!(
        err.code,
        GeniCode::InsufficientNodes,
        "2 + 1 + 1 of 4 cores are taken: {}",
        err.message
    );
    let described = am.describe(&slice()).unwrap();
    assert_eq!(
        xen_of(&described.manifest, "big"),
        some(["2", "2048", "20"])
    );
}

fn beyond_a_bound_allocate_refuses_with_the_bound(am: &Aggregate) {
    let p = principal(7);
    for (xen, bound) in [
        ("cores=\"5\"", "at most 4"),
        ("ram=\"8192\"", "at most 4096 MB"),
        ("cores=\"1\" disk=\"30\"", "at most 20 GB"),
        ("cores=\"two\"", "whole number"),
        ("ram=\"0\"", "whole number"),
    ] {
        let err = am
            .allocate(&p, SLICE, &sized_request("n", xen))
            .unwrap_err()
            .answered();
        assert_eq!(err.code, GeniCode::BadArgs, "{xen}: {}", err.message);
        assert!(
            err.message.contains(bound) && err.message.contains("`n`"),
            "{xen}: {}",
            err.message
        );
    }
}

/// A disk size asked of a type that offers none is not granted, and the
/// manifest says so by showing none (geni-lib asks `disk="8"` of every
/// Xen VM).
fn a_disk_size_a_type_does_not_offer_is_not_granted(am: &Aggregate) {
    let p = principal(7);
    let as_genilib_writes = request(&["d"], "default-vm").replace(
        "<sliver_type name=\"default-vm\"/>",
        "<sliver_type name=\"default-vm\"><xen xmlns=\"http://www.protogeni.net/resources/rspec/ext/emulab/1\" cores=\"1\" ram=\"256\" disk=\"8\"/></sliver_type>",
    );
    let allocation = am.allocate(&p, SLICE, &as_genilib_writes).unwrap();
    assert_eq!(xen_of(&allocation.manifest, "d"), some(["1", "256", ""]));
}

#[test]
fn a_disk_size_a_type_does_not_offer_is_not_granted_on_sqlite() {
    let f = fixture_with(&[sized_host()]);
    a_disk_size_a_type_does_not_offer_is_not_granted(&f.am);
}

#[test]
fn a_sized_node_gets_its_size_counted_and_shown_on_sqlite() {
    let f = fixture_with(&[sized_host()]);
    a_sized_node_gets_its_size_counted_and_shown(&f.am);
}

#[test]
fn a_sized_node_gets_its_size_counted_and_shown_on_postgres() {
    if let Some((_db, am, _clock)) = pg_fixture_with("vm_size_counted", &[sized_host()]) {
        a_sized_node_gets_its_size_counted_and_shown(&am);
    }
}

#[test]
fn beyond_a_bound_allocate_refuses_with_the_bound_on_sqlite() {
    let f = fixture_with(&[sized_host()]);
    beyond_a_bound_allocate_refuses_with_the_bound(&f.am);
}

#[test]
fn beyond_a_bound_allocate_refuses_with_the_bound_on_postgres() {
    if let Some((_db, am, _clock)) = pg_fixture_with("vm_size_bounds", &[sized_host()]) {
        beyond_a_bound_allocate_refuses_with_the_bound(&am);
    }
}

#[test]
fn the_advertisement_carries_each_types_bounds() {
    let f = fixture_with(&[sized_host()]);
    let ad = f.am.advertisement(false).unwrap();
    let doc = Document::parse(ad.as_bytes()).unwrap();
    let root = RSpec::new(&doc).unwrap();
    let node = root.nodes().next().unwrap();
    let bounds: Vec<(String, [Option<String>; 3])> = node
        .sliver_types()
        .filter_map(|t| {
            let xen = t.xen()?;
            let values = [xen.cores(), xen.ram(), xen.disk()].map(|v| v.map(|v| v.into_owned()));
            Some((t.name()?.into_owned(), values))
        })
        .collect();
    assert_eq!(
        bounds,
        [("emulab-xen".to_owned(), some(["4", "4096", "20"]))],
        "{ad}"
    );
}

/// One host counted as OpenNebula counts it, in hundredths of a CPU share
/// (2 CPUs = 200), whose `emulab-xen` VMs have 1 core each taking half a
/// CPU (50) and may grow to 4 cores.
fn cpu_share_host() -> ComponentRow {
    let mut row = host("h1", 200);
    row.memory_mb = 8192;
    let xen = &mut row.details.sliver_types[1];
    (xen.cpus, xen.cores, xen.max_cores) = (50, Some(1), Some(4));
    row
}

#[test]
fn a_sized_node_takes_capacity_in_the_backends_unit_and_shows_cores() {
    let f = fixture_with(&[cpu_share_host()]);
    let p = principal(7);
    // Two cores of half a CPU each: one whole CPU of the host's two.
    let two =
        f.am.allocate(&p, SLICE, &sized_request("two", "cores=\"2\""))
            .unwrap();
    assert_eq!(xen_of(&two.manifest, "two"), some(["2", "512", ""]));
    // An unsized node shows the type's single core and takes half a CPU.
    let one =
        f.am.allocate(&p, SLICE, &request(&["one"], "emulab-xen"))
            .unwrap();
    assert_eq!(xen_of(&one.manifest, "one"), some(["1", "512", ""]));
    f.am.allocate(&p, SLICE, &request(&["another"], "emulab-xen"))
        .unwrap();
    let err =
        f.am.allocate(&p, SLICE, &request(&["full"], "emulab-xen"))
            .unwrap_err()
            .answered();
    assert_eq!(
        err.code,
        GeniCode::InsufficientNodes,
        "100 + 50 + 50 of 200 are taken: {}",
        err.message
    );
}

#[test]
fn slivers_of_an_earlier_release_count_their_capacity_in_the_backends_unit() {
    use diesel::connection::SimpleConnection;
    let f = fixture_with(&[cpu_share_host()]);
    let p = principal(7);
    let allocation =
        f.am.allocate(&p, SLICE, &request(&["old"], "emulab-xen"))
            .unwrap();
    let urn = allocation.slivers[0].urn.clone();
    // What an earlier release wrote: no granted size, the CPU in cores.
    let mut sqlite = <diesel::SqliteConnection as diesel::Connection>::establish(&f.url).unwrap();
    sqlite
        .batch_execute("UPDATE slivers SET cores = NULL, ram_mb = NULL, cpus = 1;")
        .unwrap();
    let store = geni_am::store::Store::open(&f.url, 2).unwrap();
    assert_eq!(store.adopt_earlier_sizes().unwrap(), 1);
    let row = store.sliver(&urn).unwrap().unwrap();
    assert_eq!(
        (row.cpus, row.cores, row.ram_mb),
        (50, Some(1), Some(512)),
        "half a CPU, one core"
    );
    assert_eq!(store.adopt_earlier_sizes().unwrap(), 0, "once");
    // Counted in the host's unit again: three more half-CPU VMs fit, not 199.
    for name in ["a", "b", "c"] {
        f.am.allocate(&p, SLICE, &request(&[name], "emulab-xen"))
            .unwrap();
    }
    let err =
        f.am.allocate(&p, SLICE, &request(&["full"], "emulab-xen"))
            .unwrap_err()
            .answered();
    assert_eq!(err.code, GeniCode::InsufficientNodes, "{}", err.message);
}
