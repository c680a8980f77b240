//! Links become networks of the simulated cloud: the corpus request's two
//! nodes on one LAN get one network and a NIC each with the addresses they
//! ask for, the manifest shows each interface's sliver URN, MAC and
//! address and the link's VLAN, a partial Delete keeps the network and a full Delete or expiry
//! frees it, a crash between creating a network and storing it creates no
//! second one, and the nodes' `<install>` and `<execute>` services reach
//! the VM specification — from the plan stored at Allocate, or from the
//! stored request for a sliver of an earlier release that has none.

mod core_support;
mod jobs_support;

on_both_stores!(
    a_lan_becomes_one_network_with_both_vms_and_their_addresses_in_the_manifest,
    a_partial_delete_keeps_the_network_and_a_full_delete_frees_it,
    expiry_frees_the_network,
    a_network_created_before_a_crash_is_found_again,
    the_nodes_services_reach_the_vm_specification,
    a_sliver_without_a_stored_plan_gets_it_from_its_request,
    racing_records_of_one_link_network_all_succeed,
);

use chrono::{TimeDelta, Utc};
use geni_am::core::SshAccess;
use geni_am::core::naming::link_sliver_urn;
use geni_am::model::{OperationalState as Op, Selector};
use geni_am_backend::{Compute, NetSpec};
use geni_am_backend::{ExecuteSpec, InstallSpec};
use geni_rspec::{RspecKind, Validator};
use jobs_support::{Harness, REQUEST, SLICE, corpus, fast_jobs};

/// The two slivers (romeo first) once both VMs exist.
fn provisioned(harness: &mut Harness, expires: chrono::DateTime<Utc>) -> Vec<String> {
    let urns = harness.provision(expires);
    harness.start(fast_jobs());
    for urn in &urns {
        harness.wait_state(urn, Op::NotReady);
    }
    urns
}

fn a_lan_becomes_one_network_with_both_vms_and_their_addresses_in_the_manifest(
    mut harness: Harness,
) {
    let urns = provisioned(&mut harness, Utc::now() + TimeDelta::days(1));
    let networks = harness.cloud.networks();
    assert_eq!(networks.len(), 1, "one network for link-0: {networks:?}");
    let (handle, tag) = &networks[0];
    let request_id = harness.store.sliver(&urns[0]).unwrap().unwrap().request_id;
    assert_eq!(
        tag,
        &link_sliver_urn(jobs_support::AUTHORITY, &request_id, "link-0")
    );
    let mut asked = Vec::new();
    for urn in &urns {
        let spec = harness.cloud.spec_of(urn).unwrap();
        assert_eq!(spec.networks.len(), 1, "{spec:?}");
        assert_eq!(&spec.networks[0].network, handle, "both VMs on the network");
        asked.push(spec.networks[0].ip.clone().unwrap());
        harness.act(urn, "geni_start", None);
    }
    asked.sort();
    assert_eq!(
        asked,
        ["10.10.0.100", "10.10.0.101"],
        "the request's addresses"
    );
    for urn in &urns {
        harness.wait_state(urn, Op::Ready);
    }
    let manifest = harness
        .aggregate
        .describe(&Selector::Slice(SLICE.into()))
        .unwrap()
        .manifest;
    for (node, interface, ip) in [
        (&urns[0], "interface-1", "10.10.0.100"),
        (&urns[1], "interface-0", "10.10.0.101"),
    ] {
        let sliver_id = geni_am::core::naming::interface_sliver_urn(node, interface);
        assert!(
            manifest.contains(&format!(
                "client_id=\"{interface}\" sliver_id=\"{sliver_id}\""
            )),
            "{manifest}"
        );
        assert!(
            manifest.contains(&format!(
                "address=\"{ip}\" netmask=\"255.255.255.0\" type=\"ipv4\"/>"
            )),
            "the requested address is honoured: {manifest}"
        );
    }
    assert_eq!(
        manifest.matches("<ip ").count(),
        2,
        "one <ip> per interface, the request's replaced by the VM's: {manifest}"
    );
    assert!(
        manifest.contains("mac_address=\"02:00:0a:0a:00:64\""),
        "{manifest}"
    );
    assert!(
        manifest.contains("vlantag=\"100\""),
        "the VLAN the simulated cloud carries the link on: {manifest}"
    );
    let validator = Validator::new().unwrap();
    validator
        .validate_as(manifest.as_bytes(), RspecKind::Manifest)
        .unwrap();

    // Through a gateway: logins name it, a jFed proxy leads to each VM.
    let ssh = SshAccess {
        port: 2222,
        gateway: Some(("bastion.geni-am.test".into(), 2200)),
    };
    let gated = jobs_support::aggregate_on(&harness.store, ssh)
        .describe(&Selector::Slice(SLICE.into()))
        .unwrap()
        .manifest;
    let logins = gated
        .matches("hostname=\"bastion.geni-am.test\" port=\"2200\"")
        .count();
    assert_eq!(logins, 2, "one gateway login per node: {gated}");
    for urn in &urns {
        let seen = harness
            .store
            .sliver(urn)
            .unwrap()
            .unwrap()
            .annotations
            .value()
            .clone();
        let address = seen.address.expect("the control address is recorded");
        let proxy =
            format!("proxy=\"alice@bastion.geni-am.test:2200\" for=\"alice@{address}:2222\"");
        assert!(gated.contains(&proxy), "{proxy} in {gated}");
    }
    assert!(
        gated.contains("alice@laptop"),
        "the users' keys stay: {gated}"
    );
    validator
        .validate_as(gated.as_bytes(), RspecKind::Manifest)
        .unwrap();
}

