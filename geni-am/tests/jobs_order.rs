//! The order of the jobs of one sliver and of a link: `geni_start` right
//! after Provision (as omni, jFed and geni-lib scripts do) brings the
//! sliver up as soon as the cloud has defined its VM, not after a retry
//! backoff; a Delete supersedes the queued jobs of a sliver; and a link's
//! network goes right after its last VM, even when the Delete comes while
//! the slivers' start jobs wait for their VMs, with two workers and
//! retries too slow to hide a job waiting in backoff.

mod core_support;
mod jobs_support;

on_both_stores!(
    start_right_after_provision_is_ready_once_the_vm_is_defined,
    a_delete_supersedes_the_queued_jobs_of_its_sliver,
    a_link_network_goes_right_after_its_last_vm_and_is_never_abandoned,
);

use chrono::{TimeDelta, Utc};
use geni_am::jobs::JobsConfig;
use geni_am::model::JobState;
use geni_am::model::OperationalState as Op;
use jobs_support::{Harness, SLICE, eventually_within, fast_jobs};
use std::time::Duration;

/// Retries so slow that any job waiting in backoff misses the deadlines.
fn slow_retries() -> JobsConfig {
    JobsConfig {
        retry_base_secs: 60,
        retry_max_secs: 60,
        ..fast_jobs()
    }
}

/// Far below the 60 s retry backoff, far above a definition, a boot and
/// a few poll intervals.
const DEADLINE: Duration = Duration::from_secs(10);

/// Provisions the two slivers on a cloud slow to define VMs, asks for
/// `geni_start` at once, and starts the jobs with [`slow_retries`];
/// returns the sliver URNs.
fn started_right_after_provision(harness: &mut Harness) -> Vec<String> {
    harness.slow_creation(1500);
    let urns = harness.provision(Utc::now() + TimeDelta::days(1));
    for urn in &urns {
        harness.act(urn, "geni_start", None);
    }
    harness.start(slow_retries());
    urns
}

fn start_right_after_provision_is_ready_once_the_vm_is_defined(mut harness: Harness) {
    let urns = started_right_after_provision(&mut harness);
    for urn in &urns {
        harness.wait_for_within(urn, "geni_ready", DEADLINE, |row| {
            row.operational_state == Op::Ready
        });
        let jobs = harness.store.jobs_of_sliver(urn).unwrap();
        let kinds: Vec<&str> = jobs.iter().map(|j| j.kind.as_str()).collect();
        assert_eq!(kinds, ["provision", "start"], "{jobs:?}");
        for job in &jobs {
            assert_eq!(job.state, JobState::Done, "{job:?}");
            assert_eq!(job.attempts, 1, "waiting is no failed attempt: {job:?}");
        }
    }
}

fn a_delete_supersedes_the_queued_jobs_of_its_sliver(mut harness: Harness) {
    let urns = harness.provision(Utc::now() + TimeDelta::days(1));
    harness.act(&urns[0], "geni_start", None);
    harness.delete(SLICE);
    let jobs = harness.store.jobs_of_sliver(&urns[0]).unwrap();
    let states: Vec<(&str, &str)> = jobs
        .iter()
        .map(|j| (j.kind.as_str(), j.state.as_str()))
        .collect();
    assert_eq!(
        states,
        [
            ("provision", "done"),
            ("start", "done"),
            ("destroy", "queued")
        ]
    );
    harness.start(slow_retries());
    harness.wait_cloud_within("the destroy done", DEADLINE, |_| {
        let jobs = harness.store.jobs_of_sliver(&urns[0]).unwrap();
        jobs.iter().all(|j| j.state == JobState::Done)
    });
    assert!(
        harness.cloud.spec_of(&urns[0]).is_none(),
        "no VM was created"
    );
}

fn a_link_network_goes_right_after_its_last_vm_and_is_never_abandoned(mut harness: Harness) {
    let urns = started_right_after_provision(&mut harness);
    harness.wait_cloud_within("both VMs on the network", DEADLINE, |cloud| {
        cloud.networks().len() == 1 && urns.iter().all(|urn| cloud.spec_of(urn).is_some())
    });
    harness.delete(SLICE);
    harness.wait_cloud_within("no network left", DEADLINE, |cloud| {
        cloud.networks().is_empty()
    });
    // The job forgets the network right after the cloud removed it.
    eventually_within("the link network forgotten", DEADLINE, || {
        harness.store.link_networks_of(SLICE).unwrap().is_empty()
    });
}
