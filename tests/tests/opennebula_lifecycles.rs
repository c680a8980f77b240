//! The AM API lifecycles with the OpenNebula backend, against the
//! OpenNebula simulator playing 5.x, 6.x and 7.x: the v3 lifecycle with
//! what the simulator received (the configured template, on hold, the
//! template's CONTEXT kept and the users' keys added), untrusted request
//! text that stays data, the v2 lifecycle, a LAN link (its network, NICs,
//! addresses and the parent's VLAN in the manifest, freed on Delete), a
//! link address outside the parent network refused at Allocate, and the
//! operational actions.

use base64::Engine;
use chrono::{Duration, Utc};
use geni_am_tests::aggregate::{ALICE, DEMO_SLICE};
use geni_am_tests::calls::{call, creds, s, st, strs, users, with_version};
use geni_am_tests::database::Store;
use geni_am_tests::flows::{ALICE_KEY, V2Slice, urns};
use geni_am_tests::opennebula::{self as one, POWEROFF, RUNNING};
use geni_am_tests::requests::{self, node_client_ids};
use geni_xmlrpc::Value;
use onesim::OneSim;

geni_am_tests::on_opennebula!(
    v3_lifecycle,
    untrusted_text,
    v2_lifecycle,
    lan_link,
    link_address_outside_the_parent,
    actions
);

/// STATE of a VM on hold.
const HOLD: i32 = 2;

fn v3_lifecycle(version: &str, store: Store) {
    let sim = one::start_sim(version);
    let aggregate = one::start_aggregate(store, &sim);
    let mut client = aggregate.client(3);
    let user_credential = aggregate.read("alice-user-cred.xml");

    let ad = call(
        &mut client,
        "ListResources",
        vec![creds(&user_credential), with_version(vec![])],
    )
    .ok();
    let ad = ad.text();
    assert_eq!(ad.matches("<node ").count(), 2, "both hosts: {ad}");
    for expected in [
        "localhost",
        one::SECOND_HOST,
        requests::SLIVER_TYPE,
        "geni-img",
    ] {
        assert!(ad.contains(expected), "{expected} advertised: {ad}");
    }

    let mut slice = one::demo_slice(&aggregate, &mut client);
    let allocated = slice.allocate(&requests::vms(&["vm1", "vm2"]));
    let sliver_urns = urns(&allocated.slivers());
    slice.provision(&[DEMO_SLICE]);
    for urn in &sliver_urns {
        one::wait_for("the VM created", || one::vms_of(&sim, urn).len() == 1);
        let vm = one::vm_of(&sim, urn);
        assert_eq!(vm.state, i64::from(HOLD), "created on hold: {vm:?}");
        assert_eq!(vm.template_id, Some(i64::from(one::TEMPLATE_ID)));
        assert_keeps_template_context(&sim, &vm, ALICE_KEY);
    }

    slice.action(&[DEMO_SLICE], "geni_start").ok();
    slice.wait_ready(&[DEMO_SLICE]);
    for urn in &sliver_urns {
        let vm = one::vm_of(&sim, urn);
        assert_eq!((vm.state, vm.lcm_state), (3, 3), "running: {vm:?}");
    }
    let described = slice.describe(&[DEMO_SLICE]).ok();
    let manifest = described.rspec();
    assert_eq!(node_client_ids(&manifest), ["vm1", "vm2"]);
    assert!(manifest.contains("<login "), "logins: {manifest}");
    assert!(manifest.contains(ALICE_KEY), "alice's key: {manifest}");

    let until = Utc::now() + Duration::days(2);
    let renewed = slice
        .renew(&[DEMO_SLICE], &geni_am::time::format(&until))
        .ok();
    assert_eq!(urns(&renewed.slivers()), sliver_urns);

    slice.delete(&[DEMO_SLICE]);
    for urn in &sliver_urns {
        one::wait_terminated(&sim, urn);
    }
}

/// The VM's CONTEXT keeps every entry of the template's CONTEXT (the
/// site's entry with its value) and carries `key` in `SSH_PUBLIC_KEY`.
fn assert_keeps_template_context(sim: &OneSim, vm: &geni_am_opennebula::docs::VmDoc, key: &str) {
    let template = sim.template_document(0).expect("template 0 exists");
    let template = onesim::xml::parse(&template).expect("the template parses");
    let context = template
        .at("TEMPLATE/CONTEXT")
        .expect("the template has a CONTEXT");
    let template_context: Vec<_> = context
        .children()
        .iter()
        .map(|entry| (entry.name.clone(), entry.value().to_owned()))
        .collect();
    assert!(template_context.len() >= 3, "{template_context:?}");
    for (name, value) in &template_context {
        let kept = one::context_value(vm, name)
            .unwrap_or_else(|| panic!("template CONTEXT entry {name} dropped: {vm:?}"));
        if name != "SSH_PUBLIC_KEY" {
            assert_eq!(kept, value, "CONTEXT {name} changed");
        }
    }
    assert_eq!(
        one::context_value(vm, one::SITE_ENTRY.0),
        Some(one::SITE_ENTRY.1)
    );
    let keys = one::context_value(vm, "SSH_PUBLIC_KEY").unwrap_or_default();
    assert!(
        keys.contains(key),
        "the user's key in the CONTEXT: {keys:?}"
    );
}

