//! Tests of the simulated cloud through the [`Compute`] trait, on a manual
//! clock so every transition is observed without sleeping.

use super::*;
use crate::{ErrorClass, NicSpec};

const AUTHORITY: &str = "geni-am.example.net";

fn cloud() -> SimulatedCloud {
    let config: SimConfig = toml::from_str(config::SAMPLE_SECTION).unwrap();
    SimulatedCloud::with_clock(&config, AUTHORITY, SimClock::manual()).unwrap()
}

fn spec(tag: &str) -> VmSpec {
    VmSpec {
        size: None,
        tag: tag.into(),
        name: "Node_A".into(),
        host: None,
        sliver_type: "small".into(),
        disk_image: None,
        users: vec![UserKeys {
            urn: "urn:publicid:IDN+ch.geni.net+user+alice".into(),
            keys: vec!["ssh-ed25519 AAAA alice".into()],
        }],
        networks: Vec::new(),
        exclusive: false,
        install: Vec::new(),
        execute: Vec::new(),
    }
}

/// Creates the VM `tag`, lets it be defined, starts it and waits out the boot.
fn boot(cloud: &SimulatedCloud, tag: &str) -> (VmHandle, VmObservation) {
    let vm = cloud.create_vm(&spec(tag)).unwrap();
    advance(cloud, 100);
    cloud.start(&vm).unwrap();
    advance(cloud, 1000);
    let seen = cloud.observe(&vm).unwrap();
    (vm, seen)
}

fn state(cloud: &SimulatedCloud, vm: &VmHandle) -> VmState {
    cloud.observe(vm).unwrap().state
}

fn advance(cloud: &SimulatedCloud, millis: u64) {
    cloud.clock().advance(Duration::from_millis(millis));
}

#[test]
fn the_inventory_comes_from_the_config_with_component_urns() {
    let inventory = cloud().inventory().unwrap();
    assert_eq!(
        inventory.hosts[0].component_id,
        "urn:publicid:IDN+geni-am.example.net+node+host1"
    );
    assert_eq!(inventory.hosts[1].max_vms, 1);
    assert_eq!(
        inventory.sliver_types[0].disk_images[0].name,
        "ubuntu-22.04"
    );
}

#[test]
fn a_vm_goes_through_its_lifecycle_over_time() {
    let cloud = cloud();
    let vm = cloud.create_vm(&spec("s1")).unwrap();
    assert_eq!(state(&cloud, &vm), VmState::Pending);
    advance(&cloud, 100);
    assert_eq!(state(&cloud, &vm), VmState::Stopped);
    cloud.start(&vm).unwrap();
    assert_eq!(state(&cloud, &vm), VmState::Booting);
    advance(&cloud, 1000);
    let seen = cloud.observe(&vm).unwrap();
    assert_eq!(seen.state, VmState::Running);
    assert_eq!(seen.hostname, format!("node-a-{}.sim.geni-am.test", vm.0));
    assert_eq!(seen.addresses[0].ip, "10.10.0.2");
    assert_eq!(seen.addresses[0].mac, "02:00:0a:0a:00:02");
    cloud.restart(&vm).unwrap();
    assert_eq!(state(&cloud, &vm), VmState::Booting);
    advance(&cloud, 1000);
    cloud.stop(&vm).unwrap();
    assert_eq!(state(&cloud, &vm), VmState::Stopping);
    advance(&cloud, 500);
    assert_eq!(state(&cloud, &vm), VmState::Stopped);
    cloud.destroy(&vm).unwrap();
    assert_eq!(state(&cloud, &vm), VmState::Gone);
    cloud.destroy(&vm).unwrap();
}

#[test]
fn creation_is_idempotent_by_tag_and_findable() {
    let cloud = cloud();
    let first = cloud.create_vm(&spec("s1")).unwrap();
    let again = cloud.create_vm(&spec("s1")).unwrap();
    assert_eq!(first, again);
    assert_eq!(cloud.vms_created(), 1);
    assert_eq!(cloud.find_vm("s1").unwrap(), Some(first.clone()));
    assert_eq!(cloud.find_vm("s2").unwrap(), None);
    let listed = cloud.list_vms().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].tag, "s1");
    assert_eq!(listed[0].handle, first);
}

