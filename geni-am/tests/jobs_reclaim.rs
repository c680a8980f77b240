//! A process killed while a job runs leaves that job leased for
//! `lease_secs`. Started again under the same instance name, it takes up
//! at once the jobs its dead predecessor held — a deleted sliver's VM is
//! destroyed and its capacity free within a second of start — while jobs
//! leased by another instance sharing the database keep their lease.

mod core_support;
mod jobs_support;

on_both_stores!(a_restarted_instance_frees_the_capacity_its_killed_run_held_within_a_second,);

use chrono::{TimeDelta, Utc};
use geni_am::store::components;
use geni_am::store::jobs::JobRow;
use geni_am_backend::Compute;
use jobs_support::{Harness, SLICE, eventually_within, fast_jobs};
use std::time::Duration;

/// The one destroy job of `urn`.
fn destroy_job(harness: &Harness, urn: &str) -> JobRow {
    harness
        .store
        .jobs_of_sliver(urn)
        .unwrap()
        .into_iter()
        .find(|job| job.kind.as_str() == "destroy")
        .expect("a destroy job")
}

/// Slivers counted on the store's components.
fn slivers_holding_capacity(harness: &Harness) -> i64 {
    let usage = harness
        .store
        .read(|conn| components::usage(conn, Utc::now()))
        .unwrap();
    usage.values().map(|u| u.slivers).sum()
}

fn a_restarted_instance_frees_the_capacity_its_killed_run_held_within_a_second(
    mut harness: Harness,
) {
    let urns = harness.provision(Utc::now() + TimeDelta::days(1));
    let config = || {
        let mut config = fast_jobs();
        config.lease_secs = 60;
        config.instance_id = "am.test@127.0.0.1:8443".into();
        config
    };
    harness.start(config());
    for urn in &urns {
        harness.wait_state(urn, geni_am::model::OperationalState::NotReady);
    }
    harness.jobs.take().expect("running").stop();
    harness.delete(SLICE);
    // The killed run had claimed the first destroy; another instance on
    // the same database holds the second.
    let lease = TimeDelta::seconds(60);
    let dead = harness
        .store
        .claim_jobs("am.test@127.0.0.1:8443/0ld-run-w0", Utc::now(), lease, 1)
        .unwrap();
    let other = harness
        .store
        .claim_jobs("am.other@127.0.0.1:8443/live-run-w0", Utc::now(), lease, 1)
        .unwrap();
    assert_eq!((dead.len(), other.len()), (1, 1));
    let dead_urn = dead[0].sliver_urn.clone().unwrap();
    let other_urn = other[0].sliver_urn.clone().unwrap();
    assert_eq!(slivers_holding_capacity(&harness), 2);

    harness.start(config());
    eventually_within(
        "the killed run's destroy done and its capacity free",
        Duration::from_secs(1),
        || {
            destroy_job(&harness, &dead_urn).state.as_str() == "done"
                && slivers_holding_capacity(&harness) == 1
        },
    );
    harness.wait_cloud("the VM destroyed", |cloud| {
        cloud.find_vm(&dead_urn).unwrap().is_none()
    });
    let kept = destroy_job(&harness, &other_urn);
    assert_eq!(
        kept.state.as_str(),
        "running",
        "another instance's lease is kept"
    );
    assert_eq!(
        kept.lease_owner.as_deref(),
        Some("am.other@127.0.0.1:8443/live-run-w0")
    );
    assert_eq!(kept.lease_expires, other[0].lease_expires);
}
