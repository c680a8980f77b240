//! The job queue: claims in creation order with a lease, only by the
//! holder finished, retried or failed; an expired lease lets another
//! worker claim the job again; the jobs of one sliver are claimed one at
//! a time in order (a finish, of one job or a batch, may claim the next
//! in its transaction), a deferral is no attempt and a destroy supersedes the
//! queued jobs of its sliver; due destructions go first and the end of an
//! outage wakes the jobs in backoff; concurrent claimers (threads with their own
//! pools, on SQLite and PostgreSQL) never get the same job; a job queued
//! while a worker waits is handed to it at the commit, unless its sliver
//! has another job pending or the transaction does not commit, and is not
//! taken once another claimed it again; on PostgreSQL two processes
//! queueing jobs of one link take turns.

mod core_support;

use chrono::{DateTime, TimeDelta, Utc};
use core_support::*;
use geni_am::model::JobKind;
use geni_am::store::Finished;
use geni_am::store::jobs;
use geni_am::store::{Conn, Store, StoreError};
use std::collections::HashSet;
use std::sync::{Arc, Barrier};

/// Queues `n` start jobs at `now`; returns their ids in order.
fn enqueue(store: &Store, n: usize, now: DateTime<Utc>) -> Vec<String> {
    store
        .write(|conn| {
            (0..n)
                .map(|i| {
                    let sliver = format!("urn:publicid:IDN+{AUTHORITY}+sliver+s{i}");
                    jobs::enqueue(
                        conn,
                        JobKind::Start,
                        SLICE,
                        Some(&sliver),
                        &serde_json::json!({}),
                        now,
                    )
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .unwrap()
}

#[test]
fn claims_follow_creation_order_and_respect_the_holder() {
    let f = fixture();
    let store = f.am.store();
    let now = f.clock.now();
    let lease = TimeDelta::seconds(30);
    let ids = enqueue(store, 3, now);
    let a = store.claim_jobs("worker-a", now, lease, 2).unwrap();
    assert_eq!(a.iter().map(|j| j.id.clone()).collect::<Vec<_>>(), ids[..2]);
    assert!(
        a.iter()
            .all(|j| j.attempts == 1 && j.lease_owner.as_deref() == Some("worker-a"))
    );
    let b = store.claim_jobs("worker-b", now, lease, 5).unwrap();
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].id, ids[2]);
    assert!(
        store
            .claim_jobs("worker-c", now, lease, 5)
            .unwrap()
            .is_empty()
    );

    assert!(
        !store.finish_job(&ids[0], "worker-b", now).unwrap(),
        "not the holder"
    );
    assert!(store.finish_job(&ids[0], "worker-a", now).unwrap());
    assert!(
        !store.finish_job(&ids[0], "worker-a", now).unwrap(),
        "no longer held"
    );

    let later = now + TimeDelta::seconds(60);
    assert!(
        store
            .retry_job(&ids[1], "worker-a", "backend busy", later, now)
            .unwrap()
    );
    assert!(
        store
            .fail_job(&ids[2], "worker-b", "image missing", now)
            .unwrap()
    );
    assert!(
        store
            .claim_jobs("worker-c", now, lease, 5)
            .unwrap()
            .is_empty(),
        "retry waits"
    );
    let again = store.claim_jobs("worker-c", later, lease, 5).unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!(
        (again[0].id.as_str(), again[0].attempts),
        (ids[1].as_str(), 2)
    );
    assert_eq!(again[0].last_error, "backend busy");
}

/// Queues a job of `kind` for `sliver` at `now`; returns its id.
fn queue_for(store: &Store, sliver: &str, kind: JobKind, now: DateTime<Utc>) -> String {
    store
        .write(|conn| jobs::enqueue(conn, kind, SLICE, Some(sliver), &serde_json::json!({}), now))
        .unwrap()
}

/// The ids of the jobs of one sliver claimed at `now`.
fn claimed(store: &Store, now: DateTime<Utc>) -> Vec<String> {
    store
        .claim_jobs("worker", now, TimeDelta::seconds(30), 5)
        .unwrap()
        .into_iter()
        .map(|j| j.id)
        .collect()
}

#[test]
fn the_jobs_of_one_sliver_run_one_at_a_time_in_order() {
    let f = fixture();
    let store = f.am.store();
    let now = f.clock.now();
    let sliver = format!("urn:publicid:IDN+{AUTHORITY}+sliver+one");
    let queue = |kind| queue_for(store, &sliver, kind, now);
    let ids = [JobKind::Provision, JobKind::Start, JobKind::Stop].map(queue);
    assert_eq!(claimed(store, now), ids[..1], "only the first");
    assert!(claimed(store, now).is_empty(), "the next waits for it");
    assert!(
        store
            .defer_job(&ids[0], "worker", "VM being defined", now, now)
            .unwrap()
    );
    let again = store
        .claim_jobs("worker", now, TimeDelta::seconds(30), 5)
        .unwrap();
    assert_eq!(again[0].id, ids[0]);
    assert_eq!(again[0].attempts, 1, "a deferral is no attempt");
    assert!(store.finish_job(&ids[0], "worker", now).unwrap());
    assert_eq!(claimed(store, now), ids[1..2]);

    let destroy = queue(JobKind::Destroy);
    let states: Vec<&str> = store
        .jobs_of_sliver(&sliver)
        .unwrap()
        .into_iter()
        .map(|j| j.state.as_str())
        .collect();
    assert_eq!(states, ["done", "running", "done", "queued"]);
    assert!(claimed(store, now).is_empty(), "behind the running start");
    assert!(store.finish_job(&ids[1], "worker", now).unwrap());
    assert_eq!(claimed(store, now), [destroy]);
}

#[test]
fn finishing_a_job_claims_the_next_of_its_sliver_in_the_same_transaction_only_for_the_holder() {
    let f = fixture();
    let store = f.am.store();
    let now = f.clock.now();
    let lease = TimeDelta::seconds(30);
    let sliver = format!("urn:publicid:IDN+{AUTHORITY}+sliver+chain");
    let ids = [JobKind::Provision, JobKind::Start].map(|kind| queue_for(store, &sliver, kind, now));
    assert_eq!(claimed(store, now), ids[..1]);

    let (finished, next) = store
        .finish_and_claim(&[Finished::job(&ids[0])], "other", now, lease, 1)
        .unwrap();
    assert_eq!(finished, 0, "not the holder");
    assert!(next.is_empty(), "the start still waits for the provision");

    let (finished, next) = store
        .finish_and_claim(&[Finished::job(&ids[0])], "worker", now, lease, 1)
        .unwrap();
    assert_eq!(finished, 1);
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].id, ids[1]);
    assert_eq!(next[0].lease_owner.as_deref(), Some("worker"));
    assert_eq!(next[0].attempts, 1);
    let states: Vec<&str> = store
        .jobs_of_sliver(&sliver)
        .unwrap()
        .into_iter()
        .map(|j| j.state.as_str())
        .collect();
    assert_eq!(states, ["done", "running"]);

    let (finished, next) = store
        .finish_and_claim(&[Finished::job(&ids[1])], "worker", now, lease, 1)
        .unwrap();
    assert_eq!(finished, 1);
    assert!(next.is_empty(), "nothing left to claim");
}

