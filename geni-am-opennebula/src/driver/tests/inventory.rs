//! The inventory as the driver reads it from oned: usable hosts, their
//! capacity in CPU share less what others' VMs hold, hypervisor types, the
//! sliver types and images, and the parent network's address ranges.

use super::*;

#[test]
fn the_inventory_has_the_usable_hosts_types_and_images() {
    let f = fixture();
    script_inventory_of(
        &f.rpc,
        &payload("vmpool.info-empty"),
        &payload("hostpool.info"),
    );
    let inventory = f.cloud.inventory().unwrap();
    assert_eq!(
        inventory.hosts,
        [Host {
            component_id: HOST.into(),
            name: "localhost".into(),
            cpus: 800,
            memory_mb: 16384,
            max_vms: 32,
            hardware_type: "dummy-host".into(),
            available: true,
        }]
    );
    let kind = &inventory.sliver_types[0];
    assert_eq!(
        (kind.name.as_str(), kind.cpus, kind.memory_mb),
        ("small", 50, 256),
        "CPU 0.5 in hundredths, as MAX_CPU counts"
    );
    let images: Vec<&str> = kind.disk_images.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(images, ["geni-img"]);

    let disabled = payload("hostpool.info").replacen("<STATE>2</STATE>", "<STATE>4</STATE>", 1);
    let f = fixture_with(|c| c.images = vec!["not-there".into()]);
    script_inventory_of(&f.rpc, &payload("vmpool.info-empty"), &disabled);
    let inventory = f.cloud.inventory().unwrap();
    assert!(inventory.hosts.is_empty(), "a disabled host is not offered");
    assert!(inventory.sliver_types[0].disk_images.is_empty());
}

#[test]
fn an_eight_core_host_counts_sixteen_half_cpu_vms_as_the_scheduler_does() {
    let f = fixture();
    script_inventory_of(
        &f.rpc,
        &payload("vmpool.info-empty"),
        &payload("hostpool.info"),
    );
    let inventory = f.cloud.inventory().unwrap();
    let (host, kind) = (&inventory.hosts[0], &inventory.sliver_types[0]);
    assert_eq!(host.cpus / kind.cpus, 16, "MAX_CPU 800 / CPU 0.5");
}

#[test]
fn capacity_held_by_vms_not_ours_is_not_offered_and_ours_is_left_to_the_core() {
    // VM 0 (CPU 0.5, MEMORY 256) runs on the host: CPU_USAGE 50.
    let f = fixture();
    script_inventory_of(
        &f.rpc,
        &payload("vmpool.info-running"),
        &payload("hostpool.info-with-vm"),
    );
    let host = &f.cloud.inventory().unwrap().hosts[0];
    assert_eq!(
        (host.cpus, host.memory_mb),
        (750, 16128),
        "another user's VM"
    );
    let f = fixture();
    script_inventory_of(
        &f.rpc,
        &labelled_pool(0, &format!("geni-am/{TAG}")),
        &payload("hostpool.info-with-vm"),
    );
    let host = &f.cloud.inventory().unwrap().hosts[0];
    assert_eq!(
        (host.cpus, host.memory_mb),
        (800, 16384),
        "our own VM: the core counts its sliver"
    );
    let full = payload("hostpool.info").replacen(
        "<CPU_USAGE>0</CPU_USAGE>",
        "<CPU_USAGE>780</CPU_USAGE>",
        1,
    );
    let f = fixture();
    script_inventory_of(&f.rpc, &payload("vmpool.info-empty"), &full);
    let host = &f.cloud.inventory().unwrap().hosts[0];
    assert_eq!(host.cpus, 20, "7.8 CPUs held by others");
    assert!(!host.available, "0.2 free CPUs cannot take a 0.5 CPU VM");

    // A host that only this aggregate's VMs fill stays available: once
    // they are deleted the core offers it again without a refresh.
    let ours_only = payload("hostpool.info-with-vm").replacen(
        "<MAX_CPU>800</MAX_CPU>",
        "<MAX_CPU>50</MAX_CPU>",
        1,
    );
    assert_ne!(ours_only, payload("hostpool.info-with-vm"));
    let f = fixture();
    script_inventory_of(
        &f.rpc,
        &labelled_pool(0, &format!("geni-am/{TAG}")),
        &ours_only,
    );
    let host = &f.cloud.inventory().unwrap().hosts[0];
    assert_eq!(host.cpus, 50, "all of it, ours");
    assert!(
        host.available,
        "our own VM does not make the host unavailable"
    );
}

