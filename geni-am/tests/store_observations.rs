//! Observations of the backend never move a sliver back past a transition
//! another writer made after they were taken: the poller reads a sliver,
//! asks the cloud, and records what it saw only over the version it read
//! ([`Store::record_observation`]). Shown deterministically (an observation
//! taken before a start job's `geni_configuring`, written after it), for
//! every order of reads, transitions and writes of a few slivers (a
//! property test), and by threads racing starts against stale polls, on
//! SQLite and on PostgreSQL. What a job did and saw of its sliver is
//! recorded with the job's finish, unless the sliver was deleted.

mod core_support;

use core_support::*;
use geni_am::model::{OperationalState as Op, SliverAnnotations};
use geni_am::store::Finished;
use geni_am::store::Store;
use geni_am::store::slivers::{Observation, SliverRow, SliverStep};
use proptest::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// `count` provisioned slivers of [`SLICE`], all `geni_stopping` (a stop
/// job ran); the store and its clock.
fn stopping_slivers(url: &str, count: usize) -> (Store, TestClock, Vec<String>) {
    let clock = TestClock::new();
    let am = open(url, &[host("h1", 64)], &clock);
    let names: Vec<String> = (0..count).map(|i| format!("n{i}")).collect();
    let ids: Vec<&str> = names.iter().map(String::as_str).collect();
    let allocation = am
        .allocate(&principal(30), SLICE, &request(&ids, "default-vm"))
        .expect("allocated");
    am.provision(
        &principal(30),
        &slice(),
        &geni_am::core::ProvisionOptions::default(),
    )
    .expect("provisioned");
    let store = am.store().clone();
    let urns: Vec<String> = allocation.slivers.into_iter().map(|s| s.urn).collect();
    for urn in &urns {
        assert!(
            store
                .set_operational_state(urn, Op::Stopping, clock.now())
                .unwrap()
        );
    }
    (store, clock, urns)
}

/// What the poller records when it sees a stopping sliver's VM stopped.
fn stopped() -> Observation {
    Observation {
        state: Op::NotReady,
        error: String::new(),
        annotations: Some(SliverAnnotations {
            hostname: Some("n.sim.test".into()),
            ..SliverAnnotations::default()
        }),
    }
}

fn row(store: &Store, urn: &str) -> SliverRow {
    store.sliver(urn).unwrap().expect("the sliver exists")
}

fn a_stale_observation_never_undoes_a_start(url: &str) {
    let (store, clock, urns) = stopping_slivers(url, 1);
    let urn = &urns[0];
    let read_by_poller = row(&store, urn);
    // The start job's transition lands between the poller's read and its write.
    assert!(
        store
            .set_operational_state(urn, Op::Configuring, clock.now())
            .unwrap()
    );
    let recorded = store
        .record_observation(&read_by_poller, &stopped(), clock.now())
        .unwrap();
    assert!(!recorded, "the stale observation is dropped");
    let after = row(&store, urn);
    assert_eq!(after.operational_state.as_str(), "geni_configuring");
    assert_eq!(after.annotations, read_by_poller.annotations);
    // An observation taken after the transition is recorded, annotations too.
    let running = Observation {
        state: Op::Ready,
        ..stopped()
    };
    assert!(
        store
            .record_observation(&after, &running, clock.now())
            .unwrap()
    );
    let ready = row(&store, urn);
    assert_eq!(ready.operational_state.as_str(), "geni_ready");
    assert_eq!(
        ready.annotations.value().clone().hostname.as_deref(),
        Some("n.sim.test")
    );
    assert!(
        ready.version > after.version,
        "every write raises the version"
    );
}

#[test]
fn sqlite_a_stale_observation_never_undoes_a_start() {
    let dir = tempfile::tempdir().unwrap();
    a_stale_observation_never_undoes_a_start(&sqlite_url(&dir));
}

#[test]
fn postgres_a_stale_observation_never_undoes_a_start() {
    if let Some(db) = PgDatabase::create("postgres_stale_observation") {
        a_stale_observation_never_undoes_a_start(&db.url);
    }
}

#[test]
fn an_observation_of_a_deleted_sliver_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let (store, clock, urns) = stopping_slivers(&sqlite_url(&dir), 1);
    let read_by_poller = row(&store, &urns[0]);
    let am = attach(&sqlite_url(&dir), &clock);
    am.delete(&principal(30), &slice()).unwrap();
    assert!(
        !store
            .record_observation(&read_by_poller, &stopped(), clock.now())
            .unwrap()
    );
    assert_eq!(
        row(&store, &urns[0]).allocation_state.as_str(),
        "geni_unallocated"
    );
}

