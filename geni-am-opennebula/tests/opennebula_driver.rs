//! The OpenNebula driver over its real HTTP client against the OpenNebula
//! simulator (`onesim`) of each server generation: the whole life of a VM
//! on a link network through the `Compute` trait, each user's keys on their
//! own login, an injected boot failure, a quota refusal, and the XML-RPC
//! calls one VM costs.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use geni_am_backend::{
    Compute, ErrorClass, ExecuteSpec, NetSpec, NicSpec, UserKeys, VmHandle, VmSpec, VmState,
};
use geni_am_opennebula::OpenNebulaCloud;
use geni_am_opennebula::config::{OneConfig, SAMPLE_SECTION};
use onesim::{OneSim, SimSettings};
use std::collections::BTreeMap;

/// The simulator's clock is driven by the test; with zero delays each
/// transition needs a few observations at most.
const MAX_POLLS: usize = 20;

/// The methods the driver calls.
const METHODS: [&str; 12] = [
    "one.system.version",
    "one.hostpool.info",
    "one.imagepool.info",
    "one.template.info",
    "one.template.instantiate",
    "one.vmpool.info",
    "one.vm.info",
    "one.vm.action",
    "one.vm.updateconf",
    "one.vnpool.info",
    "one.vn.reserve",
    "one.vn.delete",
];

fn simulator(version: &str) -> OneSim {
    OneSim::start(SimSettings {
        version: version.into(),
        ..SimSettings::default()
    })
}

fn cloud(sim: &OneSim) -> OpenNebulaCloud {
    let mut config: OneConfig = toml::from_str(SAMPLE_SECTION).unwrap();
    config.endpoint = sim.endpoint();
    config.domain = Some("vms.example.org".into());
    OpenNebulaCloud::connect(&config, "am.example").unwrap()
}

fn spec(tag: &str, host: &str) -> VmSpec {
    VmSpec {
        size: None,
        tag: tag.into(),
        name: "node-0".into(),
        host: Some(host.into()),
        sliver_type: "small".into(),
        disk_image: Some("geni-img".into()),
        users: vec![UserKeys {
            urn: "urn:publicid:IDN+ch.example+user+alice".into(),
            keys: vec!["ssh-ed25519 AAAA alice".into()],
        }],
        networks: Vec::new(),
        exclusive: false,
        install: Vec::new(),
        execute: vec![ExecuteSpec {
            shell: "sh".into(),
            command: "echo $HOME > /tmp/home".into(),
        }],
    }
}

/// Observes `vm` until it reaches `wanted`; the states seen on the way.
fn wait_for(cloud: &OpenNebulaCloud, vm: &VmHandle, wanted: VmState) -> Vec<VmState> {
    let mut seen = Vec::new();
    for _ in 0..MAX_POLLS {
        let state = cloud.observe(vm).unwrap().state;
        seen.push(state);
        if state == wanted {
            return seen;
        }
    }
    panic!("never {wanted:?}: {seen:?}");
}

fn total_calls(sim: &OneSim) -> u64 {
    METHODS.iter().map(|m| sim.call_count(m)).sum()
}

#[test]
fn a_vm_lives_and_dies_on_every_server_generation() {
    for version in ["5.10.0", "6.10.0", "7.4.0"] {
        let sim = simulator(version);
        let cloud = cloud(&sim);
        let inventory = cloud.inventory().unwrap();
        let host = &inventory.hosts[0].component_id;
        let net = cloud
            .create_network(&NetSpec {
                tag: "urn:publicid:IDN+am.example+sliver+lan".into(),
                name: "lan".into(),
                addresses: Vec::new(),
            })
            .unwrap()
            .handle;
        let mut spec = spec("urn:publicid:IDN+am.example+sliver+1", host);
        spec.networks = vec![NicSpec {
            network: net.clone(),
            ip: None,
        }];
        let vm = cloud.create_vm(&spec).unwrap();
        assert_eq!(
            cloud.create_vm(&spec).unwrap(),
            vm,
            "{version}: one VM per tag"
        );
        assert_eq!(sim.call_count("one.template.instantiate"), 1);
        let seen = cloud.observe(&vm).unwrap();
        assert_eq!(seen.state, VmState::Stopped, "{version}: created on hold");
        assert_eq!(seen.addresses.len(), 2, "{version}: {seen:?}");
        assert_eq!(seen.addresses[1].network.as_ref(), Some(&net));
        assert_eq!(seen.hostname, format!("node-0-{}.vms.example.org", vm.0));

        cloud.start(&vm).unwrap();
        wait_for(&cloud, &vm, VmState::Running);
        let bob = UserKeys {
            urn: "urn:publicid:IDN+ch.example+user+bob".into(),
            keys: vec!["ssh-ed25519 BBBB bob".into()],
        };
        cloud.update_users(&vm, &[bob]).unwrap();
        assert_eq!(
            guest_accounts(&sim, &vm)["bob"],
            ["ssh-ed25519 BBBB bob"],
            "{version}: the running VM's CONTEXT updated"
        );
        cloud.stop(&vm).unwrap();
        wait_for(&cloud, &vm, VmState::Stopped);
        cloud.start(&vm).unwrap();
        wait_for(&cloud, &vm, VmState::Running);
        cloud.restart(&vm).unwrap();
        assert_eq!(cloud.list_vms().unwrap().len(), 1);

        cloud.destroy(&vm).unwrap();
        wait_for(&cloud, &vm, VmState::Gone);
        cloud.destroy(&vm).unwrap();
        cloud.destroy_network(&net).unwrap();
        cloud.destroy_network(&net).unwrap();
        assert!(cloud.list_vms().unwrap().is_empty(), "{version}");
    }
}

