//! Every document the simulator produces validates against the official
//! OpenNebula schema of the release it plays (5.4, 5.12, 6.10, 7.4): VM in each
//! state, VM pool (reduced and extended), host, host pool, network, network
//! pool, template and user. Needs `xmllint` (installed by scripts/setup.sh).
//!
//! One deviation is oned's own: from 6.x the schema requires TEMPLATE/TM_MAD_SYSTEM,
//! which a VM only gets when deployed, so real oned's PENDING/HOLD documents fail
//! the same way (checked against the recorded pending document).

mod common;

use common::{Connection, P, SESSION, with_namespace};
use onesim::{Delays, OneSim, SimSettings};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn xsd_dir(release: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/opennebula/recorded/xsd")
        .join(release)
}

/// xmllint's complaints about `document` against `schema`, without file names; empty when valid.
fn schema_errors(document: &str, schema: &Path, label: &str) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("onesim-xsd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join(format!("{label}.xml"));
    std::fs::write(&file, with_namespace(document)).expect("write document");
    let output = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(schema)
        .arg(&file)
        .output()
        .expect("xmllint runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.success() {
        return Vec::new();
    }
    assert!(
        !stderr.contains("failed to compile") && !stderr.contains("failed to load"),
        "{} is not a usable schema: {stderr}",
        schema.display()
    );
    stderr
        .lines()
        .filter(|l| !l.ends_with("fails to validate"))
        .map(|l| l.rsplit_once(": ").map_or(l, |(_, msg)| msg).to_owned())
        .collect()
}

/// The schema errors real oned 7.4.0's own PENDING document gets.
fn recorded_pending_errors(release: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../shared/opennebula/recorded/oned-7.4.0/vm.info-vm1-pending_lcm_init.payload.xml",
    );
    let text = std::fs::read_to_string(path).expect("recorded pending document");
    let body = text.trim_start_matches("<?xml version=\"1.0\" ?>").trim();
    schema_errors(body, &xsd_dir(release).join("vm.xsd"), "recorded-pending")
}

const ALLOCATE: &str = "NAME = \"schema-vm\"\nCPU = \"0.5\"\nVCPU = \"1\"\nMEMORY = \"256\"\nDISK = [ IMAGE_ID = \"0\" ]\nNIC = [ NETWORK_ID = \"0\" ]\nCONTEXT = [ NETWORK = \"YES\", SSH_PUBLIC_KEY = \"ssh-ed25519 AAAA k\" ]\nGENI_SLICE_URN = \"urn:publicid:IDN+example.org+slice+s\"\nLABELS = \"geni\"\n";

struct Collected {
    label: String,
    schema: &'static str,
    document: String,
    undeployed: bool,
}