/// Text that would break or extend an OpenNebula template.
const HOSTILE: &str = "x\"] , EVIL = \"1\" $USER[PASSWORD] <b>\n";

fn untrusted_text(version: &str, store: Store) {
    let sim = one::start_sim(version);
    let aggregate = one::start_aggregate(store, &sim);
    let mut client = aggregate.client(3);
    let mut slice = one::demo_slice(&aggregate, &mut client);
    let client_id = HOSTILE.trim_end();
    let escaped = client_id
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let request = requests::vms(&["placeholder"]).replace("placeholder", &escaped);
    let allocated = slice.allocate(&request);
    let sliver_urn = urns(&allocated.slivers()).remove(0);
    let hostile_key = format!("ssh-ed25519 AAAAC3Nza{HOSTILE}tail");
    let options = with_version(vec![("geni_users", users(ALICE, &hostile_key))]);
    call(
        slice.client,
        "Provision",
        vec![strs(&[DEMO_SLICE]), creds(&slice.credential), options],
    )
    .ok();
    one::wait_for("the VM created", || {
        one::vms_of(&sim, &sliver_urn).len() == 1
    });
    let vm = one::vm_of(&sim, &sliver_urn);
    assert_eq!(sim.vm_ids().len(), 1, "exactly one VM");
    for (name, value) in vm.context.iter().chain(&vm.user_template) {
        assert!(!name.contains("EVIL"), "attribute {name} injected: {vm:?}");
        if !name.ends_with("_BASE64") {
            assert!(
                !value.contains("EVIL") && !value.contains("$USER[PASSWORD]"),
                "{name} carries the hostile text raw: {value:?}"
            );
        }
    }
    let base64 = base64::engine::general_purpose::STANDARD;
    let script = one::context_value(&vm, "START_SCRIPT_BASE64").expect("a start script");
    let script = base64.decode(script).expect("the start script is base64");
    let script = String::from_utf8(script).expect("the start script is UTF-8");
    assert!(
        script.contains(&base64.encode(&hostile_key)),
        "the hostile key reaches the VM whole, as base64 data: {script}"
    );
    let described = slice.describe(&[DEMO_SLICE]).ok();
    assert_eq!(node_client_ids(&described.rspec()).len(), 1);
    slice.delete(&[DEMO_SLICE]);
}

fn v2_lifecycle(version: &str, store: Store) {
    let sim = one::start_sim(version);
    let aggregate = one::start_aggregate(store, &sim);
    let mut client = aggregate.client(2);
    let slice_creds = Value::Array(vec![s(&aggregate.read("demo-slice-cred.xml"))]);
    let created = call(
        &mut client,
        "CreateSliver",
        vec![
            s(DEMO_SLICE),
            slice_creds.clone(),
            s(&requests::vms(&["pc1"])),
            users(ALICE, ALICE_KEY),
            st(vec![]),
        ],
    )
    .ok();
    assert_eq!(node_client_ids(created.text()), ["pc1"]);
    let mut slice = V2Slice {
        client: &mut client,
        credentials: slice_creds,
    };
    one::wait_for("SliverStatus ready", || {
        let answer = slice.status().ok();
        let overall = geni_xmlrpc::as_str(answer.member("geni_status")).unwrap_or_default();
        assert_ne!(overall, "failed", "{answer:?}");
        overall == "ready"
    });
    assert_eq!(one::vms(&sim).len(), 1);
    let vm = one::vms(&sim).remove(0);
    let vm_urn = one::tag_of(&vm).expect("the VM carries the tag").to_owned();
    assert_eq!((vm.state, vm.lcm_state), (3, 3), "running: {vm:?}");
    assert_keeps_template_context(&sim, &vm, ALICE_KEY);

    slice.renew(&geni_am::time::format(&(Utc::now() + Duration::days(2))));
    slice.delete();
    one::wait_terminated(&sim, &vm_urn);
    assert_ne!(slice.status().code, 0, "SliverStatus after DeleteSliver");
}

