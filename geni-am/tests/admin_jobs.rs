//! `geni-am admin` beside running background jobs, as beside `serve`:
//! the slivers an operator deletes have their VMs destroyed by the jobs,
//! and a slice an operator shuts down has its running VMs stopped — on
//! SQLite and on PostgreSQL.

mod core_support;
mod jobs_support;

on_both_stores!(
    deleted_slivers_lose_their_vms_through_the_jobs,
    a_shut_down_slice_has_its_vms_stopped_through_the_jobs
);

use chrono::{TimeDelta, Utc};
use geni_am::model::OperationalState as Op;
use geni_am_backend::{Compute, VmState};
use jobs_support::{Harness, SLICE, fast_jobs};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A development configuration (in `dir`) whose store is the harness's.
fn config_of(harness: &Harness, dir: &tempfile::TempDir) -> PathBuf {
    let made = Command::new(env!("CARGO_BIN_EXE_geni-am"))
        .args(["dev", "init", "--dir", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(made.status.code(), Some(0), "{made:?}");
    let config = dir.path().join("geni-am.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let text = text.replace(
        "url = \"geni-am.sqlite\"",
        &format!("url = \"{}\"", harness.url()),
    );
    std::fs::write(&config, text).unwrap();
    config
}

/// Runs `geni-am admin --config CONFIG ARGS` as operator `ops`; it must
/// succeed.
fn admin(config: &Path, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_geni-am"))
        .args([
            "admin",
            "--config",
            config.to_str().unwrap(),
            "--operator",
            "ops",
        ])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Provisions the corpus slice and waits for its VMs; the sliver URNs.
fn running(harness: &mut Harness) -> Vec<String> {
    let urns = harness.provision(Utc::now() + TimeDelta::days(5));
    harness.start(fast_jobs());
    for urn in &urns {
        harness.wait_state(urn, Op::NotReady);
    }
    urns
}

fn deleted_slivers_lose_their_vms_through_the_jobs(mut harness: Harness) {
    let dir = tempfile::tempdir().unwrap();
    let config = config_of(&harness, &dir);
    let urns = running(&mut harness);
    assert_eq!(harness.cloud.list_vms().unwrap().len(), 2);
    admin(&config, &["delete", &urns[0], "--reason", "stuck"]);
    harness.wait_cloud("one VM left", |cloud| cloud.list_vms().unwrap().len() == 1);
    admin(&config, &["delete", &urns[1]]);
    harness.wait_cloud("no VM left", |cloud| cloud.list_vms().unwrap().is_empty());
}

fn a_shut_down_slice_has_its_vms_stopped_through_the_jobs(mut harness: Harness) {
    let dir = tempfile::tempdir().unwrap();
    let config = config_of(&harness, &dir);
    let urns = running(&mut harness);
    for urn in &urns {
        harness.act(urn, "geni_start", None);
        harness.wait_state(urn, Op::Ready);
    }
    admin(&config, &["shutdown", SLICE, "--reason", "abuse report"]);
    for urn in &urns {
        let row = harness.wait_state(urn, Op::NotReady);
        let vm = geni_am_backend::VmHandle(row.annotations.value().backend_id.clone().unwrap());
        assert_eq!(harness.cloud.observe(&vm).unwrap().state, VmState::Stopped);
    }
    assert_eq!(
        harness.cloud.list_vms().unwrap().len(),
        2,
        "kept for forensics"
    );
}
