//! The jobs against an OpenNebula simulator that goes down and refuses:
//! an outage longer than the old retry budget (eight attempts) holds the
//! work up instead of failing it — Status names the outage in the held-up
//! slivers' `geni_error`, ListResources advertises nothing available —
//! and when oned answers again the deleted slivers' VMs are terminated
//! and the held-up VMs created; a quota refusal fails its sliver at once
//! with oned's message and releases its capacity.

mod core_support;
mod jobs_support;

on_both_stores!(OpenNebula:
    an_outage_longer_than_the_retry_budget_holds_work_until_oned_answers,
    a_quota_refusal_fails_the_sliver_at_once_and_releases_its_capacity,
);

use chrono::{DateTime, TimeDelta, Utc};
use geni_am::core::types::{OperationalState as Op, Selector, SliverInfo};
use geni_am::jobs::JobsConfig;
use geni_am::store::jobs::JobState;
use geni_rspec::tree::Document;
use geni_rspec::view::RSpec;
use jobs_support::{Harness, SLICE, eventually_within, fast_jobs};
use onesim::TransportFault;
use std::time::Duration;

/// The slice provisioned while oned is down.
const LATE: &str = "urn:publicid:IDN+ch.geni.net:jobs+slice+late";
/// The attempts after which a job used to fail for good.
const OLD_BUDGET: i64 = 8;
/// OpenNebula's VM state DONE.
const DONE: i32 = 6;

/// A request for one `small` VM per client id, placed by the aggregate.
fn vms(client_ids: &[&str]) -> String {
    let nodes: String = client_ids
        .iter()
        .map(|id| {
            format!(
                "  <node client_id=\"{id}\" exclusive=\"false\">\n    <sliver_type name=\"small\"/>\n  </node>\n"
            )
        })
        .collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" type=\"request\">\n{nodes}</rspec>\n"
    )
}

fn tomorrow() -> DateTime<Utc> {
    Utc::now() + TimeDelta::days(1)
}

/// The sliver reports Status gives for `slice`.
fn status(harness: &Harness, slice: &str) -> Vec<SliverInfo> {
    let selector = Selector::Slice(slice.into());
    harness.aggregate.status(&selector).unwrap().slivers
}

/// Whether each node of the full advertisement is available.
fn advertised_available(harness: &Harness) -> Vec<bool> {
    let ad = harness.aggregate.advertisement(false).unwrap();
    let doc = Document::parse(ad.as_bytes()).unwrap();
    RSpec::new(&doc)
        .unwrap()
        .nodes()
        .map(|node| node.available_now().unwrap())
        .collect()
}

/// The OpenNebula id of the sliver's VM.
fn vm_id(harness: &Harness, urn: &str) -> i32 {
    let sliver = harness.store.sliver(urn).unwrap().unwrap();
    let id = sliver.annotations().unwrap().backend_id.expect("a VM");
    id.parse().unwrap()
}

fn an_outage_longer_than_the_retry_budget_holds_work_until_oned_answers(mut harness: Harness) {
    // One worker, so the order in which held-up jobs resume is the
    // order they are claimed in; retries every second.
    harness.start(JobsConfig {
        workers: 1,
        retry_base_secs: 1,
        retry_max_secs: 1,
        ..fast_jobs()
    });
    let old = harness.provision_document(SLICE, &vms(&["old"]), tomorrow());
    harness.wait_state(&old[0], Op::NotReady);
    let old_vm = vm_id(&harness, &old[0]);
    assert_eq!(advertised_available(&harness), [true]);

    let onesim = harness.onesim();
    onesim.begin_outage(TransportFault::Drop);
    let new = harness.provision_document(LATE, &vms(&["new"]), tomorrow());
    harness.delete(SLICE);
    eventually_within(
        "the held-up provision retried beyond the old budget",
        Duration::from_secs(60),
        || {
            // Between two attempts: while one runs, the job is `running`.
            let jobs = harness.store.jobs_of_sliver(&new[0]).unwrap();
            jobs[0].attempts > OLD_BUDGET && jobs[0].state != JobState::Running.as_str()
        },
    );
    let provision = &harness.store.jobs_of_sliver(&new[0]).unwrap()[0];
    assert_eq!(provision.state, JobState::Queued.as_str(), "{provision:?}");
    let outage = harness
        .store
        .outage()
        .unwrap()
        .expect("the outage recorded");
    assert!(outage.detail.contains("unreachable"), "{outage:?}");
    let held = status(&harness, LATE).remove(0);
    assert_eq!(held.operational, Op::PendingAllocation, "{held:?}");
    assert!(
        held.error
            .starts_with("held up: the cloud has not answered since")
            && !held.error.contains("127.0.0.1"),
        "geni_error names the outage, not the backend's endpoint: {:?}",
        held.error
    );
    assert_eq!(advertised_available(&harness), [false], "a dead cloud");
    assert_ne!(
        onesim.vm_state(old_vm).map(|s| s.0),
        Some(DONE),
        "nothing reaches oned while down"
    );
    assert_eq!(onesim.vm_ids(), [old_vm], "no VM created while down");

    onesim.end_outage();
    harness.wait_state(&new[0], Op::NotReady);
    assert_eq!(
        onesim.vm_state(old_vm).map(|s| s.0),
        Some(DONE),
        "the deleted sliver's VM terminated"
    );
    assert!(
        harness.store.outage().unwrap().is_none(),
        "the outage ended"
    );
    let resumed = status(&harness, LATE).remove(0);
    assert_eq!(resumed.error, "", "{resumed:?}");
    assert_eq!(advertised_available(&harness), [true]);
    let destroy = harness.store.jobs_of_sliver(&old[0]).unwrap();
    let destroy = destroy.last().unwrap();
    assert_eq!(
        (destroy.kind.as_str(), destroy.state.as_str()),
        ("destroy", "done")
    );
}

fn a_quota_refusal_fails_the_sliver_at_once_and_releases_its_capacity(mut harness: Harness) {
    harness.onesim().set_vm_quota(Some(0));
    harness.start(fast_jobs());
    let urns = harness.provision_document(SLICE, &vms(&["over-quota"]), tomorrow());
    let failed = harness.wait_state(&urns[0], Op::Failed);
    assert!(
        failed.error.contains("limit of 0 reached for VMS quota"),
        "geni_error carries oned's message: {:?}",
        failed.error
    );
    assert_eq!(
        (failed.cpus, failed.memory_mb, failed.exclusive),
        (0, 0, false),
        "a sliver without a VM holds no capacity"
    );
    let jobs = harness.store.jobs_of_sliver(&urns[0]).unwrap();
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!(
        (jobs[0].state.as_str(), jobs[0].attempts),
        ("failed", 1),
        "not retried"
    );
    assert_eq!(harness.onesim().call_count("one.template.instantiate"), 1);
}