#[test]
fn a_batch_of_jobs_is_finished_together_and_claims_the_next_of_their_slivers() {
    let f = fixture();
    let store = f.am.store();
    let now = f.clock.now();
    let lease = TimeDelta::seconds(30);
    let slivers = ["a", "b"].map(|s| format!("urn:publicid:IDN+{AUTHORITY}+sliver+{s}"));
    let provisions = slivers
        .clone()
        .map(|sliver| queue_for(store, &sliver, JobKind::Provision, now));
    let starts = slivers.map(|sliver| queue_for(store, &sliver, JobKind::Start, now));
    assert_eq!(claimed(store, now), provisions, "the starts wait");

    let done = provisions.each_ref().map(|id| Finished::job(id));
    let (held, next) = store
        .finish_and_claim(&done, "worker", now, lease, 8)
        .unwrap();
    assert_eq!(held, 2);
    let next: Vec<String> = next.into_iter().map(|j| j.id).collect();
    assert_eq!(next, starts);
    let (held, next) = store
        .finish_and_claim(&done, "worker", now, lease, 8)
        .unwrap();
    assert_eq!((held, next.len()), (0, 0), "done already, nothing left");
}

#[test]
fn due_destructions_are_claimed_before_earlier_work_and_an_outage_end_wakes_retries() {
    let f = fixture();
    let store = f.am.store();
    let now = f.clock.now();
    let earlier = now - TimeDelta::seconds(60);
    let starts = enqueue(store, 2, earlier);
    let destroy = store
        .write(|conn| {
            let sliver = format!("urn:publicid:IDN+{AUTHORITY}+sliver+gone");
            let payload = serde_json::json!({});
            jobs::enqueue(conn, JobKind::Destroy, SLICE, Some(&sliver), &payload, now)
        })
        .unwrap();
    let first = store
        .claim_jobs("worker", now, TimeDelta::seconds(30), 1)
        .unwrap();
    assert_eq!(first[0].id, destroy, "the destruction first");

    // The starts meet an outage and wait in backoff; its end wakes them.
    let held = store
        .claim_jobs("worker", now, TimeDelta::seconds(30), 2)
        .unwrap();
    assert_eq!(held.len(), 2);
    let later = now + TimeDelta::seconds(600);
    for job in &held {
        assert!(
            store
                .retry_job(&job.id, "worker", "down", later, now)
                .unwrap()
        );
    }
    assert!(store.begin_outage("down", now).unwrap());
    assert!(!store.begin_outage("down", now).unwrap(), "already begun");
    assert!(claimed(store, now).is_empty(), "in backoff");
    assert_eq!(store.end_outage(now).unwrap(), Some(now));
    assert_eq!(store.end_outage(now).unwrap(), None, "already ended");
    let mut woken = claimed(store, now);
    woken.sort();
    let mut expected = starts;
    expected.sort();
    assert_eq!(woken, expected);
}