fn a_partial_delete_keeps_the_network_and_a_full_delete_frees_it(mut harness: Harness) {
    let urns = provisioned(&mut harness, Utc::now() + TimeDelta::days(1));
    let principal_slice = Selector::Slivers {
        slice_urn: SLICE.into(),
        urns: vec![urns[0].clone()],
    };
    harness.delete_selected(&principal_slice);
    harness.wait_cloud("romeo's VM destroyed", |cloud| {
        cloud.list_vms().unwrap().len() == 1
    });
    wait_jobs_done(&harness, &urns[0]);
    assert_eq!(
        harness.cloud.networks().len(),
        1,
        "juliet still uses link-0"
    );
    harness.delete(SLICE);
    harness.wait_cloud("no network left", |cloud| cloud.networks().is_empty());
    assert!(harness.cloud.list_vms().unwrap().is_empty());
    let request_id = harness.store.sliver(&urns[0]).unwrap().unwrap().request_id;
    let tag = link_sliver_urn(jobs_support::AUTHORITY, &request_id, "link-0");
    harness.wait_for(&urns[1], "its network forgotten", |_| {
        harness.store.link_network(&tag).unwrap().is_none()
    });
}

fn expiry_frees_the_network(mut harness: Harness) {
    provisioned(&mut harness, Utc::now() + TimeDelta::seconds(3));
    assert_eq!(harness.cloud.networks().len(), 1);
    harness.wait_cloud("the expired slice's network freed", |cloud| {
        cloud.networks().is_empty() && cloud.list_vms().unwrap().is_empty()
    });
}

fn a_network_created_before_a_crash_is_found_again(mut harness: Harness) {
    let urns = harness.provision(Utc::now() + TimeDelta::days(1));
    let request_id = harness.store.sliver(&urns[0]).unwrap().unwrap().request_id;
    let tag = link_sliver_urn(jobs_support::AUTHORITY, &request_id, "link-0");
    // A worker created the network, then died before storing its handle.
    let first = harness
        .cloud
        .create_network(&NetSpec {
            tag: tag.clone(),
            name: "link-0".into(),
            addresses: Vec::new(),
        })
        .unwrap()
        .handle;
    assert!(harness.store.link_network(&tag).unwrap().is_none());
    harness.start(fast_jobs());
    for urn in &urns {
        harness.wait_state(urn, Op::NotReady);
        let spec = harness.cloud.spec_of(urn).unwrap();
        assert_eq!(spec.networks[0].network, first);
    }
    assert_eq!(harness.cloud.networks(), [(first.clone(), tag.clone())]);
    assert_eq!(
        harness.store.link_network(&tag).unwrap().unwrap().handle,
        first.0
    );
}

