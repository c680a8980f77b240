//! The VM life cycle and the cloud's bookkeeping: phases with zero and
//! non-zero delays, every action's state check with oned's texts, injected
//! boot failures, quotas and capacity limits, placement requirements, host
//! accounting, network leases and reservations, and template merging.

mod common;

use common::{Connection, P, Reply, SESSION};
use onesim::{Delays, OneSim, SimSettings};
use std::time::Duration;

const CLOCK: i64 = 1_800_000_000;
const SMALL: &str = "NAME=\"vm\"\nCPU=\"0.5\"\nMEMORY=\"256\"\nNIC=[NETWORK_ID=\"0\"]\n";

fn stepped(version: &str) -> OneSim {
    let delays = Delays::uniform(Duration::from_secs(1), Duration::from_secs(1));
    OneSim::start(SimSettings {
        version: version.into(),
        delays,
        clock: Some(CLOCK),
        listen: None,
    })
}

fn instant() -> OneSim {
    OneSim::start(SimSettings::default())
}

fn state(c: &mut Connection, id: i32) -> (i32, i32) {
    let doc =
        onesim::xml::parse(&c.call("one.vm.info", &[SESSION, P::I(id)]).text()).expect("vm parses");
    (
        doc.value_at("STATE").parse().expect("state"),
        doc.value_at("LCM_STATE").parse().expect("lcm"),
    )
}

fn tick(sim: &OneSim) {
    sim.advance_clock(Duration::from_secs(1));
}

fn allocate(c: &mut Connection, template: &str) -> i32 {
    c.call(
        "one.vm.allocate",
        &[SESSION, P::Owned(template.to_owned()), P::B(false)],
    )
    .int()
}

fn action(c: &mut Connection, name: &'static str, id: i32) -> Reply {
    c.call("one.vm.action", &[SESSION, P::S(name), P::I(id)])
}

#[test]
fn phases_with_delays() {
    let sim = stepped("7.4.0");
    let mut c = Connection::open(sim.address());
    let id = c
        .call(
            "one.template.instantiate",
            &[
                SESSION,
                P::I(0),
                P::S("n"),
                P::B(true),
                P::S(""),
                P::B(false),
            ],
        )
        .int();
    let mut seen = vec![state(&mut c, id)];
    tick(&sim);
    seen.push(state(&mut c, id));
    assert_eq!(action(&mut c, "release", id).int(), id);
    for _ in 0..4 {
        seen.push(state(&mut c, id));
        tick(&sim);
    }
    assert_eq!(
        seen,
        [(2, 0), (2, 0), (1, 0), (3, 1), (3, 2), (3, 3)],
        "HOLD stays, then PENDING → PROLOG → BOOT → RUNNING"
    );
    action(&mut c, "poweroff", id);
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(state(&mut c, id));
        tick(&sim);
    }
    action(&mut c, "resume", id);
    for _ in 0..3 {
        seen.push(state(&mut c, id));
        tick(&sim);
    }
    action(&mut c, "terminate", id);
    for _ in 0..4 {
        seen.push(state(&mut c, id));
        tick(&sim);
    }
    assert_eq!(
        seen,
        [
            (3, 3),
            (3, 18),
            (8, 0),
            (8, 0),
            (3, 20),
            (3, 3),
            (3, 3),
            (3, 12),
            (3, 11),
            (6, 0)
        ],
        "as states.txt shows"
    );
}

#[test]
fn zero_delays_reach_running_at_the_next_call() {
    let sim = instant();
    let mut c = Connection::open(sim.address());
    let id = allocate(&mut c, SMALL);
    assert_eq!(state(&mut c, id), (3, 3));
    assert_eq!(action(&mut c, "terminate-hard", id).int(), id);
    assert_eq!(state(&mut c, id), (6, 0));
    assert_eq!(
        action(&mut c, "terminate-hard", id).int(),
        id,
        "terminate on DONE is a successful no-op"
    );
}