#[test]
fn an_expired_lease_is_claimed_again() {
    let f = fixture();
    let store = f.am.store();
    let now = f.clock.now();
    let ids = enqueue(store, 1, now);
    store
        .claim_jobs("crashed", now, TimeDelta::seconds(10), 1)
        .unwrap();
    let early = now + TimeDelta::seconds(9);
    assert!(
        store
            .claim_jobs("other", early, TimeDelta::seconds(10), 1)
            .unwrap()
            .is_empty()
    );
    let late = now + TimeDelta::seconds(10);
    let taken = store
        .claim_jobs("other", late, TimeDelta::seconds(10), 1)
        .unwrap();
    assert_eq!(taken[0].id, ids[0]);
    assert_eq!(taken[0].lease_owner.as_deref(), Some("other"));
    assert!(
        !store.finish_job(&ids[0], "crashed", late).unwrap(),
        "the crashed worker lost it"
    );
}

/// Eight claimers with their own stores take one job at a time until the
/// queue of 40 is empty; every job is claimed exactly once.
fn concurrent_claims_are_disjoint(url: &str) {
    let clock = TestClock::new();
    let now = clock.now();
    enqueue(attach(url, &clock).store(), 40, now);
    let barrier = Arc::new(Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|w| {
            let store = attach(url, &clock).store().clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                let mut mine = Vec::new();
                loop {
                    let got = store
                        .claim_jobs(&format!("w{w}"), now, TimeDelta::seconds(60), 1)
                        .unwrap();
                    if got.is_empty() {
                        break mine;
                    }
                    mine.extend(got.into_iter().map(|j| j.id));
                }
            })
        })
        .collect();
    let all: Vec<String> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let unique: HashSet<&String> = all.iter().collect();
    assert_eq!(all.len(), 40, "every job claimed");
    assert_eq!(unique.len(), 40, "no job claimed twice");
}

#[test]
fn concurrent_claims_on_sqlite_are_disjoint() {
    let f = fixture();
    concurrent_claims_are_disjoint(&f.url);
}

#[test]
fn concurrent_claims_on_postgres_are_disjoint() {
    let Some(db) = PgDatabase::create("postgres_claims") else {
        return;
    };
    concurrent_claims_are_disjoint(&db.url);
}

#[test]
fn on_sqlite_a_claim_that_finds_nothing_due_does_not_wait_for_the_writers_turn() {
    let f = fixture();
    let store = f.am.store().clone();
    let now = f.clock.now();
    let lease = TimeDelta::seconds(30);
    // A job due only later: nothing is claimable now.
    let later = enqueue(&store, 1, now + TimeDelta::hours(1));
    let claimed = beside_an_open_write(&store, move |store| {
        store.claim_jobs("worker-a", now, lease, 1)
    });
    assert!(claimed.unwrap().is_empty());
    // Once due, the job is claimed as before.
    let due = store.claim_jobs("worker-a", now + TimeDelta::hours(2), lease, 1);
    assert_eq!(due.unwrap()[0].id, later[0]);
}