/// The accounts a guest booted with the VM's CONTEXT ends up with, and
/// their keys: OpenNebula's contextualization installs `SSH_PUBLIC_KEY`
/// on `USERNAME`, and the start script's `geni_user LOGIN KEYS` lines
/// write each login's keys (base64).
fn guest_accounts(sim: &OneSim, vm: &VmHandle) -> BTreeMap<String, Vec<String>> {
    let document = sim.vm_document(vm.0.parse().unwrap()).unwrap();
    let doc = geni_am_opennebula::docs::parse_vm(&document).unwrap();
    let context = |key: &str| {
        doc.context
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.clone())
    };
    let mut accounts: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut add = |login: &str, keys: &str| {
        let known = accounts.entry(login.to_owned()).or_default();
        for key in keys
            .lines()
            .filter(|k| !known.iter().any(|o| o == k))
            .collect::<Vec<_>>()
        {
            known.push(key.to_owned());
        }
    };
    if let (Some(login), Some(keys)) = (context("USERNAME"), context("SSH_PUBLIC_KEY")) {
        add(&login, &keys);
    }
    let script = BASE64
        .decode(context("START_SCRIPT_BASE64").unwrap())
        .unwrap();
    for line in String::from_utf8(script).unwrap().lines() {
        if let Some(["geni_user", login, keys]) = line.split(' ').collect::<Vec<_>>().get(..) {
            add(
                login,
                &String::from_utf8(BASE64.decode(keys).unwrap()).unwrap(),
            );
        }
    }
    accounts
}

#[test]
fn each_user_gets_their_own_login_at_creation_and_on_update() {
    let user = |urn: &str, keys: &[&str]| UserKeys {
        urn: urn.into(),
        keys: keys.iter().map(|k| k.to_string()).collect(),
    };
    let alice = "urn:publicid:IDN+ch.example+user+alice";
    for version in ["5.10.0", "6.10.0", "7.4.0"] {
        let sim = simulator(version);
        let cloud = cloud(&sim);
        let host = cloud.inventory().unwrap().hosts[0].component_id.clone();
        let mut spec = spec("urn:publicid:IDN+am.example+sliver+u", &host);
        spec.users = vec![
            user(alice, &["ssh-ed25519 AAAA alice"]),
            user(
                "urn:publicid:IDN+ch.example+user+bob",
                &["ssh-ed25519 BBBB bob"],
            ),
            user(
                "urn:publicid:IDN+other.example+user+Alice",
                &["ssh-ed25519 CCCC alice2"],
            ),
        ];
        let vm = cloud.create_vm(&spec).unwrap();
        let expected = |entries: &[(&str, &[&str])]| -> BTreeMap<String, Vec<String>> {
            entries
                .iter()
                .map(|(login, keys)| {
                    (
                        login.to_string(),
                        keys.iter().map(|k| k.to_string()).collect(),
                    )
                })
                .collect()
        };
        assert_eq!(
            guest_accounts(&sim, &vm),
            expected(&[
                (
                    "alice",
                    &["ssh-ed25519 AAAA alice", "ssh-ed25519 CCCC alice2"]
                ),
                ("bob", &["ssh-ed25519 BBBB bob"]),
            ]),
            "{version}: each login holds only its users' keys, shared by same-named users"
        );

        cloud.start(&vm).unwrap();
        wait_for(&cloud, &vm, VmState::Running);
        let carol = user(
            "urn:publicid:IDN+ch.example+user+carol",
            &["ssh-ed25519 DDDD carol"],
        );
        cloud
            .update_users(&vm, &[user(alice, &["ssh-ed25519 EEEE alice-new"]), carol])
            .unwrap();
        assert_eq!(
            guest_accounts(&sim, &vm),
            expected(&[
                (
                    "alice",
                    &["ssh-ed25519 EEEE alice-new", "ssh-ed25519 CCCC alice2"]
                ),
                ("bob", &["ssh-ed25519 BBBB bob"]),
                ("carol", &["ssh-ed25519 DDDD carol"]),
            ]),
            "{version}: geni_update_users keeps the logins apart"
        );
        cloud.destroy(&vm).unwrap();
    }
}

