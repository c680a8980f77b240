//! The upkeep jobs over a SQLite store and the simulated cloud: the reaper
//! deletes slivers when they expire, to the second; the reconciler
//! destroys VMs no sliver owns and fails slivers whose VM vanished; a job
//! left by a crashed worker is claimed again and creates no second VM; the
//! poller reads a waiting sliver only once its jobs have run.

mod core_support;
mod jobs_support;

on_both_stores!(
    the_reaper_deletes_expired_slivers_within_a_second_and_destroys_their_vms,
    the_reconciler_destroys_orphans_and_fails_slivers_whose_vm_vanished,
    a_job_of_a_crashed_worker_is_claimed_again_without_a_second_vm,
    the_poller_reads_waiting_slivers_only_once_their_jobs_have_run,
);

use chrono::{TimeDelta, Utc};
use geni_am::model::OperationalState as Op;
use geni_am_backend::Compute;
use jobs_support::{AUTHORITY, Harness, fast_jobs, small_vm};

fn the_reaper_deletes_expired_slivers_within_a_second_and_destroys_their_vms(mut harness: Harness) {
    let expires = Utc::now() + TimeDelta::seconds(3);
    let urns = harness.provision(expires);
    let other_slice = "urn:publicid:IDN+ch.geni.net:jobs+slice+other";
    let long_lived = harness.provision_into(other_slice, Utc::now() + TimeDelta::days(1));
    harness.start(fast_jobs());
    for urn in &urns {
        let row = harness.wait_for(urn, "unallocated", |row| {
            row.allocation_state.as_str() == "geni_unallocated"
        });
        assert_eq!(
            row.expires_at.timestamp(),
            expires.timestamp(),
            "the expiry is kept"
        );
    }
    let events = harness.store.slice_events(jobs_support::SLICE).unwrap();
    for urn in &urns {
        let reaped = events
            .iter()
            .find(|e| e.kind.as_str() == "expired" && e.sliver_urn.as_deref() == Some(urn))
            .expect("an expired event");
        let late = reaped.at.timestamp() - expires.timestamp();
        assert!((0..=1).contains(&late), "reaped {late} s after expiry");
    }
    harness.wait_cloud("only the long-lived VMs", |cloud| {
        let tags: Vec<String> = cloud
            .list_vms()
            .unwrap()
            .into_iter()
            .map(|v| v.tag)
            .collect();
        tags.len() == 2 && long_lived.iter().all(|urn| tags.contains(urn))
    });
    for urn in &long_lived {
        let row = harness.store.sliver(urn).unwrap().unwrap();
        assert_eq!(row.allocation_state.as_str(), "geni_provisioned");
    }
}

fn the_reconciler_destroys_orphans_and_fails_slivers_whose_vm_vanished(mut harness: Harness) {
    let urns = harness.provision(Utc::now() + TimeDelta::days(1));
    let orphan_tag = format!("urn:publicid:IDN+{AUTHORITY}+sliver+left-by-a-crash");
    let orphan = harness
        .cloud
        .create_vm(&small_vm(&orphan_tag, None))
        .unwrap();
    harness.start(fast_jobs());
    for urn in &urns {
        harness.wait_state(urn, Op::NotReady);
    }
    harness.wait_cloud("the orphan destroyed", |cloud| {
        cloud.find_vm(&orphan_tag).unwrap().is_none()
    });
    assert_eq!(
        harness.cloud.observe(&orphan).unwrap().state,
        geni_am_backend::VmState::Gone
    );

    assert!(harness.cloud.vanish(&urns[0]));
    let failed = harness.wait_state(&urns[0], Op::Failed);
    assert_eq!(failed.error, "the VM disappeared from the simulated cloud");
    assert_eq!(
        harness
            .store
            .sliver(&urns[1])
            .unwrap()
            .unwrap()
            .operational_state
            .as_str(),
        "geni_notready"
    );
}

fn a_job_of_a_crashed_worker_is_claimed_again_without_a_second_vm(mut harness: Harness) {
    let urns = harness.provision(Utc::now() + TimeDelta::days(1));
    // A worker claims the first job, creates the VM and dies before
    // recording anything.
    let claimed = harness
        .store
        .claim_jobs("crashed-worker", Utc::now(), TimeDelta::seconds(1), 1)
        .unwrap();
    let job = &claimed[0];
    let sliver = harness
        .store
        .sliver(job.sliver_urn.as_deref().unwrap())
        .unwrap()
        .unwrap();
    let first = harness
        .cloud
        .create_vm(&small_vm(&sliver.urn, Some(sliver.component_id.clone())))
        .unwrap();
    harness.start(fast_jobs());
    for urn in &urns {
        harness.wait_state(urn, Op::NotReady);
    }
    let row = harness.store.sliver(&sliver.urn).unwrap().unwrap();
    assert_eq!(row.annotations.value().clone().backend_id, Some(first.0));
    let jobs = harness.store.jobs_of_sliver(&sliver.urn).unwrap();
    assert_eq!(jobs[0].state.as_str(), "done");
    assert!(jobs[0].attempts >= 2, "the job was claimed again");
    assert_eq!(harness.cloud.vms_created(), 2, "one VM per sliver");
}

fn the_poller_reads_waiting_slivers_only_once_their_jobs_have_run(harness: Harness) {
    let mut urns = harness.provision(Utc::now() + TimeDelta::days(1));
    assert!(
        harness.store.slivers_awaiting_backend().unwrap().is_empty(),
        "slivers whose provision job is queued are left to the job"
    );
    let jobs = harness
        .store
        .claim_jobs("test", Utc::now(), TimeDelta::minutes(1), 100)
        .unwrap();
    assert_eq!(jobs.len(), urns.len());
    for job in &jobs {
        harness
            .store
            .finish_job(&job.id, "test", Utc::now())
            .unwrap();
    }
    let mut waiting: Vec<String> = harness
        .store
        .slivers_awaiting_backend()
        .unwrap()
        .into_iter()
        .map(|row| row.urn)
        .collect();
    waiting.sort();
    urns.sort();
    assert_eq!(
        waiting, urns,
        "with their jobs done they wait for the backend"
    );
}