const SLIVER: &str = "urn:publicid:IDN+geni-am.test+sliver+handed";

/// Queues a start job of [`SLIVER`] at `now` in the transaction on `conn`.
fn start_sliver(conn: &mut Conn, now: DateTime<Utc>) -> Result<String, StoreError> {
    jobs::enqueue(
        conn,
        JobKind::Start,
        SLICE,
        Some(SLIVER),
        &serde_json::json!({}),
        now,
    )
}

/// The lease and states of `jobs`: `(id, state, owner, attempts)`.
fn leases(jobs: &[jobs::JobRow]) -> Vec<(String, String, Option<String>, i64)> {
    jobs.iter()
        .map(|j| {
            let state = j.state.as_str().to_owned();
            (j.id.clone(), state, j.lease_owner.clone(), j.attempts)
        })
        .collect()
}

/// Runs `queue` in a write transaction of `store` on a thread of its
/// own; returns once it queued, with the id it queued, the thread (which
/// answers that id once committed) and the sender that lets it commit.
fn queued_not_committed(
    store: &Store,
    queue: impl FnOnce(&mut Conn) -> Result<String, StoreError> + Send + 'static,
) -> (
    String,
    std::thread::JoinHandle<String>,
    std::sync::mpsc::Sender<()>,
) {
    use std::sync::mpsc::channel;
    let (queued, in_transaction) = channel();
    let (go, commit) = channel::<()>();
    let store = store.clone();
    let writer = std::thread::spawn(move || {
        store
            .write(|conn| {
                let id = queue(conn)?;
                queued.send(id.clone()).unwrap();
                commit.recv().unwrap();
                Ok::<_, StoreError>(id)
            })
            .unwrap()
    });
    (in_transaction.recv().unwrap(), writer, go)
}

/// Queues a start job of [`SLIVER`] at `now` while worker w1 waits to
/// take jobs under `lease`; returns the job's id.
fn handed_to_w1(store: &Store, now: DateTime<Utc>, lease: TimeDelta) -> String {
    store.hand_off().idle("w1", lease);
    queue_for(store, SLIVER, JobKind::Start, now)
}

#[test]
fn a_job_queued_while_a_worker_is_idle_is_stored_claimed_and_handed_to_it_at_the_commit() {
    let f = fixture();
    let store = f.am.store();
    let now = f.clock.now();
    let lease = TimeDelta::seconds(45);
    let id = handed_to_w1(store, now, lease);

    let handed = store.take_handed("w1").unwrap();
    let running = (id.clone(), "running".to_owned(), Some("w1".to_owned()), 1);
    assert_eq!(leases(&handed), std::slice::from_ref(&running));
    assert_eq!(handed[0].lease_expires.map(|t| t.get()), Some(now + lease));
    assert_eq!(leases(&store.jobs_of_sliver(SLIVER).unwrap()), [running]);
    // Handed over, it is no other worker's to claim, and w1 waits no more.
    assert!(claimed(store, now).is_empty());
    let next = queue_for(
        store,
        "urn:publicid:IDN+geni-am.test+sliver+other",
        JobKind::Start,
        now,
    );
    assert!(store.take_handed("w1").unwrap().is_empty());
    assert_eq!(claimed(store, now), [next]);
}

#[test]
fn a_job_behind_another_of_its_sliver_is_queued_not_handed() {
    let f = fixture();
    let store = f.am.store();
    let now = f.clock.now();
    let first = queue_for(store, SLIVER, JobKind::Start, now);
    store.hand_off().idle("w1", TimeDelta::seconds(45));
    let second = queue_for(store, SLIVER, JobKind::Stop, now);

    assert!(store.take_handed("w1").unwrap().is_empty());
    let states: Vec<_> = leases(&store.jobs_of_sliver(SLIVER).unwrap());
    assert_eq!(
        states,
        [
            (first, "queued".to_owned(), None, 0),
            (second, "queued".to_owned(), None, 0)
        ]
    );
}