#[test]
fn a_sized_vm_is_instantiated_at_the_granted_size() {
    for version in ["5.10.0", "6.10.0", "7.4.0"] {
        let sim = simulator(version);
        let cloud = cloud(&sim);
        let host = cloud.inventory().unwrap().hosts[0].component_id.clone();
        let mut spec = spec("urn:publicid:IDN+am.example+sliver+s", &host);
        spec.size = Some(geni_am_backend::VmSize {
            cores: 2,
            ram_mb: 2048,
            disk_gb: Some(20),
        });
        let vm = cloud.create_vm(&spec).unwrap();
        let template = sim.received_templates().pop().unwrap();
        for expected in [
            "<VCPU>2</VCPU>",
            "<CPU>1</CPU>",
            "<MEMORY>2048</MEMORY>",
            "<SIZE>20480</SIZE>",
        ] {
            assert!(
                template.contains(expected),
                "{version}: {expected} in {template}"
            );
        }
        let document = sim.vm_document(vm.0.parse().unwrap()).unwrap();
        assert!(
            document.contains("<MEMORY><![CDATA[2048]]></MEMORY>")
                || document.contains("<MEMORY>2048</MEMORY>"),
            "{version}: the VM holds the granted memory: {document}"
        );
    }
}

#[test]
fn boot_failures_and_quota_refusals_reach_the_sliver() {
    let sim = simulator("7.4.0");
    let cloud = cloud(&sim);
    let host = cloud.inventory().unwrap().hosts[0].component_id.clone();
    sim.fail_next_boots(1);
    let vm = cloud
        .create_vm(&spec("urn:publicid:IDN+am.example+sliver+f", &host))
        .unwrap();
    cloud.start(&vm).unwrap();
    wait_for(&cloud, &vm, VmState::Failed);
    let failed = cloud.observe(&vm).unwrap();
    assert!(!failed.message.is_empty(), "OpenNebula's ERROR text");
    cloud.destroy(&vm).unwrap();

    sim.set_vm_quota(Some(0));
    let err = cloud
        .create_vm(&spec("urn:publicid:IDN+am.example+sliver+q", &host))
        .unwrap_err();
    assert_eq!(err.class(), ErrorClass::Capacity, "{err}");
}

/// What one VM costs in XML-RPC calls, from creation (with the search for
/// its tag the jobs do first) to termination, with a poll per transition.
#[test]
fn the_calls_one_vm_costs() {
    let sim = simulator("7.4.0");
    let cloud = cloud(&sim);
    let host = cloud.inventory().unwrap().hosts[0].component_id.clone();
    let warm = cloud
        .create_vm(&spec("urn:publicid:IDN+am.example+sliver+w", &host))
        .unwrap();
    cloud.destroy(&warm).unwrap();
    let before = total_calls(&sim);
    let tag = "urn:publicid:IDN+am.example+sliver+c";
    assert_eq!(cloud.find_vm(tag).unwrap(), None);
    let vm = cloud.create_vm(&spec(tag, &host)).unwrap();
    let polls = wait_for(&cloud, &vm, VmState::Stopped).len();
    cloud.start(&vm).unwrap();
    let polls = polls + wait_for(&cloud, &vm, VmState::Running).len();
    cloud.destroy(&vm).unwrap();
    let calls = total_calls(&sim) - before;
    println!("one VM: {calls} XML-RPC calls, {polls} of them observations");
    assert_eq!(
        calls as usize,
        6 + polls,
        "find, find+instantiate, info+release, terminate"
    );
}