/// A start job that saw its VM running at once: the job finished, the
/// sliver `geni_ready` with the observed annotations, and both steps
/// logged as events, in the transaction of the finish; once the sliver is
/// deleted, a job's steps are not recorded over it, and the job is still
/// finished.
fn a_jobs_steps_are_recorded_with_its_finish(url: &str) {
    let (store, clock, urns) = stopping_slivers(url, 1);
    let urn = &urns[0];
    let now = clock.now();
    let lease = chrono::TimeDelta::seconds(30);
    let job = store.claim_jobs("worker", now, lease, 1).unwrap();
    assert_eq!(job.len(), 1, "the provision job");
    let mut running = stopped();
    running.state = Op::Ready;
    let steps = vec![
        SliverStep::State(Op::Configuring),
        SliverStep::Observed(running.clone()),
    ];
    let finished = |id: &str| Finished {
        id: id.to_owned(),
        sliver: urn.clone(),
        steps: steps.clone(),
    };
    let events_before = store.slice_events(SLICE).unwrap().len();
    let (held, next) = store
        .finish_and_claim(&[finished(&job[0].id)], "worker", now, lease, 1)
        .unwrap();
    assert_eq!(held, 1);
    assert!(next.is_empty());
    let after = row(&store, urn);
    assert_eq!(after.operational_state, Op::Ready);
    assert_eq!(
        Some(after.annotations.value()),
        running.annotations.as_ref()
    );
    let logged: Vec<String> = store.slice_events(SLICE).unwrap()[events_before..]
        .iter()
        .map(|e| e.detail.clone())
        .collect();
    assert_eq!(logged, ["geni_configuring", "geni_ready"]);
    assert_eq!(store.jobs_of_sliver(urn).unwrap()[0].state.as_str(), "done");

    let am = attach(url, &clock);
    am.delete(&principal(30), &slice()).unwrap();
    let destroy = store.claim_jobs("worker", now, lease, 1).unwrap();
    let (held, _) = store
        .finish_and_claim(&[finished(&destroy[0].id)], "worker", now, lease, 1)
        .unwrap();
    assert_eq!(held, 1, "the job is done");
    let deleted = row(&store, urn);
    assert_eq!(deleted.allocation_state.as_str(), "geni_unallocated");
    assert_eq!(
        deleted.version,
        after.version + 1,
        "only the delete wrote it"
    );
}

#[test]
fn sqlite_a_jobs_steps_are_recorded_with_its_finish() {
    let dir = tempfile::tempdir().unwrap();
    a_jobs_steps_are_recorded_with_its_finish(&sqlite_url(&dir));
}

#[test]
fn postgres_a_jobs_steps_are_recorded_with_its_finish() {
    if let Some(db) = PgDatabase::create("postgres_job_steps") {
        a_jobs_steps_are_recorded_with_its_finish(&db.url);
    }
}

fn sqlite_url(dir: &tempfile::TempDir) -> String {
    dir.path().join("am.sqlite").to_string_lossy().into_owned()
}

/// One step of a schedule: the poller reading sliver `i`, the start job's
/// transition of `i`, or the poller writing what it saw of `i`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Read(usize),
    Start(usize),
    Write(usize),
}

/// Every interleaving of one read, one start and one write (after its
/// read) per sliver, for `count` slivers.
fn schedules(count: usize) -> impl Strategy<Value = Vec<Step>> {
    let steps: Vec<Step> = (0..count)
        .flat_map(|i| [Step::Read(i), Step::Start(i), Step::Write(i)])
        .collect();
    Just(steps).prop_shuffle().prop_map(|mut steps| {
        // A write comes after its read: swap them when shuffled the other way.
        for i in 0..steps.len() {
            if let Step::Write(s) = steps[i]
                && let Some(j) = steps[i..].iter().position(|&x| x == Step::Read(s))
            {
                steps.swap(i, i + j);
            }
        }
        steps
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn in_every_order_a_start_wins_over_a_stale_stop_observation(steps in schedules(3)) {
        let dir = tempfile::tempdir().unwrap();
        let (store, clock, urns) = stopping_slivers(&sqlite_url(&dir), 3);
        let mut read: Vec<Option<SliverRow>> = vec![None; urns.len()];
        for step in steps {
            match step {
                Step::Read(i) => read[i] = Some(row(&store, &urns[i])),
                Step::Start(i) => {
                    store.set_operational_state(&urns[i], Op::Configuring, clock.now()).unwrap();
                }
                Step::Write(i) => {
                    // The poller only writes what it saw of a sliver it read stopping.
                    let seen = read[i].take().expect("read before written");
                    if seen.operational_state.as_str() == "geni_stopping" {
                        store.record_observation(&seen, &stopped(), clock.now()).unwrap();
                    }
                }
            }
        }
        for urn in &urns {
            prop_assert_eq!(row(&store, urn).operational_state.as_str(), "geni_configuring");
        }
    }
}

/// Two pollers keep reading stopping slivers and writing `geni_notready`
/// over them while a start job moves each to `geni_configuring`: at the
/// end every sliver is configuring. Returns how many stale observations
/// were dropped.
fn racing_starts_and_polls_end_configuring(url: &str) -> usize {
    let (store, clock, urns) = stopping_slivers(url, 40);
    let done = AtomicBool::new(false);
    let dropped = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for poller in 0..2 {
            let (store, clock, urns, done, dropped) = (&store, &clock, &urns, &done, &dropped);
            scope.spawn(move || {
                let mut pass = poller;
                while !done.load(Ordering::SeqCst) {
                    pass += 1;
                    for urn in urns.iter().skip(pass % 3) {
                        let seen = row(store, urn);
                        if seen.operational_state.as_str() != "geni_stopping" {
                            continue;
                        }
                        std::thread::yield_now();
                        if !store
                            .record_observation(&seen, &stopped(), clock.now())
                            .unwrap()
                        {
                            dropped.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                }
            });
        }
        for urn in &urns {
            std::thread::yield_now();
            store
                .set_operational_state(urn, Op::Configuring, clock.now())
                .unwrap();
        }
        done.store(true, Ordering::SeqCst);
    });
    for urn in &urns {
        assert_eq!(
            row(&store, urn).operational_state.as_str(),
            "geni_configuring",
            "{urn} was moved back by a stale observation"
        );
    }
    dropped.into_inner()
}

#[test]
fn sqlite_racing_starts_and_polls_end_configuring() {
    let dir = tempfile::tempdir().unwrap();
    let dropped = racing_starts_and_polls_end_configuring(&sqlite_url(&dir));
    eprintln!("stale observations dropped: {dropped}");
}

#[test]
fn postgres_racing_starts_and_polls_end_configuring() {
    if let Some(db) = PgDatabase::create("postgres_racing_observations") {
        let dropped = racing_starts_and_polls_end_configuring(&db.url);
        eprintln!("stale observations dropped: {dropped}");
    }
}
