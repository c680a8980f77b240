//! Byte compatibility with the recorded OpenNebula 7.4.0 traffic: the whole
//! recorded session (`summary.json` order) is replayed against a simulator
//! seeded with the recorded objects, with the clock, life-cycle delays, VM
//! UUIDs and request ids set as the recording shows them; every response body
//! must equal the recorded `*.response.xml` byte for byte. No recorded pair is
//! excluded; a name recorded several times is compared at its last
//! occurrence, the only reply kept on disk.

use onesim::{Delays, OneSim, SimSettings};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn recorded_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/opennebula/recorded/oned-7.4.0")
}

/// The MONITORING record of a recorded `one.vm.info` reply: random figures of
/// the dummy monitor driver, seeded into the simulator like the UUIDs.
fn recorded_monitoring(name: &str) -> Vec<(String, String)> {
    let response = std::fs::read_to_string(recorded_dir().join(format!("{name}.response.xml")))
        .expect("response");
    let reply = onesim::xml::parse(&response).expect("reply parses");
    let data = reply.at("params/param/value/array/data").expect("data");
    let text = data.children()[1].value_at("string");
    let vm = onesim::xml::parse(text).expect("vm parses");
    vm.child("MONITORING")
        .expect("monitoring")
        .children()
        .iter()
        .map(|c| (c.name.clone(), c.value().to_owned()))
        .collect()
}

/// (The recorder named files after the state it polled just before the call, so
/// a few files hold the next state: `vm.info-vm1-poweroff_lcm_init` is 3/20,
/// the last `vm.info-vm1-active_running` is 3/12, `vm.info-vm1-active_epilog`
/// is 6/0. The clock below is set for the state each file holds.)
///
/// What the test does before a call: its clock, and the seeding the recording implies.
struct Step {
    name: &'static str,
    clock_ms: i64,
    setup: fn(&OneSim),
}

const T0: i64 = 1_795_282_000_000;

fn none(_: &OneSim) {}

fn ms(d: u64) -> Duration {
    Duration::from_millis(d)
}

fn set_delays(
    sim: &OneSim,
    schedule: u64,
    prolog: u64,
    boot: u64,
    shutdown: u64,
    epilog: u64,
    dispatch: u64,
) {
    sim.set_delays(Delays {
        schedule: ms(schedule),
        prolog: ms(prolog),
        boot: ms(boot),
        shutdown: ms(shutdown),
        epilog: ms(epilog),
        dispatch: ms(dispatch),
    });
}

fn request_id(sim: &OneSim, id: i64) {
    sim.set_next_request_id(id);
}

