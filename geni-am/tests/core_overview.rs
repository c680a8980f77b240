//! The operator's views (`core::overview`) over a store the core wrote:
//! slices with counts by state, slivers with their hosts, the job queue,
//! the audit log, capacity as Allocate counts it, slices expiring soon,
//! and the drain state.

mod core_support;

use chrono::TimeDelta;
use core_support::*;
use geni_am::core::overview::{self, StateFilter};
use geni_am::model::{AllocationState, EventKind, JobKind, JobState, OperationalState};

#[test]
fn a_slice_is_listed_with_its_live_slivers_counted_by_state() {
    let f = fixture();
    provisioned(&f, &["n1", "n2"]);
    f.am.allocate(&principal(30), SLICE, &request(&["n3"], "default-vm"))
        .unwrap();
    let slices = overview::slices(f.am.store()).unwrap();
    assert_eq!(slices.len(), 1);
    let s = &slices[0];
    assert_eq!(s.urn, SLICE);
    assert_eq!(s.live_slivers, 3);
    assert_eq!(s.by_state.get("geni_pending_allocation"), Some(&2));
    assert_eq!(s.by_state.get("geni_allocated"), Some(&1));
    assert_eq!(
        s.next_expiry,
        Some(start() + TimeDelta::minutes(10)),
        "the allocated sliver expires first"
    );
    assert!(s.shut_down.is_none());
    let json = serde_json::to_value(s).unwrap();
    assert_eq!(json["next_expiry"], "2026-01-01T00:10:00Z");
}

#[test]
fn slivers_are_listed_by_slice_and_state_with_their_host() {
    let f = fixture();
    let urns = provisioned(&f, &["n1", "n2"]);
    f.am.delete(&principal(30), &slivers(&[&urns[1]])).unwrap();
    let live = overview::slivers(f.am.store(), Some(SLICE), None).unwrap();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].urn, urns[0]);
    assert_eq!(live[0].client_id, "n1");
    assert_eq!(live[0].allocation_state, AllocationState::Provisioned);
    assert!(live[0].host == "h1" || live[0].host == "h2", "{live:?}");
    let deleted = overview::slivers(
        f.am.store(),
        None,
        Some(StateFilter::Allocation(AllocationState::Unallocated)),
    )
    .unwrap();
    assert_eq!(deleted.len(), 1);
    assert_eq!(deleted[0].urn, urns[1]);
    assert!(deleted[0].deleted.is_some());
    let ready = overview::slivers(
        f.am.store(),
        None,
        Some(StateFilter::Operational(OperationalState::Ready)),
    )
    .unwrap();
    assert!(ready.is_empty(), "no job ran: {ready:?}");
    let other = overview::slivers(f.am.store(), Some("urn:publicid:IDN+x+slice+y"), None).unwrap();
    assert!(other.is_empty());
}

#[test]
fn the_queue_shows_the_jobs_with_their_age_and_the_oldest_wait() {
    let f = fixture();
    let urns = provisioned(&f, &["n1"]);
    f.clock.advance(TimeDelta::seconds(90));
    let queue = overview::jobs(f.am.store(), f.clock.now(), false, None).unwrap();
    assert_eq!((queue.queued, queue.running), (1, 0));
    assert_eq!(queue.oldest_queued_age_secs, Some(90));
    assert_eq!(queue.jobs.len(), 1);
    assert_eq!(queue.jobs[0].kind, JobKind::Provision);
    assert_eq!(queue.jobs[0].state, JobState::Queued);
    assert_eq!(queue.jobs[0].sliver_urn.as_deref(), Some(urns[0].as_str()));
    assert_eq!(queue.jobs[0].age_secs, 90);
    let failed = overview::jobs(f.am.store(), f.clock.now(), true, None).unwrap();
    assert!(failed.jobs.is_empty());
    assert_eq!(failed.queued, 1, "the depth is given with the failures too");
}