/// Runs `name` against a VM brought to a state and returns the failure text, if any.
fn refusal(
    sim: &OneSim,
    c: &mut Connection,
    prepare: &[&'static str],
    ticks: u32,
    name: &'static str,
) -> Option<String> {
    let id = allocate(c, SMALL);
    for step in prepare {
        if *step == "wait" {
            tick(sim);
            tick(sim);
            tick(sim);
        } else {
            action(c, step, id);
        }
    }
    for _ in 0..ticks {
        tick(sim);
    }
    match action(c, name, id) {
        Reply::Ok(_) => None,
        Reply::Err(message, 2048, _) => Some(message),
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn every_action_checks_the_state() {
    let sim = stepped("7.4.0");
    let mut c = Connection::open(sim.address());
    let not_available = |name: &str, state: &str| {
        Some(format!(
            "[one.vm.action] Error performing action \"{name}\": This action is not available for state {state}"
        ))
    };
    // (preparation, extra ticks, action, expected refusal)
    let cases: [(&[&'static str], u32, &'static str, Option<String>); 16] = [
        (&[], 0, "poweroff", not_available("poweroff", "PENDING")),
        (&[], 0, "reboot", not_available("reboot", "PENDING")),
        (&[], 0, "resume", not_available("resume", "PENDING")),
        (&[], 0, "hold", None),
        (&[], 0, "release", not_available("release", "PENDING")),
        (&[], 0, "terminate", None),
        (&["wait"], 0, "resume", not_available("resume", "RUNNING")),
        (&["wait"], 0, "hold", not_available("hold", "RUNNING")),
        (&["wait"], 0, "reboot", None),
        (&["wait"], 0, "suspend", None),
        (&["wait"], 0, "undeploy", None),
        (
            &["wait", "poweroff"],
            2,
            "reboot",
            not_available("reboot", "POWEROFF"),
        ),
        (&["wait", "poweroff"], 2, "terminate", None),
        (
            &["wait", "poweroff"],
            1,
            "resume",
            not_available("resume", "SHUTDOWN_POWEROFF"),
        ),
        (
            &["wait", "terminate"],
            1,
            "terminate",
            not_available("terminate", "SHUTDOWN"),
        ),
        (&["wait", "terminate"], 1, "terminate-hard", None),
    ];
    for (prepare, ticks, name, expected) in cases {
        assert_eq!(
            refusal(&sim, &mut c, prepare, ticks, name),
            expected,
            "{name} after {prepare:?}+{ticks}"
        );
    }
    let mut c = Connection::open(sim.address());
    assert_eq!(
        action(&mut c, "explode", 0).failure(),
        (
            "[one.vm.action] Action \"explode\" is not supported".into(),
            2048
        )
    );
    assert_eq!(
        action(&mut c, "terminate", 999).failure(),
        (
            "[one.vm.action] Error getting virtual machine [999].".into(),
            1024
        )
    );
}

#[test]
fn older_releases_use_the_could_not_texts() {
    let sim = stepped("6.10.0");
    let mut c = Connection::open(sim.address());
    assert_eq!(
        refusal(&sim, &mut c, &[], 0, "poweroff"),
        Some("[one.vm.action] Error performing action \"poweroff\": Could not power off VM 0, wrong state PENDING.".into())
    );
}

#[test]
fn injected_boot_failure_and_cleanup() {
    let sim = instant();
    let mut c = Connection::open(sim.address());
    sim.set_clock(1_795_282_697);
    sim.fail_next_boots(1);
    let id = allocate(
        &mut c,
        "NAME=\"fails-to-boot\"\nCPU=\"0.1\"\nMEMORY=\"64\"\n",
    );
    let doc = onesim::xml::parse(&c.call("one.vm.info", &[SESSION, P::I(id)]).text()).expect("vm");
    assert_eq!(
        (doc.value_at("STATE"), doc.value_at("LCM_STATE")),
        ("3", "36")
    );
    assert_eq!(
        doc.value_at("USER_TEMPLATE/ERROR"),
        "Sat Nov 21 17:38:17 2026: DEPLOY: localhost:fails-to-boot:dummy"
    );
    let next = allocate(&mut c, SMALL);
    assert_eq!(state(&mut c, next), (3, 3), "only the injected boot fails");
    action(&mut c, "terminate-hard", id);
    assert_eq!(state(&mut c, id), (6, 0));
}

#[test]
fn quota_and_capacity_refusals() {
    let sim = instant();
    let mut c = Connection::open(sim.address());
    sim.set_vm_quota(Some(1));
    allocate(&mut c, SMALL);
    assert_eq!(
        c.call("one.template.instantiate", &[SESSION, P::I(0), P::S("x"), P::B(false), P::S(""), P::B(false)]).failure(),
        ("[one.template.instantiate] User [0] : user [0] limit of 1 reached for VMS quota in VM.".into(), 512)
    );
    sim.set_vm_quota(None);
    sim.set_host_capacity(0, 800, 300 * 1024);
    let big = allocate(&mut c, SMALL);
    let doc = onesim::xml::parse(&c.call("one.vm.info", &[SESSION, P::I(big)]).text()).expect("vm");
    assert_eq!(doc.value_at("STATE"), "1", "no room: stays PENDING");
    assert!(
        doc.value_at("USER_TEMPLATE/SCHED_MESSAGE")
            .ends_with(": [HOST] Not enough MEMORY on hosts: 0")
    );
    assert_eq!(
        c.call(
            "one.vm.allocate",
            &[SESSION, P::S("NAME=x\nCPU=1\n"), P::B(false)]
        )
        .failure(),
        (
            "[one.vm.allocate] MEMORY attribute must be a positive integer value.".into(),
            8192
        )
    );
}

#[test]
fn placement_requirements_and_host_accounting() {
    let sim = instant();
    let mut c = Connection::open(sim.address());
    let elsewhere = allocate(&mut c, &format!("{SMALL}SCHED_REQUIREMENTS=\"ID = 7\"\n"));
    let here = allocate(
        &mut c,
        &format!("{SMALL}SCHED_REQUIREMENTS=\"NAME = \\\"localhost\\\"\"\n"),
    );
    assert_eq!(state(&mut c, elsewhere).0, 1);
    assert_eq!(state(&mut c, here), (3, 3));
    let host =
        onesim::xml::parse(&c.call("one.host.info", &[SESSION, P::I(0)]).text()).expect("host");
    assert_eq!(
        (
            host.value_at("HOST_SHARE/CPU_USAGE"),
            host.value_at("HOST_SHARE/MEM_USAGE"),
            host.value_at("HOST_SHARE/RUNNING_VMS")
        ),
        ("50", "262144", "1")
    );
    assert_eq!(host.value_at("VMS/ID"), here.to_string());
    action(&mut c, "terminate-hard", here);
    let host =
        onesim::xml::parse(&c.call("one.host.info", &[SESSION, P::I(0)]).text()).expect("host");
    assert_eq!(host.value_at("HOST_SHARE/RUNNING_VMS"), "0");
}

fn nic_ip(c: &mut Connection, id: i32) -> String {
    let doc = onesim::xml::parse(&c.call("one.vm.info", &[SESSION, P::I(id)]).text()).expect("vm");
    doc.value_at("TEMPLATE/NIC/IP").to_owned()
}

#[test]
fn leases_are_taken_at_creation_and_freed_at_done() {
    let sim = instant();
    let mut c = Connection::open(sim.address());
    let first = allocate(&mut c, SMALL);
    assert_eq!(nic_ip(&mut c, first), "10.10.0.10");
    let wanted = allocate(
        &mut c,
        "CPU=1\nMEMORY=64\nNIC=[NETWORK_ID=0, IP=\"10.10.0.50\"]\n",
    );
    assert_eq!(nic_ip(&mut c, wanted), "10.10.0.50");
    assert_eq!(
        c.call(
            "one.vm.allocate",
            &[
                SESSION,
                P::S("CPU=1\nMEMORY=64\nNIC=[NETWORK_ID=0, IP=\"10.10.0.50\"]\n"),
                P::B(false)
            ]
        )
        .failure(),
        (
            "[one.vm.allocate] Cannot get IP/MAC lease from virtual network 0.".into(),
            16384
        )
    );
    assert_eq!(
        c.call("one.vn.delete", &[SESSION, P::I(0)]).failure().1,
        2048,
        "a network with leases in use cannot be deleted"
    );
    action(&mut c, "terminate-hard", wanted);
    c.call("one.vm.info", &[SESSION, P::I(wanted)]);
    let vnet = sim.vnet_document(0).expect("vnet");
    assert!(
        vnet.contains("<USED_LEASES>1</USED_LEASES>") && !vnet.contains("10.10.0.50"),
        "{vnet}"
    );
    let again = allocate(
        &mut c,
        "CPU=1\nMEMORY=64\nNIC=[NETWORK_ID=0, IP=\"10.10.0.50\"]\n",
    );
    assert_eq!(
        nic_ip(&mut c, again),
        "10.10.0.50",
        "a freed address can be leased again"
    );
}

#[test]
fn networks_are_reserved_allocated_and_deleted() {
    let sim = instant();
    let mut c = Connection::open(sim.address());
    let reservation = c
        .call(
            "one.vn.reserve",
            &[SESSION, P::I(0), P::S("NAME=\"slice-lan\"\nSIZE=4\n")],
        )
        .int();
    let vm = allocate(
        &mut c,
        &format!("CPU=1\nMEMORY=64\nNIC=[NETWORK_ID=\"{reservation}\"]\n"),
    );
    assert_eq!(nic_ip(&mut c, vm), "10.10.0.10");
    let parent = allocate(&mut c, SMALL);
    assert_eq!(
        nic_ip(&mut c, parent),
        "10.10.0.14",
        "the parent skips the reserved addresses"
    );
    assert_eq!(
        c.call("one.vn.delete", &[SESSION, P::I(reservation)])
            .failure()
            .1,
        2048
    );
    action(&mut c, "terminate-hard", vm);
    c.call("one.vm.info", &[SESSION, P::I(vm)]);
    assert_eq!(
        c.call("one.vn.delete", &[SESSION, P::I(reservation)]).int(),
        reservation
    );
    assert_eq!(
        c.call("one.vn.info", &[SESSION, P::I(reservation)])
            .failure()
            .1,
        1024
    );
    let lan = c
        .call(
            "one.vn.allocate",
            &[
                SESSION,
                P::S(
                    "NAME=lan\nVN_MAD=bridge\nBRIDGE=br1\nAR=[TYPE=IP4, IP=192.168.5.2, SIZE=8]\n",
                ),
                P::I(-1),
            ],
        )
        .int();
    let on_lan = allocate(&mut c, "CPU=1\nMEMORY=64\nNIC=[NETWORK=\"lan\"]\n");
    assert_eq!(nic_ip(&mut c, on_lan), "192.168.5.2");
    assert!(sim.vnet_ids().contains(&lan));
}

#[test]
fn reservations_take_the_next_block_or_the_one_at_the_asked_ip() {
    let sim = instant();
    let mut c = Connection::open(sim.address());
    let reserve = |c: &mut Connection, template: &'static str| {
        c.call("one.vn.reserve", &[SESSION, P::I(0), P::S(template)])
    };
    let first_ip = |sim: &onesim::OneSim, id: i32| {
        let doc = sim.vnet_document(id).expect("the reservation exists");
        let start = doc.find("<IP><![CDATA[").expect("an AR IP") + "<IP><![CDATA[".len();
        doc[start..start + doc[start..].find(']').expect("closed")].to_owned()
    };
    let a = reserve(&mut c, "NAME=a\nSIZE=4\n").int();
    let b = reserve(&mut c, "NAME=b\nSIZE=4\n").int();
    assert_eq!(first_ip(&sim, a), "10.10.0.10");
    assert_eq!(first_ip(&sim, b), "10.10.0.14");
    assert_eq!(c.call("one.vn.delete", &[SESSION, P::I(a)]).int(), a);
    let later = reserve(&mut c, "NAME=c\nSIZE=4\n").int();
    assert_eq!(
        first_ip(&sim, later),
        "10.10.0.18",
        "a later block, not the freed first one"
    );
    let asked = reserve(&mut c, "NAME=d\nSIZE=4\nIP=10.10.0.10\n").int();
    assert_eq!(first_ip(&sim, asked), "10.10.0.10", "the block at IP");
    for template in [
        "NAME=e\nSIZE=4\nIP=10.10.0.12\n",
        "NAME=f\nSIZE=4\nIP=10.9.0.1\n",
    ] {
        let (message, code) = reserve(&mut c, template).failure();
        assert_eq!(code, 2048, "{template}: {message}");
        assert!(message.contains("Not enough free addresses"), "{message}");
    }
}

#[test]
fn a_reservation_is_carried_by_its_parents_vlan() {
    let sim = instant();
    let mut c = Connection::open(sim.address());
    let vxlan = c
        .call(
            "one.vn.allocate",
            &[
                SESSION,
                P::S("NAME=links\nVN_MAD=vxlan\nPHYDEV=eth0\nVLAN_ID=3\nAR=[TYPE=IP4, IP=10.1.1.1, SIZE=100]\n"),
                P::I(-1),
            ],
        )
        .int();
    let vlan_of = |id: i32| {
        let doc = onesim::xml::parse(&sim.vnet_document(id).expect("the network exists"))
            .expect("the network parses");
        doc.value_at("VLAN_ID").to_owned()
    };
    assert_eq!(vlan_of(vxlan), "3");
    let reservation = c
        .call(
            "one.vn.reserve",
            &[SESSION, P::I(vxlan), P::S("NAME=lan\nSIZE=8\n")],
        )
        .int();
    assert_eq!(vlan_of(reservation), "3", "the parent's VLAN_ID");
    let untagged = c
        .call(
            "one.vn.reserve",
            &[SESSION, P::I(0), P::S("NAME=plain\nSIZE=8\n")],
        )
        .int();
    assert_eq!(vlan_of(untagged), "", "an untagged parent's stays untagged");
}

#[test]
fn instantiate_merges_the_extra_template_per_attribute() {
    let sim = instant();
    let mut c = Connection::open(sim.address());
    let extra = "<TEMPLATE><CONTEXT><SSH_PUBLIC_KEY>ssh-ed25519 AAAA a&amp;b</SSH_PUBLIC_KEY><NETWORK>YES</NETWORK></CONTEXT><LABELS>geni/s1</LABELS><GENI_SLIVER_URN>urn:publicid:IDN+x+sliver+1</GENI_SLIVER_URN></TEMPLATE>";
    let id = c
        .call(
            "one.template.instantiate",
            &[
                SESSION,
                P::I(0),
                P::S(""),
                P::B(false),
                P::S(extra),
                P::B(false),
            ],
        )
        .int();
    let doc = onesim::xml::parse(&sim.vm_document(id).expect("vm")).expect("vm parses");
    assert_eq!(doc.value_at("NAME"), format!("geni-small-{id}"));
    assert_eq!(
        doc.value_at("TEMPLATE/CONTEXT/SSH_PUBLIC_KEY"),
        "ssh-ed25519 AAAA a&b"
    );
    assert_eq!(
        doc.value_at("TEMPLATE/CONTEXT/ETH0_IP"),
        "10.10.0.10",
        "NETWORK=YES adds the ETH0 entries"
    );
    assert_eq!(
        doc.value_at("TEMPLATE/CPU"),
        "0.1",
        "the template's attributes stay"
    );
    assert_eq!(doc.value_at("USER_TEMPLATE/LABELS"), "geni/s1");
    assert_eq!(
        doc.value_at("USER_TEMPLATE/GENI_SLIVER_URN"),
        "urn:publicid:IDN+x+sliver+1"
    );
    assert_eq!(sim.received_templates(), vec![extra.to_owned()]);
    let no_nic = c
        .call(
            "one.template.instantiate",
            &[
                SESSION,
                P::I(0),
                P::S("bare"),
                P::B(false),
                P::S("NIC=[]"),
                P::B(false),
            ],
        )
        .int();
    assert!(
        onesim::xml::parse(&sim.vm_document(no_nic).expect("vm"))
            .expect("vm")
            .at("TEMPLATE/NIC")
            .is_none()
    );
    for (bad, message) in [
        (
            "CONTEXT=[A=\"x]]>\"]",
            "[one.template.instantiate] Parse error.",
        ),
        (
            "<TEMPLATE><A>x</TEMPLATE>",
            "[one.template.instantiate] Parse error: XML Template malformed.",
        ),
    ] {
        let reply = c.call(
            "one.template.instantiate",
            &[
                SESSION,
                P::I(0),
                P::S("x"),
                P::B(false),
                P::S(bad),
                P::B(false),
            ],
        );
        assert_eq!(reply.failure(), (message.to_owned(), 8192));
    }
    assert_eq!(
        c.call("one.template.instantiate", &[SESSION, P::I(0), P::S("a:b"), P::B(false), P::S(""), P::B(false)]).failure(),
        ("[one.template.instantiate] Error allocating a new virtual machine template. Invalid NAME, char ':' is not allowed".into(), 16384)
    );
}

#[test]
fn pools_filter_order_and_page() {
    let sim = instant();
    let mut c = Connection::open(sim.address());
    let ids: Vec<i32> = (0..4).map(|_| allocate(&mut c, SMALL)).collect();
    action(&mut c, "terminate-hard", ids[1]);
    let listed = |c: &mut Connection, params: [i32; 4]| -> Vec<String> {
        let mut p = vec![SESSION];
        p.extend(params.iter().map(|v| P::I(*v)));
        let pool = onesim::xml::parse(&c.call("one.vmpool.info", &p).text()).expect("pool");
        pool.children()
            .iter()
            .map(|vm| vm.value_at("ID").to_owned())
            .collect()
    };
    assert_eq!(
        listed(&mut c, [-2, -1, -1, -1]),
        ["3", "2", "0"],
        "DESC, DONE left out"
    );
    assert_eq!(listed(&mut c, [-2, -1, -1, -2]), ["3", "2", "1", "0"]);
    assert_eq!(listed(&mut c, [-2, -1, -1, 6]), ["1"]);
    assert_eq!(listed(&mut c, [-2, 2, 3, -2]), ["3", "2"], "id range");
    assert_eq!(
        listed(&mut c, [-2, 1, -2, -2]),
        ["2", "1"],
        "page of 2 from offset 1"
    );
    assert_eq!(
        c.call(
            "one.vmpool.info",
            &[SESSION, P::I(-5), P::I(-1), P::I(-1), P::I(-1)]
        )
        .failure(),
        ("[one.vmpool.info] Incorrect filter_flag".into(), 4096)
    );
    assert_eq!(
        c.call(
            "one.vmpool.info",
            &[SESSION, P::I(-2), P::I(-1), P::I(-1), P::I(12)]
        )
        .failure(),
        (
            "[one.vmpool.info] Incorrect filter_flag, state".into(),
            4096
        )
    );
    let set = onesim::xml::parse(
        &c.call("one.vmpool.infoset", &[SESSION, P::S("0,3"), P::B(true)])
            .text(),
    )
    .expect("set");
    assert_eq!(set.children().len(), 2);
    assert!(
        set.at("VM/TEMPLATE/CONTEXT").is_none() && set.at("VM/PERMISSIONS").is_some(),
        "extended bodies"
    );
}

#[test]
fn update_and_updateconf() {
    let sim = instant();
    let mut c = Connection::open(sim.address());
    let id = allocate(
        &mut c,
        &format!("{SMALL}CONTEXT=[NETWORK=YES, SSH_PUBLIC_KEY=\"old\"]\nKEEP=1\n"),
    );
    c.call(
        "one.vm.update",
        &[SESSION, P::I(id), P::S("TAG=\"a\""), P::I(1)],
    );
    let doc = onesim::xml::parse(&sim.vm_document(id).expect("vm")).expect("vm");
    assert_eq!(
        (
            doc.value_at("USER_TEMPLATE/KEEP"),
            doc.value_at("USER_TEMPLATE/TAG")
        ),
        ("1", "a"),
        "merge keeps"
    );
    c.call("one.vm.update", &[SESSION, P::I(id), P::S("TAG=\"b\"")]);
    let doc = onesim::xml::parse(&sim.vm_document(id).expect("vm")).expect("vm");
    assert_eq!(
        (
            doc.value_at("USER_TEMPLATE/KEEP"),
            doc.value_at("USER_TEMPLATE/TAG")
        ),
        ("", "b"),
        "replace drops"
    );
    assert_eq!(
        c.call("one.vm.update", &[SESSION, P::I(id), P::S("A=1"), P::I(3)])
            .failure()
            .1,
        4096
    );
    c.call(
        "one.vm.updateconf",
        &[
            SESSION,
            P::I(id),
            P::S("CONTEXT=[NETWORK=YES, SSH_PUBLIC_KEY=\"new\"]"),
            P::I(0),
        ],
    );
    let doc = onesim::xml::parse(&sim.vm_document(id).expect("vm")).expect("vm");
    assert_eq!(doc.value_at("TEMPLATE/CONTEXT/SSH_PUBLIC_KEY"), "new");
    assert_eq!(
        doc.value_at("TEMPLATE/CONTEXT/ETH0_IP"),
        "10.10.0.10",
        "generated entries survive"
    );
}

#[test]
fn a_purged_vm_vanishes() {
    let sim = instant();
    let mut c = Connection::open(sim.address());
    let id = allocate(&mut c, SMALL);
    assert!(sim.purge_vm(id));
    assert_eq!(
        c.call("one.vm.info", &[SESSION, P::I(id)]).failure(),
        (
            format!("[one.vm.info] Error getting virtual machine [{id}]."),
            1024
        )
    );
    assert!(!sim.vm_ids().contains(&id));
    assert!(
        sim.vnet_document(0)
            .expect("vnet")
            .contains("<USED_LEASES>0</USED_LEASES>")
    );
}