fn collect(sim: &OneSim, release: &str) -> Vec<Collected> {
    let mut c = Connection::open(sim.address());
    let mut docs = Vec::new();
    let take = |c: &mut Connection,
                label: &str,
                schema: &'static str,
                method: &str,
                params: &[P],
                undeployed: bool| {
        let reply = c.call(method, params);
        Collected {
            label: format!("{release}-{label}"),
            schema,
            document: reply.text(),
            undeployed,
        }
    };
    let vm_doc = |c: &mut Connection, label: &str, id: i32| {
        take(
            c,
            label,
            "vm.xsd",
            "one.vm.info",
            &[SESSION, P::I(id)],
            false,
        )
    };
    let vm_info = [SESSION, P::I(0)];
    let pool = [SESSION, P::I(-2), P::I(-1), P::I(-1), P::I(-2)];
    let version = sim.version();
    let step = |label: &str| {
        let _ = label;
        sim.advance_clock(Duration::from_millis(1000));
    };
    assert_eq!(
        c.call("one.vm.allocate", &[SESSION, P::S(ALLOCATE), P::B(true)])
            .int(),
        0
    );
    docs.push(take(
        &mut c,
        "vm-hold",
        "vm.xsd",
        "one.vm.info",
        &vm_info,
        true,
    ));
    c.call("one.vm.action", &[SESSION, P::S("release"), P::I(0)]);
    docs.push(take(
        &mut c,
        "vm-pending",
        "vm.xsd",
        "one.vm.info",
        &vm_info,
        true,
    ));
    docs.push(take(
        &mut c,
        "pool-pending",
        "vm_pool.xsd",
        "one.vmpool.info",
        &pool,
        false,
    ));
    step("prolog");
    docs.push(take(
        &mut c,
        "vm-prolog",
        "vm.xsd",
        "one.vm.info",
        &vm_info,
        false,
    ));
    step("boot");
    docs.push(take(
        &mut c,
        "vm-boot",
        "vm.xsd",
        "one.vm.info",
        &vm_info,
        false,
    ));
    step("running");
    docs.push(take(
        &mut c,
        "vm-running",
        "vm.xsd",
        "one.vm.info",
        &vm_info,
        false,
    ));
    c.call(
        "one.vm.update",
        &[
            SESSION,
            P::I(0),
            P::S("GENI_SLIVER_URN = \"urn:x\""),
            P::I(1),
        ],
    );
    docs.push(take(
        &mut c,
        "pool-running",
        "vm_pool.xsd",
        "one.vmpool.info",
        &pool,
        false,
    ));
    if version.has_infoextended() {
        // vm_pool.xsd describes the reduced bodies; each extended body is a full VM.
        let pool = c.call("one.vmpool.infoextended", &pool).text();
        let pool = onesim::xml::parse(&pool).expect("pool parses");
        for (i, vm) in pool.children().iter().enumerate() {
            docs.push(Collected {
                label: format!("{release}-extended-{i}"),
                schema: "vm.xsd",
                document: vm.to_xml(),
                undeployed: false,
            });
        }
    }
    docs.push(take(
        &mut c,
        "host",
        "host.xsd",
        "one.host.info",
        &[SESSION, P::I(0)],
        false,
    ));
    docs.push(take(
        &mut c,
        "hostpool",
        "host_pool.xsd",
        "one.hostpool.info",
        &[SESSION],
        false,
    ));
    docs.push(take(
        &mut c,
        "vnet",
        "vnet.xsd",
        "one.vn.info",
        &[SESSION, P::I(0)],
        false,
    ));
    docs.push(take(
        &mut c,
        "vnpool",
        "vnet_pool.xsd",
        "one.vnpool.info",
        &[SESSION, P::I(-2), P::I(-1), P::I(-1)],
        false,
    ));
    docs.push(take(
        &mut c,
        "template",
        "vmtemplate.xsd",
        "one.template.info",
        &[SESSION, P::I(0)],
        false,
    ));
    docs.push(take(
        &mut c,
        "user",
        "user.xsd",
        "one.user.info",
        &[SESSION, P::I(-1)],
        false,
    ));
    c.call("one.vm.action", &[SESSION, P::S("poweroff"), P::I(0)]);
    docs.push(take(
        &mut c,
        "vm-shutdown-poweroff",
        "vm.xsd",
        "one.vm.info",
        &vm_info,
        false,
    ));
    step("poweroff");
    docs.push(take(
        &mut c,
        "vm-poweroff",
        "vm.xsd",
        "one.vm.info",
        &vm_info,
        false,
    ));
    c.call("one.vm.action", &[SESSION, P::S("resume"), P::I(0)]);
    docs.push(take(
        &mut c,
        "vm-boot-poweroff",
        "vm.xsd",
        "one.vm.info",
        &vm_info,
        false,
    ));
    step("running-again");
    c.call("one.vm.action", &[SESSION, P::S("terminate-hard"), P::I(0)]);
    docs.push(take(
        &mut c,
        "vm-shutdown",
        "vm.xsd",
        "one.vm.info",
        &vm_info,
        false,
    ));
    step("epilog");
    docs.push(take(
        &mut c,
        "vm-epilog",
        "vm.xsd",
        "one.vm.info",
        &vm_info,
        false,
    ));
    step("done");
    docs.push(take(
        &mut c,
        "vm-done",
        "vm.xsd",
        "one.vm.info",
        &vm_info,
        false,
    ));
    docs.push(take(
        &mut c,
        "vnpool-after",
        "vnet_pool.xsd",
        "one.vnpool.info",
        &[SESSION, P::I(-2), P::I(-1), P::I(-1)],
        false,
    ));
    sim.fail_next_boots(1);
    let failing = c.instantiate("fails");
    for _ in 0..3 {
        step("towards boot failure");
    }
    docs.push(vm_doc(&mut c, "vm-boot-failure", failing));
    // The parked states: SUSPENDED, STOPPED, SHUTDOWN_UNDEPLOY and UNDEPLOYED.
    let parked: Vec<i32> = (0..2).map(|_| c.instantiate("parked")).collect();
    for _ in 0..3 {
        step("towards running");
    }
    c.call(
        "one.vm.action",
        &[SESSION, P::S("suspend"), P::I(parked[0])],
    );
    c.call(
        "one.vm.action",
        &[SESSION, P::S("undeploy"), P::I(parked[1])],
    );
    docs.push(vm_doc(&mut c, "vm-suspended", parked[0]));
    docs.push(vm_doc(&mut c, "vm-shutdown-undeploy", parked[1]));
    c.call("one.vm.action", &[SESSION, P::S("stop"), P::I(parked[0])]);
    step("undeployed");
    docs.push(vm_doc(&mut c, "vm-stopped", parked[0]));
    docs.push(vm_doc(&mut c, "vm-undeployed", parked[1]));
    docs.push(take(
        &mut c,
        "pool-all",
        "vm_pool.xsd",
        "one.vmpool.info",
        &pool,
        false,
    ));
    docs
}

