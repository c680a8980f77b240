//! Nothing waits on a poll interval that it can be told about: with the
//! workers' idle poll and the poller's interval at a minute, queued jobs
//! still run and slivers still reach `geni_ready` in moments — the
//! workers are woken by the commit that queued the jobs (through
//! PostgreSQL's `NOTIFY` when another process queued them), the poller by
//! the workers' finished jobs and by the simulated cloud's changes. On
//! OpenNebula, which cannot tell, the poller looks when a job ends and
//! polls sooner while VMs are in transition.

mod core_support;
mod jobs_support;

on_both_stores!(
    a_job_queued_while_the_workers_wait_runs_before_their_idle_poll,
    a_job_queued_through_another_pool_of_the_store_wakes_the_workers,
    a_started_sliver_is_ready_before_any_poll_interval_passed,
);
on_both_stores!(OpenNebula: a_vm_on_opennebula_is_followed_when_its_jobs_end,);

use chrono::{TimeDelta, Utc};
use geni_am::jobs::JobsConfig;
use geni_am::model::{JobKind, OperationalState};
use geni_am::store::Store;
use geni_am::store::jobs;
use jobs_support::{Harness, SLICE, eventually_within};
use std::time::Duration;

/// The safety nets at a minute: anything that happens within
/// [`WITHIN`] was not waiting for them.
fn patient_jobs() -> JobsConfig {
    JobsConfig {
        idle_poll_ms: 60_000,
        poll_interval_ms: 60_000,
        reconcile_interval_secs: 3600,
        ..JobsConfig::default()
    }
}

/// Well under the minute of [`patient_jobs`].
const WITHIN: Duration = Duration::from_secs(20);

/// Queues through `store` a job for `sliver`, one the store does not
/// hold (so it has nothing to do).
fn queue_job(store: &Store, sliver: &str) {
    store
        .write(|conn| {
            jobs::enqueue(
                conn,
                JobKind::Start,
                SLICE,
                Some(sliver),
                &serde_json::json!({}),
                Utc::now(),
            )
        })
        .unwrap();
}

/// Waits until the job of `sliver` is done.
fn wait_done(store: &Store, sliver: &str) {
    eventually_within(&format!("the job of {sliver} done"), WITHIN, || {
        let jobs = store.jobs_of_sliver(sliver).unwrap();
        jobs.iter().all(|job| job.state.as_str() == "done")
    });
}

fn a_job_queued_while_the_workers_wait_runs_before_their_idle_poll(mut harness: Harness) {
    harness.start(patient_jobs());
    // The first job may be claimed by the workers' first look; once it
    // ran, they wait.
    queue_job(&harness.store, "urn:first");
    wait_done(&harness.store, "urn:first");
    queue_job(&harness.store, "urn:second");
    wait_done(&harness.store, "urn:second");
}

/// `serve` runs the jobs on a pool of their own; jobs the API queues
/// through its pool must still wake them.
fn a_job_queued_through_another_pool_of_the_store_wakes_the_workers(mut harness: Harness) {
    let api = harness.store.with_own_pool(2).unwrap();
    harness.start(patient_jobs());
    queue_job(&api, "urn:first");
    wait_done(&harness.store, "urn:first");
    queue_job(&api, "urn:second");
    wait_done(&harness.store, "urn:second");
}

fn a_started_sliver_is_ready_before_any_poll_interval_passed(mut harness: Harness) {
    harness.start(patient_jobs());
    let urns = harness.provision(Utc::now() + TimeDelta::days(1));
    for urn in &urns {
        harness.wait_for_within(urn, "geni_notready", WITHIN, |row| {
            row.operational_state == OperationalState::NotReady
        });
    }
    // The workers and the poller now wait; the start job wakes a worker,
    // its end the poller, which finds the VM booting (300 ms) and is told
    // by the simulated cloud when it runs.
    harness.act(&urns[0], "geni_start", None);
    harness.wait_for_within(&urns[0], "geni_ready", WITHIN, |row| {
        row.operational_state == OperationalState::Ready
    });
}

#[test]
fn a_job_queued_by_another_process_on_postgresql_wakes_the_waiting_workers() {
    let Some(mut harness) = Harness::postgres("wake_across_processes") else {
        return;
    };
    harness.start(patient_jobs());
    queue_job(&harness.store, "urn:first");
    wait_done(&harness.store, "urn:first");
    // A store of its own has a bell of its own: only PostgreSQL's NOTIFY
    // reaches the workers of the first.
    let other = harness.another_store();
    queue_job(&other, "urn:second");
    wait_done(&harness.store, "urn:second");
}

fn a_vm_on_opennebula_is_followed_when_its_jobs_end(mut harness: Harness) {
    harness.start(patient_jobs());
    let request = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
        <rspec xmlns=\"http://www.geni.net/resources/rspec/3\" type=\"request\">\n\
        <node client_id=\"vm\" exclusive=\"false\"><sliver_type name=\"small\"/></node>\n\
        </rspec>\n";
    let urns = harness.provision_document(SLICE, request, Utc::now() + TimeDelta::days(1));
    harness.wait_for_within(&urns[0], "geni_notready", WITHIN, |row| {
        row.operational_state == OperationalState::NotReady
    });
    harness.act(&urns[0], "geni_start", None);
    harness.wait_for_within(&urns[0], "geni_ready", WITHIN, |row| {
        row.operational_state == OperationalState::Ready
    });
}