#[test]
fn a_limited_queue_lists_its_head_and_still_counts_every_job() {
    let f = fixture();
    let urns = provisioned(&f, &["n1", "n2", "n3"]);
    let head = overview::jobs(f.am.store(), f.clock.now(), false, Some(2)).unwrap();
    assert_eq!(head.queued, 3);
    let listed: Vec<_> = head.jobs.iter().map(|j| j.sliver_urn.clone()).collect();
    let all = overview::jobs(f.am.store(), f.clock.now(), false, None).unwrap();
    let first_two: Vec<_> = all
        .jobs
        .iter()
        .take(2)
        .map(|j| j.sliver_urn.clone())
        .collect();
    assert_eq!(all.jobs.len(), urns.len());
    assert_eq!(listed, first_two, "the head of the queue, in queue order");
}

#[test]
fn the_audit_log_is_read_back_by_slice_time_and_limit() {
    let f = fixture();
    provisioned(&f, &["n1"]);
    f.clock.advance(TimeDelta::hours(1));
    f.am.delete(&principal(30), &slice()).unwrap();
    let all = overview::events(f.am.store(), Some(SLICE), None, 100).unwrap();
    let kinds: Vec<EventKind> = all.iter().map(|e| e.kind).collect();
    assert_eq!(kinds.first(), Some(&EventKind::Allocate), "{kinds:?}");
    assert!(
        kinds.contains(&EventKind::Queued(JobKind::Provision)),
        "{kinds:?}"
    );
    assert!(kinds.contains(&EventKind::Delete), "{kinds:?}");
    let later = overview::events(
        f.am.store(),
        None,
        Some(start() + TimeDelta::minutes(30)),
        100,
    )
    .unwrap();
    assert!(!later.is_empty());
    assert!(
        later
            .iter()
            .all(|e| e.at >= start() + TimeDelta::minutes(30))
    );
    let last = overview::events(f.am.store(), None, None, 1).unwrap();
    assert_eq!(last.len(), 1);
    assert_eq!(last[0].seq, all.last().unwrap().seq, "the newest is kept");
    let none = overview::events(f.am.store(), Some("urn:publicid:IDN+x+slice+y"), None, 9).unwrap();
    assert!(none.is_empty());
}

#[test]
fn capacity_counts_what_allocate_counts() {
    let f = fixture_with(&[host("h1", 4)]);
    provisioned(&f, &["n1", "n2"]);
    let hosts = overview::capacity(f.am.store(), f.clock.now()).unwrap();
    assert_eq!(hosts.len(), 1);
    let h = &hosts[0];
    assert_eq!(h.name, "h1");
    assert_eq!((h.cpus, h.cpus_used, h.cpus_free), (4, 2, 2));
    assert_eq!(
        (h.memory_mb, h.memory_mb_used, h.memory_mb_free),
        (4096, 2048, 2048)
    );
    assert_eq!((h.vms, h.vms_used, h.vms_free), (4, 2, 2));
    f.am.delete(&principal(30), &slice()).unwrap();
    let h = &overview::capacity(f.am.store(), f.clock.now()).unwrap()[0];
    assert_eq!(
        h.vms_used, 2,
        "deleted slivers count until their VMs are destroyed"
    );
}

#[test]
fn slices_expiring_within_the_window_are_listed_soonest_first() {
    let f = fixture();
    provisioned(&f, &["n1"]);
    let now = f.clock.now();
    assert!(
        overview::expiring(f.am.store(), now, TimeDelta::days(1))
            .unwrap()
            .is_empty(),
        "a week's lease is not expiring within a day"
    );
    let soon = overview::expiring(f.am.store(), now, TimeDelta::days(8)).unwrap();
    assert_eq!(soon.len(), 1);
    assert_eq!(soon[0].urn, SLICE);
}

#[test]
fn a_fresh_aggregate_is_not_draining() {
    let f = fixture();
    let drain = overview::drain(f.am.store()).unwrap();
    assert!(!drain.draining);
    assert_eq!(
        serde_json::to_value(&drain).unwrap(),
        serde_json::json!({"draining": false, "since": null, "operator": null, "reason": null})
    );
}