#[test]
fn capacity_is_enforced_per_host_and_freed_on_destroy() {
    let cloud = cloud();
    let vms: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|tag| cloud.create_vm(&spec(tag)).unwrap())
        .collect();
    let err = cloud.create_vm(&spec("d")).unwrap_err();
    assert!(matches!(err, BackendError::Capacity(_)), "{err}");
    cloud.destroy(&vms[0]).unwrap();
    let mut on_host1 = spec("d");
    on_host1.host = Some(format!("urn:publicid:IDN+{AUTHORITY}+node+host1"));
    cloud.create_vm(&on_host1).unwrap();
    let mut on_host2 = spec("e");
    on_host2.host = Some(format!("urn:publicid:IDN+{AUTHORITY}+node+host2"));
    assert_eq!(
        cloud.create_vm(&on_host2).unwrap_err().class(),
        ErrorClass::Capacity
    );
}

#[test]
fn unknown_types_images_and_hosts_are_permanent_errors() {
    let cloud = cloud();
    let mut bad = spec("x");
    bad.sliver_type = "huge".into();
    let err = cloud.create_vm(&bad).unwrap_err();
    assert_eq!(
        err.to_string(),
        "backend refused the operation: the simulated cloud has no sliver type `huge`"
    );
    let mut bad = spec("x");
    bad.disk_image = Some("windows".into());
    assert_eq!(
        cloud.create_vm(&bad).unwrap_err().class(),
        ErrorClass::Permanent
    );
    let mut bad = spec("x");
    bad.host = Some("urn:publicid:IDN+elsewhere+node+h".into());
    assert_eq!(
        cloud.create_vm(&bad).unwrap_err().class(),
        ErrorClass::Permanent
    );
    let gone = cloud.start(&VmHandle("99".into())).unwrap_err();
    assert!(matches!(gone, BackendError::NotFound { .. }), "{gone}");
}

#[test]
fn an_injected_boot_failure_ends_failed_with_the_message() {
    let cloud = cloud();
    cloud.fail_next_boot("s1", "kernel panic in the simulated guest");
    let seen = boot(&cloud, "s1").1;
    assert_eq!(seen.state, VmState::Failed);
    assert_eq!(seen.message, "kernel panic in the simulated guest");
}

#[test]
fn a_failure_rate_of_one_fails_every_boot() {
    let mut config: SimConfig = toml::from_str(config::SAMPLE_SECTION).unwrap();
    config.failure_rate = 1.0;
    let cloud = SimulatedCloud::with_clock(&config, AUTHORITY, SimClock::manual()).unwrap();
    let seen = boot(&cloud, "s1").1;
    assert_eq!(seen.state, VmState::Failed);
    assert!(
        seen.message.contains("simulated boot failure of s1"),
        "{}",
        seen.message
    );
}

#[test]
fn injected_transient_errors_pass() {
    let cloud = cloud();
    cloud.fail_next_calls(2);
    assert!(cloud.create_vm(&spec("s1")).unwrap_err().is_transient());
    assert!(cloud.find_vm("s1").unwrap_err().is_transient());
    assert!(cloud.create_vm(&spec("s1")).is_ok());
}

#[test]
fn users_are_installed_at_creation_and_replaced_on_update() {
    let cloud = cloud();
    let (vm, seen) = boot(&cloud, "s1");
    assert_eq!(seen.state, VmState::Running);
    let alice = "urn:publicid:IDN+ch.geni.net+user+alice";
    assert_eq!(
        cloud.users_of(&vm).unwrap()[alice].len(),
        1,
        "installed at creation"
    );
    let update = UserKeys {
        urn: alice.into(),
        keys: vec!["k2".into(), "k3".into()],
    };
    cloud.update_users(&vm, &[update]).unwrap();
    assert_eq!(cloud.users_of(&vm).unwrap()[alice], vec!["k2", "k3"]);
}