/// The (STATE, LCM_STATE) each collected VM document must be in.
const VM_STATES: [(&str, (i32, i32)); 16] = [
    ("hold", (2, 0)),
    ("pending", (1, 0)),
    ("prolog", (3, 1)),
    ("boot", (3, 2)),
    ("running", (3, 3)),
    ("shutdown-poweroff", (3, 18)),
    ("poweroff", (8, 0)),
    ("boot-poweroff", (3, 20)),
    ("shutdown", (3, 12)),
    ("epilog", (3, 11)),
    ("done", (6, 0)),
    ("boot-failure", (3, 36)),
    ("suspended", (5, 0)),
    ("shutdown-undeploy", (3, 29)),
    ("stopped", (4, 0)),
    ("undeployed", (9, 0)),
];

#[test]
fn documents_validate_against_each_release_schema() {
    let mut failures = Vec::new();
    let mut validated = 0;
    let mut states_seen = 0;
    for release in ["5.4.0", "5.12.0", "6.10.0", "7.4.0"] {
        let delays = Delays::uniform(Duration::from_millis(1000), Duration::ZERO);
        let sim = OneSim::start(SimSettings {
            version: release.into(),
            delays,
            clock: Some(1_800_000_000),
            listen: None,
        });
        let pending_deviation = recorded_pending_errors(release);
        for doc in collect(&sim, release) {
            if let Some((_, expected)) = VM_STATES
                .iter()
                .find(|(label, _)| doc.label.ends_with(&format!("-vm-{label}")))
            {
                let vm = onesim::xml::parse(&doc.document).expect("vm parses");
                let seen = (
                    vm.value_at("STATE").to_owned(),
                    vm.value_at("LCM_STATE").to_owned(),
                );
                assert_eq!(
                    seen,
                    (expected.0.to_string(), expected.1.to_string()),
                    "{}",
                    doc.label
                );
                states_seen += 1;
            }
            let errors = schema_errors(
                &doc.document,
                &xsd_dir(release).join(doc.schema),
                &doc.label,
            );
            validated += 1;
            let accepted = errors.is_empty() || (doc.undeployed && errors == pending_deviation);
            if !accepted {
                failures.push(format!(
                    "{} ({}): {}",
                    doc.label,
                    doc.schema,
                    errors.join(" | ")
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} documents fail their schema:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(validated > 80, "only {validated} documents checked");
    assert_eq!(
        states_seen,
        4 * VM_STATES.len(),
        "every VM state on every release"
    );
}

#[test]
fn a_broken_document_is_caught() {
    let errors = schema_errors(
        "<VM><ID>x</ID></VM>",
        &xsd_dir("7.4.0").join("vm.xsd"),
        "broken",
    );
    assert!(
        errors.iter().any(|e| e.contains("ID")),
        "the bad ID is named: {errors:?}"
    );
}