fn lan_link(version: &str, store: Store) {
    let sim = one::start_sim(version);
    let aggregate = one::start_aggregate(store, &sim);
    let mut client = aggregate.client(3);
    let mut slice = one::demo_slice(&aggregate, &mut client);
    // Twice: oned hands a later reservation a later block of the parent,
    // the link must still get the addresses its request asks for.
    for round in 0..2 {
        let (sliver_urns, link) = one::lan_up(&sim, &mut slice, &["a", "b"]);
        assert_eq!(link.parent_network_id, Some(i64::from(one::PARENT_NETWORK)));
        assert_eq!(link.vlan_id, Some(one::PARENT_VLAN_ID), "the parent's VLAN");
        let manifest = slice.describe(&[DEMO_SLICE]).ok().rspec();
        assert!(
            manifest.contains(&format!("vlantag=\"{}\"", one::PARENT_VLAN_ID)),
            "the link's real VLAN in the manifest: {manifest}"
        );
        let mut link_ips = Vec::new();
        for urn in &sliver_urns {
            let vm = one::vm_of(&sim, urn);
            let nic = vm
                .nics
                .iter()
                .find(|nic| nic.network_id == Some(link.id))
                .unwrap_or_else(|| panic!("a NIC on the link network: {vm:?}"));
            let ip = nic.ip.as_deref().expect("the NIC has an address");
            let mac = nic.mac.as_deref().expect("the NIC has a MAC");
            link_ips.push(ip.to_owned());
            assert_eq!(
                manifest.matches(&format!("address=\"{ip}\"")).count(),
                1,
                "{ip} once in the manifest: {manifest}"
            );
            assert!(
                manifest.contains(&format!("mac_address=\"{mac}\"")),
                "{mac} in the manifest: {manifest}"
            );
        }
        link_ips.sort();
        assert_eq!(
            link_ips,
            [requests::lan_address(0), requests::lan_address(1)],
            "round {round}: the requested addresses"
        );

        slice.delete(&[DEMO_SLICE]);
        for urn in &sliver_urns {
            one::wait_terminated(&sim, urn);
        }
        one::wait_network_gone(&sim, link.id);
    }
}

fn link_address_outside_the_parent(version: &str, store: Store) {
    let sim = one::start_sim(version);
    let aggregate = one::start_aggregate(store, &sim);
    let mut client = aggregate.client(3);
    let mut slice = one::demo_slice(&aggregate, &mut client);
    let networks = sim.vnet_ids();
    let outside = requests::vms_on_lan(&["a", "b"]).replace(
        &format!("address=\"{}\"", requests::lan_address(0)),
        "address=\"10.9.9.9\"",
    );
    let reply = slice.try_allocate(&outside);
    assert_eq!(reply.code, 1, "BADARGS: {}", reply.output);
    for part in ["`lan0`", "10.9.9.9", "10.1.1.1–10.1.1.100"] {
        assert!(reply.output.contains(part), "{part} in: {}", reply.output);
    }
    let status = call(
        slice.client,
        "Status",
        vec![strs(&[&slice.urn]), creds(&slice.credential), st(vec![])],
    );
    assert!(
        status.code != 0 || status.slivers().is_empty(),
        "nothing allocated: {status:?}"
    );
    assert!(one::vms(&sim).is_empty(), "no VM created");
    assert_eq!(sim.vnet_ids(), networks, "no network reserved");
    slice.allocate(&requests::vms_on_lan(&["a", "b"]));
}

fn actions(version: &str, store: Store) {
    let sim = one::start_sim(version);
    let aggregate = one::start_aggregate(store, &sim);
    let mut client = aggregate.client(3);
    let mut slice = one::demo_slice(&aggregate, &mut client);
    let allocated = slice.allocate(&requests::vms(&["node"]));
    let urn = urns(&allocated.slivers()).remove(0);
    one::bring_up(&mut slice);
    let id = one::vm_of(&sim, &urn).id as i32;
    let state = || sim.vm_state(id).expect("the VM exists");

    slice.action(&[DEMO_SLICE], "geni_stop").ok();
    one::wait_for("the VM powered off", || state().0 == POWEROFF);
    slice.wait_operational(&[DEMO_SLICE], "geni_notready");

    slice.action(&[DEMO_SLICE], "geni_start").ok();
    one::wait_for("the VM running again", || state() == RUNNING);
    slice.wait_ready(&[DEMO_SLICE]);

    let last_action = || sim.vm_last_action(id).expect("the VM exists");
    slice.action(&[DEMO_SLICE], "geni_restart").ok();
    one::wait_for("the reboot seen by the simulator", || {
        last_action() == REBOOT
    });
    slice.wait_ready(&[DEMO_SLICE]);

    let bob_key =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBobBobBobBobBobBobBobBobBobBobBobBobBobBobB bob@e2e";
    let bob = "urn:publicid:IDN+geni-am.test+user+bob";
    let options = st(vec![("geni_users", users(bob, bob_key))]);
    call(
        slice.client,
        "PerformOperationalAction",
        vec![
            strs(&[DEMO_SLICE]),
            creds(&slice.credential),
            s("geni_update_users"),
            options,
        ],
    )
    .ok();
    let base64 = base64::engine::general_purpose::STANDARD;
    let bob_login = format!("geni_user bob {}\n", base64.encode(bob_key));
    one::wait_for("bob's login in the CONTEXT", || {
        let vm = one::vm_of(&sim, &urn);
        one::context_value(&vm, "START_SCRIPT_BASE64")
            .and_then(|script| base64.decode(script).ok())
            .is_some_and(|script| String::from_utf8_lossy(&script).contains(&bob_login))
    });
    let vm = one::vm_of(&sim, &urn);
    let direct = one::context_value(&vm, "SSH_PUBLIC_KEY").unwrap_or_default();
    assert!(
        !direct.contains(bob_key),
        "bob's key is not on the USERNAME login: {direct:?}"
    );
    slice.wait_ready(&[DEMO_SLICE]);
    slice.delete(&[DEMO_SLICE]);
}

/// HISTORY ACTION of a reboot.
const REBOOT: i32 = 15;