fn nic(network: &NetHandle) -> NicSpec {
    NicSpec {
        network: network.clone(),
        ip: None,
    }
}

#[test]
fn a_vm_on_a_network_handle_that_names_none_leases_nothing() {
    let cloud = cloud();
    let mut lost = spec("lost");
    lost.networks = vec![nic(&NetHandle("not-a-network".into()))];
    let err = cloud.create_vm(&lost).unwrap_err();
    assert!(matches!(err, BackendError::NotFound { .. }), "{err}");
    let first_address = |cloud: &SimulatedCloud| {
        let vm = cloud.create_vm(&spec("good")).unwrap();
        cloud.observe(&vm).unwrap().addresses[0].ip.clone()
    };
    assert_eq!(
        first_address(&cloud),
        first_address(&self::cloud()),
        "the control address leased for the refused VM went back"
    );
}

#[test]
fn link_networks_give_each_vm_an_address_and_are_idempotent() {
    let cloud = cloud();
    let link = NetSpec {
        tag: "link1".into(),
        name: "lan0".into(),
        addresses: Vec::new(),
    };
    let created = cloud.create_network(&link).unwrap();
    assert_eq!(cloud.create_network(&link).unwrap(), created);
    assert_eq!(created.vlan_tag, Some(100), "a VLAN of its own");
    let net = created.handle;
    let mut a = spec("a");
    a.networks = vec![nic(&net)];
    let mut b = spec("b");
    b.networks = vec![nic(&net)];
    let a = cloud.create_vm(&a).unwrap();
    let b = cloud.create_vm(&b).unwrap();
    let ip = |vm: &VmHandle| cloud.observe(vm).unwrap().addresses[1].ip.clone();
    assert_eq!(ip(&a), "192.168.0.2");
    assert_eq!(ip(&b), "192.168.0.3");
    assert!(cloud.destroy_network(&net).unwrap_err().is_transient());
    cloud.destroy(&a).unwrap();
    cloud.destroy(&b).unwrap();
    cloud.destroy_network(&net).unwrap();
    let mut c = spec("c");
    c.networks = vec![nic(&net)];
    assert!(matches!(
        cloud.create_vm(&c).unwrap_err(),
        BackendError::NotFound { .. }
    ));
    assert_eq!(
        cloud.list_vms().unwrap().len(),
        0,
        "a failed creation leaves nothing"
    );
}

#[test]
fn a_vanished_vm_is_gone() {
    let cloud = cloud();
    let vm = cloud.create_vm(&spec("s1")).unwrap();
    assert!(cloud.vanish("s1"));
    assert!(!cloud.vanish("s1"));
    assert_eq!(state(&cloud, &vm), VmState::Gone);
}

#[test]
fn the_cloud_is_shared_between_threads() {
    let cloud = std::sync::Arc::new(cloud());
    let handles: Vec<_> = (0..3)
        .map(|i| {
            let cloud = cloud.clone();
            std::thread::spawn(move || cloud.create_vm(&spec(&format!("t{}", i % 2))))
        })
        .collect();
    for handle in handles {
        handle.join().unwrap().unwrap();
    }
    assert_eq!(cloud.vms_created(), 2);
}

/// A directory for a state file `sim.json`, that file's path, and a
/// manual clock.
fn state_dir() -> (tempfile::TempDir, std::path::PathBuf, SimClock) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sim.json");
    (dir, file, SimClock::manual())
}

/// A cloud on `clock` saving to `file`.
fn saved_cloud(file: &std::path::Path, clock: &SimClock) -> Result<SimulatedCloud, SimConfigError> {
    let mut config: SimConfig = toml::from_str(config::SAMPLE_SECTION).unwrap();
    config.state_file = Some(file.to_owned());
    SimulatedCloud::with_clock(&config, AUTHORITY, clock.clone())
}