#[test]
fn hosts_are_advertised_as_their_hypervisor_unless_a_type_is_configured() {
    let kvm = payload("hostpool.info").replace("<![CDATA[dummy]]>", "<![CDATA[kvm]]>");
    for (configured, pool, expected) in [
        (None, payload("hostpool.info"), "dummy-host"),
        (None, kvm.clone(), "kvm-host"),
        (Some("pcvm"), kvm, "pcvm"),
    ] {
        let f = fixture_with(|c| c.hardware_type = configured.map(str::to_owned));
        script_inventory_of(&f.rpc, &payload("vmpool.info-empty"), &pool);
        let host = &f.cloud.inventory().unwrap().hosts[0];
        assert_eq!(host.hardware_type, expected);
    }
}

/// Scripts the reads of an inventory with an empty VM pool, the recorded
/// hosts and images.
/// Scripts one inventory read: the VM pool `vms` and host pool `hosts`,
/// then the recorded images and parent network.
fn script_inventory_of<'r>(rpc: &'r Replay, vms: &str, hosts: &str) -> &'r Replay {
    rpc.document("one.vmpool.info", vms)
        .document("one.hostpool.info", hosts)
        .recorded("one.imagepool.info", "imagepool.info")
        .recorded("one.vn.info", "vn.info")
}

fn script_inventory(rpc: &Replay) -> &Replay {
    rpc.recorded("one.vmpool.info", "vmpool.info-empty")
        .recorded("one.hostpool.info", "hostpool.info")
        .recorded("one.imagepool.info", "imagepool.info")
}

#[test]
fn the_inventory_has_the_address_ranges_of_the_links_parent_network() {
    let f = fixture();
    script_inventory(&f.rpc).recorded("one.vn.info", "vn.info");
    let ranges = f.cloud.inventory().unwrap().link_ranges.unwrap();
    assert_eq!(
        ranges.iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["10.10.0.10–10.10.0.109"],
        "AR 0: IP 10.10.0.10, SIZE 100"
    );
    let read = f.rpc.take_sent().pop().unwrap();
    assert_eq!(
        (read.method.as_str(), read.params.as_slice()),
        ("one.vn.info", [Param::Int(0)].as_slice()),
        "the configured parent_network"
    );

    let ether = payload("vn.info").replacen("<TYPE><![CDATA[IP4]]>", "<TYPE><![CDATA[ETHER]]>", 1);
    let ether = ether.replacen("<IP><![CDATA[10.10.0.10]]></IP>", "", 1);
    let f = fixture();
    script_inventory(&f.rpc).document("one.vn.info", &ether);
    let ranges = f.cloud.inventory().unwrap().link_ranges;
    assert_eq!(
        ranges,
        Some(Vec::new()),
        "an Ethernet range has no IPv4 address"
    );

    let f = fixture();
    script_inventory(&f.rpc).recorded("one.vn.info", "err.vn-info-no-such-id");
    let err = f.cloud.inventory().unwrap_err();
    assert!(
        err.to_string().contains("links.parent_network"),
        "names the key: {err}"
    );

    let f = fixture_with(|c| {
        let links = c.links.as_mut().unwrap();
        links.parent_network = None;
        links.template = Some("VN_MAD = \"bridge\"".into());
    });
    script_inventory(&f.rpc);
    assert_eq!(
        f.cloud.inventory().unwrap().link_ranges,
        None,
        "a network per link from a template holds any address"
    );
}