#[test]
fn a_transaction_that_does_not_commit_leaves_its_worker_idle_for_the_next() {
    let f = fixture();
    let store = f.am.store();
    let now = f.clock.now();
    store.hand_off().idle("w1", TimeDelta::seconds(45));
    let refused: Result<String, StoreError> = store.write(|conn| {
        jobs::enqueue(
            conn,
            JobKind::Start,
            SLICE,
            Some(SLIVER),
            &serde_json::json!({}),
            now,
        )?;
        Err(StoreError::Migration("refused".into()))
    });
    assert!(refused.is_err());
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        store.write(|conn| -> Result<(), StoreError> {
            jobs::enqueue(
                conn,
                JobKind::Start,
                SLICE,
                Some(SLIVER),
                &serde_json::json!({}),
                now,
            )?;
            panic!("the transaction's caller failed")
        })
    }));
    assert!(panicked.is_err());
    assert!(store.jobs_of_sliver(SLIVER).unwrap().is_empty());

    let id = queue_for(store, SLIVER, JobKind::Start, now);
    assert_eq!(store.take_handed("w1").unwrap()[0].id, id);
}

#[test]
fn a_worker_woken_before_the_commit_that_reserved_it_waits_for_its_job() {
    let f = fixture();
    let store = f.am.store().clone();
    let now = f.clock.now();
    store.hand_off().idle("w1", TimeDelta::seconds(45));
    let (id, writer, go) = queued_not_committed(&store, move |conn| start_sliver(conn, now));
    let taker = {
        let store = store.clone();
        std::thread::spawn(move || store.take_handed("w1").unwrap())
    };
    // Give the taker time to find the reservation before the commit.
    std::thread::sleep(std::time::Duration::from_millis(100));
    go.send(()).unwrap();
    assert_eq!(writer.join().unwrap(), id);
    let handed = taker.join().unwrap();
    assert_eq!(handed.len(), 1);
    assert_eq!(handed[0].id, id);
}

#[test]
fn a_handed_job_whose_lease_ran_out_and_was_claimed_again_is_not_taken_as_well() {
    let f = fixture();
    let store = f.am.store();
    let now = f.clock.now();
    let lease = TimeDelta::seconds(45);
    let id = handed_to_w1(store, now, lease);
    // w1 is slow to take it: its lease runs out and w2 claims the job.
    let again = store.claim_jobs("w2", now + lease, lease, 1).unwrap();
    assert_eq!(again[0].id, id);

    assert!(store.take_handed("w1").unwrap().is_empty());
    let rows = store.jobs_of_sliver(SLIVER).unwrap();
    assert_eq!(rows[0].lease_owner.as_deref(), Some("w2"));
}

#[test]
fn on_postgres_two_processes_queueing_for_one_link_take_turns() {
    use std::sync::mpsc::channel;
    use std::time::Duration;
    let Some(db) = PgDatabase::create("postgres_queue_turns") else {
        return;
    };
    let clock = TestClock::new();
    let now = clock.now();
    let first_process = attach(&db.url, &clock).store().clone();
    let second_process = attach(&db.url, &clock).store().clone();
    let link = "urn:publicid:IDN+geni-am.test+link+lan0";
    let destroy_network = move |conn: &mut Conn| {
        jobs::enqueue(
            conn,
            JobKind::DestroyNetwork,
            SLICE,
            Some(link),
            &serde_json::json!({}),
            now,
        )
    };
    let (first, first_writer, go) = queued_not_committed(&first_process, destroy_network);
    // The second process has a worker waiting, to which a job of a link
    // with nothing pending would be handed.
    second_process.hand_off().idle("w2", TimeDelta::seconds(45));
    let (done, second_done) = channel();
    let second = {
        let store = second_process.clone();
        std::thread::spawn(move || {
            let id = store.write(destroy_network).unwrap();
            done.send(()).unwrap();
            id
        })
    };
    assert!(
        second_done
            .recv_timeout(Duration::from_millis(300))
            .is_err(),
        "the second transaction queued beside the first"
    );
    go.send(()).unwrap();
    assert_eq!(first_writer.join().unwrap(), first);
    let second = second.join().unwrap();

    assert!(second_process.take_handed("w2").unwrap().is_empty());
    let rows = second_process.jobs_of_sliver(link).unwrap();
    let order: Vec<_> = rows
        .iter()
        .map(|j| (j.id.clone(), j.state.as_str()))
        .collect();
    assert_eq!(order, [(first, "queued"), (second, "queued")]);
    assert!(rows[0].seq < rows[1].seq, "{} {}", rows[0].seq, rows[1].seq);
}