#[test]
fn a_state_file_carries_vms_networks_and_boots_across_a_restart() {
    let (_dir, file, clock) = state_dir();
    let first = saved_cloud(&file, &clock).unwrap();
    let net = first
        .create_network(&NetSpec {
            tag: "link".into(),
            name: "lan0".into(),
            addresses: Vec::new(),
        })
        .unwrap()
        .handle;
    let mut linked = spec("linked");
    linked.networks = vec![nic(&net)];
    let vm = first.create_vm(&linked).unwrap();
    let gone = first.create_vm(&spec("gone")).unwrap();
    first.destroy(&gone).unwrap();
    advance(&first, 100);
    first.start(&vm).unwrap();
    advance(&first, 400);
    let before = first.observe(&vm).unwrap();
    assert_eq!(before.state, VmState::Booting);
    drop(first);

    let second = saved_cloud(&file, &clock).unwrap();
    let after = second.observe(&vm).unwrap();
    assert_eq!(after, before, "the VM comes back as it was saved");
    assert_eq!(
        second.find_vm("gone").unwrap(),
        None,
        "destroyed VMs stay gone"
    );
    assert_eq!(second.vms_created(), 2);
    advance(&second, 600);
    assert_eq!(
        state(&second, &vm),
        VmState::Running,
        "the boot continues from its saved start"
    );
    let again = second
        .create_network(&NetSpec {
            tag: "link".into(),
            name: "lan0".into(),
            addresses: Vec::new(),
        })
        .unwrap()
        .handle;
    assert_eq!(again, net, "the saved network is found by its tag");
    let mut other = spec("other");
    other.networks = vec![nic(&net)];
    let fresh = second.create_vm(&other).unwrap();
    assert_ne!(fresh, vm);
    let fresh_ips = second.observe(&fresh).unwrap().addresses;
    for (old, new) in before.addresses.iter().zip(&fresh_ips) {
        assert_ne!(old.ip, new.ip, "saved leases are not handed out again");
    }
}

#[test]
fn an_unreadable_state_file_is_refused_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sim.json");
    std::fs::write(&file, "{ not json").unwrap();
    let err = saved_cloud(&file, &SimClock::manual()).unwrap_err();
    assert_eq!(err.key, "backend.sim.state_file");
    assert!(err.problem.contains("sim.json"), "{err}");
}

/// A hook that sends on a channel each time it is called.
fn watched(cloud: &SimulatedCloud) -> std::sync::mpsc::Receiver<()> {
    let (told, heard) = std::sync::mpsc::channel();
    let hook: ChangeHook = std::sync::Arc::new(move || {
        let _ = told.send(());
    });
    assert!(cloud.watch(hook), "the simulated cloud tells of changes");
    heard
}

#[test]
fn watchers_are_told_of_every_action_that_changes_a_vm() {
    let cloud = cloud();
    let heard = watched(&cloud);
    let vm = cloud.create_vm(&spec("urn:told")).unwrap();
    advance(&cloud, 100);
    cloud.start(&vm).unwrap();
    cloud.destroy(&vm).unwrap();
    assert_eq!(heard.try_iter().count(), 3);
    cloud.list_vms().unwrap();
    assert_eq!(heard.try_iter().count(), 0, "a read changes nothing");
}

#[test]
fn on_the_real_clock_watchers_are_told_when_a_boot_is_over() {
    let mut config: SimConfig = toml::from_str(config::SAMPLE_SECTION).unwrap();
    (config.create_delay_ms, config.boot_delay_ms) = (0, 50);
    let cloud = SimulatedCloud::new(&config, AUTHORITY).unwrap();
    let heard = watched(&cloud);
    let vm = cloud.create_vm(&spec("urn:booting")).unwrap();
    cloud.start(&vm).unwrap();
    assert_eq!(heard.try_iter().count(), 2, "creation and start, at once");
    assert_eq!(state(&cloud, &vm), VmState::Booting);
    heard
        .recv_timeout(Duration::from_secs(30))
        .expect("told when the boot is over");
    assert_eq!(state(&cloud, &vm), VmState::Running);
}

/// The state file's lines: its snapshot and the changes after it.
fn lines(file: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines().map(str::to_owned).collect()
}