/// The recorded session with the times read off the recorded documents (STIME,
/// PSTIME, RETIME, … and the dates in ERROR/SCHED_MESSAGE).
fn session() -> Vec<Step> {
    let step = |name, at: i64, setup: fn(&OneSim)| Step {
        name,
        clock_ms: T0 + at,
        setup,
    };
    let mut steps = Vec::new();
    for name in [
        "system.version",
        "system.config",
        "user.info-self",
        "hostpool.info",
        "host.info",
        "vnpool.info",
        "vn.info",
        "datastorepool.info",
        "imagepool.info",
        "templatepool.info",
        "template.info",
        "clusterpool.info",
        "vmpool.info-empty",
    ] {
        steps.push(step(name, 650_000, none));
    }
    steps.extend([
        step("vm.allocate", 660_000, |sim| {
            set_delays(sim, 6000, 100, 100, 800, 200, 200)
        }),
        step("vm.info-vm1-pending_lcm_init", 660_100, none),
        step("vm.info-vm1-active_prolog", 666_000, none),
        step("vm.info-vm1-active_boot", 666_150, none),
        step("vm.info-vm1-active_running", 666_300, none),
        step("vm.info-running", 666_400, none),
        step("vm.update-merge", 667_000, none),
        step("vm.info-after-update", 667_000, none),
        step("vmpool.info-running", 667_000, none),
        step("vmpool.infoextended-running", 667_000, none),
        step("vmpool.info-filter-state-active", 667_000, none),
        step("hostpool.info-with-vm", 667_000, none),
        step("vn.info-with-lease", 667_000, none),
        step("template.instantiate", 668_000, |sim| {
            set_delays(sim, 3000, 0, 0, 800, 200, 200)
        }),
        step("vm.info-vm2-running", 671_500, none),
        step("vm.action-poweroff", 672_000, |sim| request_id(sim, 2518)),
        step("vm.info-vm1-active_running", 672_100, none),
        step("vm.info-vm1-active_shutdown_poweroff", 672_500, none),
        step("vm.info-vm1-poweroff_lcm_init", 673_100, none),
        step("vm.action-resume", 673_200, |sim| {
            request_id(sim, 2712);
            set_delays(sim, 3000, 0, 1000, 800, 200, 200);
        }),
        step("vm.info-vm1-poweroff_lcm_init", 673_450, none),
        step("vm.info-vm1-active_boot_poweroff", 673_500, none),
        step("vm.info-vm1-active_running", 675_000, none),
        step("vm.action-reboot", 675_000, none),
    ]);
    for name in [
        "err.bad-password",
        "err.unknown-user",
        "err.malformed-session",
        "err.empty-session",
        "err.vm-info-no-such-id",
        "err.vm-action-no-such-id",
        "err.vm-action-bad-name",
        "err.vm-action-wrong-state",
        "err.vm-allocate-syntax",
        "err.vm-allocate-no-such-vnet",
        "err.vm-allocate-no-memory",
        "err.template-instantiate-no-such-id",
        "err.host-allocate-duplicate",
        "quirk.host-allocate-bad-vmmad-succeeds",
        "quirk.host-info-bad-vmmad",
        "host.delete",
        "err.vn-info-no-such-id",
        "err.unknown-method",
        "err.wrong-param-type",
        "err.missing-params",
    ] {
        steps.push(step(name, 676_000, none));
    }
    steps.extend([
        step("vm.allocate-unplaceable", 681_000, |sim| {
            set_delays(sim, 5000, 0, 1000, 800, 200, 200)
        }),
        step("vm.info-pending-unplaceable", 687_000, |sim| {
            sim.set_vm_monitoring(0, recorded_monitoring("vm.info-done"));
            sim.set_vm_monitoring(2, recorded_monitoring("vm.info-pending-unplaceable"));
        }),
        step("vm.action-terminate-hard", 689_000, |sim| {
            request_id(sim, 2930);
            set_delays(sim, 5000, 0, 1000, 1800, 200, 200);
        }),
        step("vm.info-vm1-active_running", 689_300, none),
        step("vm.info-vm1-active_shutdown", 690_000, none),
        step("vm.info-vm1-active_epilog", 691_300, none),
        step("vm.info-vm1-done_lcm_init", 692_000, none),
        step("vm.info-done", 692_000, none),
        step("vm.action-terminate", 693_000, |sim| {
            set_delays(sim, 5000, 0, 1000, 800, 200, 200)
        }),
        step("vm.action-terminate-hard-pending", 694_000, none),
        step("quirk.vm-action-terminate-hard-on-done", 694_300, none),
        step("vm.allocate-will-fail", 694_500, |sim| {
            set_delays(sim, 1500, 0, 1000, 800, 0, 0);
            sim.fail_next_boots(1);
        }),
        step("vm.info-vm4-pending_lcm_init", 694_600, none),
        step("vm.info-vm4-active_prolog", 696_000, none),
        step("vm.info-vm4-active_boot_failure", 697_500, none),
        step("vm.info-boot-failure", 697_500, none),
        step("vm.action-terminate-hard-boot-failure", 697_600, none),
        step("err.vm-recover-no-such-id", 698_000, none),
        step("vmpool.info-after", 699_000, none),
        step("vmpool.info-done-filter", 699_000, none),
        step("hostpool.info-after", 699_000, none),
        step("vnpool.info-after", 699_000, none),
    ]);
    steps
}

/// The call names in the order the recording made them.
fn recorded_names() -> Vec<String> {
    let text = std::fs::read_to_string(recorded_dir().join("summary.json")).expect("summary.json");
    let calls: serde_json::Value = serde_json::from_str(&text).expect("summary parses");
    calls
        .as_array()
        .expect("array")
        .iter()
        .map(|c| c["name"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn replays_the_recorded_session_byte_for_byte() {
    let recorded = recorded_names();
    let steps = session();
    let names: Vec<&str> = steps.iter().map(|s| s.name).collect();
    let recorded_order: Vec<&str> = recorded.iter().map(String::as_str).collect();
    assert_eq!(names, recorded_order, "the replay follows summary.json");

    let sim = OneSim::start(SimSettings {
        clock: Some(T0 / 1000),
        ..SimSettings::default()
    });
    sim.queue_uuids(
        [
            "04b21267-6935-4e2c-942e-208949b92459",
            "7a1f56a8-7bdc-4f73-954c-7dd20e12230f",
            "2a305b5b-230c-424b-b293-6a3944707c43",
            "199f0de4-621b-4ca5-b276-25df09bf737e",
        ]
        .map(String::from),
    );
    let dir = recorded_dir();
    let mut compared = 0;
    let mut mismatches = Vec::new();
    for (index, step) in steps.iter().enumerate() {
        (step.setup)(&sim);
        sim.set_clock_ms(step.clock_ms);
        let request = std::fs::read_to_string(dir.join(format!("{}.request.xml", step.name)))
            .expect("request file");
        let answer = sim.answer(&request);
        // A name recorded several times keeps only its last reply on disk.
        if names[index + 1..].contains(&step.name) {
            continue;
        }
        let expected = std::fs::read_to_string(dir.join(format!("{}.response.xml", step.name)))
            .expect("response file");
        compared += 1;
        if answer != expected {
            mismatches.push(format!(
                "{}: {}",
                step.name,
                first_difference(&expected, &answer)
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {compared} replies differ:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    assert_eq!(compared, 75, "every one of the 75 recorded replies");
}

/// Where two bodies part, with some context of each.
fn first_difference(expected: &str, got: &str) -> String {
    let at = expected
        .bytes()
        .zip(got.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let start = at.saturating_sub(60);
    let context = |s: &str| {
        s.get(start..(at + 80).min(s.len()))
            .unwrap_or("")
            .to_owned()
    };
    format!(
        "differ at byte {at}\n  expected …{:?}\n  got      …{:?}",
        context(expected),
        context(got)
    )
}