/// Waits until every job of `urn` is done.
fn wait_jobs_done(harness: &Harness, urn: &str) {
    harness.wait_for(urn, "without pending jobs", |_| {
        harness
            .store
            .jobs_of_sliver(urn)
            .unwrap()
            .iter()
            .all(|job| job.state.as_str() == "done")
    });
}

fn the_nodes_services_reach_the_vm_specification(harness: Harness) {
    services_reach_the_vm(harness, false);
}

fn a_sliver_without_a_stored_plan_gets_it_from_its_request(harness: Harness) {
    services_reach_the_vm(harness, true);
}

/// Provisions the corpus request with services on romeo and checks the VM
/// specifications; with `forget_plans`, the slivers lose their stored plans
/// first, as slivers allocated by an earlier release have none.
fn services_reach_the_vm(mut harness: Harness, forget_plans: bool) {
    let request = std::fs::read_to_string(corpus().join(REQUEST)).unwrap();
    let empty = "<services xmlns=\"http://www.geni.net/resources/rspec/3\"/>";
    assert!(
        request.contains(empty),
        "the corpus request has empty services"
    );
    let services = "<services xmlns=\"http://www.geni.net/resources/rspec/3\">\
        <install url=\"https://files.example.org/lab.tar.gz\" install_path=\"/local\"/>\
        <execute shell=\"bash\" command=\"sudo /local/lab/setup.sh &amp;&amp; echo $HOME\"/>\
        </services>";
    let document = request.replacen(empty, services, 1);
    let urns = harness.provision_document(SLICE, &document, Utc::now() + TimeDelta::days(1));
    for urn in urns.iter().filter(|_| forget_plans) {
        let read = harness.store.sliver(urn).unwrap().unwrap();
        assert!(read.plan.is_some(), "Allocate stores a plan");
        let mut row = read.clone();
        row.plan = None;
        harness
            .store
            .write(|conn| geni_am::store::slivers::save(conn, &read, &row))
            .unwrap();
    }
    harness.start(fast_jobs());
    for urn in &urns {
        harness.wait_state(urn, Op::NotReady);
    }
    let romeo = harness.cloud.spec_of(&urns[0]).unwrap();
    assert_eq!(romeo.name, "romeo");
    assert_eq!(
        romeo.networks[0].ip.as_deref(),
        Some("10.10.0.100"),
        "{romeo:?}"
    );
    assert_eq!(
        romeo.install,
        [InstallSpec {
            url: "https://files.example.org/lab.tar.gz".into(),
            install_path: "/local".into(),
        }]
    );
    assert_eq!(
        romeo.execute,
        [ExecuteSpec {
            shell: "bash".into(),
            command: "sudo /local/lab/setup.sh && echo $HOME".into(),
        }]
    );
    let juliet = harness.cloud.spec_of(&urns[1]).unwrap();
    assert!(juliet.install.is_empty() && juliet.execute.is_empty());
}

fn racing_records_of_one_link_network_all_succeed(harness: Harness) {
    use geni_am::store::networks::LinkNetworkRow;
    use std::sync::{Arc, Barrier};
    harness.provision(Utc::now() + TimeDelta::days(1));
    let barrier = Arc::new(Barrier::new(2));
    let racers: Vec<_> = (0..2)
        .map(|racer| {
            let store = harness.store.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                for link in 0..100 {
                    let tag = format!("urn:publicid:IDN+x+sliver+race.link-{link}");
                    let row =
                        LinkNetworkRow::new(&tag, SLICE, "l", &racer.to_string(), None, Utc::now());
                    store.record_link_network(&row).unwrap();
                }
            })
        })
        .collect();
    for racer in racers {
        racer.join().expect("every record succeeds");
    }
    assert_eq!(harness.store.link_networks_of(SLICE).unwrap().len(), 100);
}