#[test]
fn a_change_line_torn_by_a_kill_leaves_the_state_one_change_behind() {
    let (_dir, file, clock) = state_dir();
    let first = saved_cloud(&file, &clock).unwrap();
    for tag in ["a", "b", "torn"] {
        first.create_vm(&spec(tag)).unwrap();
    }
    drop(first);
    // The first change wrote a snapshot, the others a line each.
    assert_eq!(lines(&file).len(), 3);
    let text = std::fs::read(&file).unwrap();
    let torn = text.len() - lines(&file)[2].len() / 2;
    std::fs::write(&file, &text[..torn]).unwrap();
    read_back_without(&file, &clock, &["a", "b"], "torn");
}

/// Asserts that the state read from `file` has the VMs tagged `kept`
/// and not `lost`, and that a VM created then is read back by the next
/// start.
fn read_back_without(file: &std::path::Path, clock: &SimClock, kept: &[&str], lost: &str) {
    let cloud = saved_cloud(file, clock).unwrap();
    for tag in kept {
        assert!(cloud.find_vm(tag).unwrap().is_some(), "{tag} is kept");
    }
    assert_eq!(cloud.find_vm(lost).unwrap(), None, "one change behind");
    cloud.create_vm(&spec("c")).unwrap();
    drop(cloud);
    let later = saved_cloud(file, clock).unwrap();
    assert!(
        later.find_vm("c").unwrap().is_some(),
        "writes go on after the torn write"
    );
    assert_eq!(later.find_vm(lost).unwrap(), None);
}

#[test]
fn lines_of_an_older_journal_after_a_snapshot_are_not_applied() {
    let (_dir, file, clock) = state_dir();
    let first = saved_cloud(&file, &clock).unwrap();
    first.create_vm(&spec("a")).unwrap();
    first.create_vm(&spec("old")).unwrap();
    drop(first);
    // A later snapshot written over this file and not yet cut to its
    // length when a kill came: the old journal's line follows it.
    let [snapshot, old] = <[String; 2]>::try_from(lines(&file)).unwrap();
    let mut snapshot: serde_json::Value = serde_json::from_str(&snapshot).unwrap();
    snapshot["generation"] = 3.into();
    std::fs::write(&file, format!("{snapshot}\n{old}\n")).unwrap();
    let second = saved_cloud(&file, &clock).unwrap();
    assert!(second.find_vm("a").unwrap().is_some());
    assert_eq!(second.find_vm("old").unwrap(), None);
}

#[test]
fn networks_and_asked_addresses_of_change_lines_are_read_back() {
    let (_dir, file, clock) = state_dir();
    let first = saved_cloud(&file, &clock).unwrap();
    let link = |tag: &str| NetSpec {
        tag: tag.into(),
        name: tag.into(),
        addresses: Vec::new(),
    };
    first.create_network(&link("first")).unwrap();
    let kept = first.create_network(&link("kept")).unwrap().handle;
    let deleted = first.create_network(&link("deleted")).unwrap().handle;
    first.destroy_network(&deleted).unwrap();
    let asking = |tag: &str, ip: &str| {
        let mut asked = spec(tag);
        asked.networks = vec![NicSpec {
            network: kept.clone(),
            ip: Some(ip.into()),
        }];
        asked
    };
    let inside = format!("192.168.{}.40", kept.0);
    first.create_vm(&asking("inside", &inside)).unwrap();
    first.create_vm(&asking("outside", "10.99.0.5")).unwrap();
    drop(first);
    assert_eq!(lines(&file).len(), 6, "all but the first change are lines");
    let second = saved_cloud(&file, &clock).unwrap();
    let names: Vec<String> = second.networks().into_iter().map(|(_, tag)| tag).collect();
    assert_eq!(names, ["first", "kept"]);
    for ip in [inside.as_str(), "10.99.0.5"] {
        let err = second.create_vm(&asking("again", ip)).unwrap_err();
        assert!(err.to_string().contains("already held"), "{ip}: {err}");
    }
}

/// A state file's directory, path and clock ([`state_dir`]), VM `a` created by
/// one process and `b` by the next: after a start the first change writes
/// a snapshot, so `b`'s went to the `.b` file.
fn saved_in_both_files() -> (tempfile::TempDir, std::path::PathBuf, SimClock) {
    let (dir, file, clock) = state_dir();
    let first = saved_cloud(&file, &clock).unwrap();
    first.create_vm(&spec("a")).unwrap();
    drop(first);
    let second = saved_cloud(&file, &clock).unwrap();
    second.create_vm(&spec("b")).unwrap();
    drop(second);
    (dir, file, clock)
}

#[test]
fn a_snapshot_torn_by_a_kill_falls_back_to_the_other_file() {
    let (dir, file, clock) = saved_in_both_files();
    // Tear the later snapshot, in the `.b` file, in the middle.
    let b = dir.path().join("sim.json.b");
    let text = std::fs::read(&b).unwrap();
    std::fs::write(&b, &text[..text.len() / 2]).unwrap();
    read_back_without(&file, &clock, &["a"], "b");
}

#[test]
fn changes_are_lines_until_they_outweigh_the_snapshot_which_is_then_written_again() {
    let (dir, file, clock) = state_dir();
    let first = saved_cloud(&file, &clock).unwrap();
    let (vm, _) = boot(&first, "a");
    let alice = "urn:publicid:IDN+example.org+user+alice";
    let keys = |round: usize| UserKeys {
        urn: alice.into(),
        keys: vec![format!("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5 round-{round}")],
    };
    let before = lines(&file).len();
    assert_eq!(before, 2, "a snapshot, then the start's line");
    for round in 0..20 {
        first.update_users(&vm, &[keys(round)]).unwrap();
    }
    assert_eq!(lines(&file).len(), before + 20, "a line a change");
    assert!(!dir.path().join("sim.json.b").exists());
    for round in 20..2_000 {
        first.update_users(&vm, &[keys(round)]).unwrap();
    }
    drop(first);
    // About 300 bytes a line: the files were written whole again in turn
    // and each holds a snapshot and at most 64 KiB and two snapshots of
    // lines after it.
    for path in [file.clone(), dir.path().join("sim.json.b")] {
        let len = std::fs::metadata(&path).unwrap().len();
        assert!(len < 80 * 1024, "{}: {len} bytes", path.display());
    }
    let second = saved_cloud(&file, &clock).unwrap();
    assert_eq!(
        second.users_of(&vm).unwrap()[alice],
        keys(1_999).keys,
        "the last change is read back"
    );
}

#[test]
fn a_state_file_of_an_earlier_release_is_read() {
    let (dir, file, clock) = state_dir();
    let first = saved_cloud(&file, &clock).unwrap();
    first.create_vm(&spec("a")).unwrap();
    drop(first);
    // One file, at the configured path, without a generation.
    assert!(!dir.path().join("sim.json.b").exists());
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    json.as_object_mut().unwrap().remove("generation").unwrap();
    std::fs::write(&file, serde_json::to_vec(&json).unwrap()).unwrap();
    let second = saved_cloud(&file, &clock).unwrap();
    assert!(second.find_vm("a").unwrap().is_some());
}

#[test]
fn removing_the_state_file_starts_empty_though_its_second_file_is_left() {
    let (dir, file, clock) = saved_in_both_files();
    assert!(dir.path().join("sim.json.b").exists());
    std::fs::remove_file(&file).unwrap();
    let third = saved_cloud(&file, &clock).unwrap();
    assert_eq!(third.find_vm("a").unwrap(), None);
    assert_eq!(third.find_vm("b").unwrap(), None);
    third.create_vm(&spec("new")).unwrap();
    drop(third);
    let fourth = saved_cloud(&file, &clock).unwrap();
    assert!(fourth.find_vm("new").unwrap().is_some());
    assert_eq!(
        fourth.find_vm("a").unwrap(),
        None,
        "the second file left was not read"
    );
}
