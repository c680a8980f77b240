//! Racing Allocates for the last free capacity: exactly as many winners as
//! there are free slots, the others INSUFFICIENT_NODES, on SQLite and on
//! PostgreSQL, from threads with their own connection pools and from
//! separate processes sharing one database.

mod core_support;

use core_support::*;
use geni_am::geni::{AmError, GeniCode};
use std::process::Command;
use std::sync::{Arc, Barrier};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Environment variable that turns [`race_child_process_entry`] into a racer.
const CHILD_ENV: &str = "GENI_AM_RACE_CHILD";

/// The slice of racer `i` (`same_slice`: all in one slice).
fn racer_slice(i: usize, same_slice: bool) -> String {
    if same_slice {
        SLICE.to_owned()
    } else {
        format!("urn:publicid:IDN+ch.test.example:proj+slice+race{i}")
    }
}

/// One racer's Allocate of one `default-vm` node.
fn allocate_one(am: &geni_am::core::Aggregate, i: usize, same_slice: bool) -> Result<(), AmError> {
    let slice = racer_slice(i, same_slice);
    let mut p = principal(30);
    p.slice_urn = Some(slice.clone());
    am.allocate(&p, &slice, &request(&[&format!("node{i}")], "default-vm"))
        .map(|_| ())
        .map_err(AmError::from)
}

/// Races `racers` threads, each with its own aggregate and pool on `url`.
fn race_threads(url: &str, racers: usize, same_slice: bool) -> Vec<Result<(), AmError>> {
    let clock = TestClock::new();
    let barrier = Arc::new(Barrier::new(racers));
    let handles: Vec<_> = (0..racers)
        .map(|i| {
            let am = attach(url, &clock);
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                allocate_one(&am, i, same_slice)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

/// Races `racers` child processes of this test binary on `url`.
fn race_processes(url: &str, racers: usize) -> Vec<Result<(), GeniCode>> {
    let start = SystemTime::now().duration_since(UNIX_EPOCH).unwrap() + Duration::from_secs(3);
    let spawned: Vec<_> = (0..racers)
        .map(|i| {
            Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "race_child_process_entry", "--nocapture"])
                .env(CHILD_ENV, format!("{url}|{i}|{}", start.as_millis()))
                .stdout(std::process::Stdio::piped())
                .spawn()
                .expect("child starts")
        })
        .collect();
    spawned
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().expect("child ends");
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let line = text
                .lines()
                .find_map(|l| l.strip_prefix("RACE-RESULT "))
                .unwrap_or_else(|| panic!("child printed no result: {text}"))
                .to_owned();
            match line.as_str() {
                "ok" => Ok(()),
                code => Err(GeniCode::from_i32(code.parse().unwrap()).unwrap()),
            }
        })
        .collect()
}

/// Not a test of its own: the body of one racing process, run by
/// [`race_processes`] through this binary with `GENI_AM_RACE_CHILD` set
/// (`url|index|start-unix-ms`); without it, it returns at once.
#[test]
fn race_child_process_entry() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let parts: Vec<&str> = spec.split('|').collect();
    let (url, i, start_ms) = (
        parts[0],
        parts[1].parse().unwrap(),
        parts[2].parse::<u128>().unwrap(),
    );
    let am = attach(url, &TestClock::new());
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis();
    std::thread::sleep(Duration::from_millis(start_ms.saturating_sub(now) as u64));
    match allocate_one(&am, i, false) {
        Ok(()) => println!("RACE-RESULT ok"),
        Err(e) => println!("RACE-RESULT {}", e.code.as_i32()),
    }
}

/// Checks `results`: `slots` winners, every loser INSUFFICIENT_NODES.
fn assert_winners<E: std::fmt::Debug>(
    results: &[Result<(), E>],
    slots: usize,
    code_of: impl Fn(&E) -> GeniCode,
) {
    let winners = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(winners, slots, "{results:?}");
    for e in results.iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(code_of(e), GeniCode::InsufficientNodes, "{e:?}");
    }
}

/// How many slivers hold resources in the store at `url`.
fn live_slivers(url: &str) -> usize {
    attach(url, &TestClock::new())
        .store()
        .live_slivers_page(None, usize::MAX)
        .unwrap()
        .len()
}

#[test]
fn sqlite_threads_racing_for_the_last_slot_have_one_winner() {
    let f = fixture_with(&[host("h1", 1)]);
    let results = race_threads(&f.url, 8, false);
    assert_winners(&results, 1, |e| e.code);
    assert_eq!(live_slivers(&f.url), 1);
}

#[test]
fn sqlite_threads_racing_for_three_slots_have_three_winners() {
    let f = fixture_with(&[host("h1", 2), host("h2", 1)]);
    let results = race_threads(&f.url, 10, true);
    assert_winners(&results, 3, |e| e.code);
    assert_eq!(live_slivers(&f.url), 3);
}

#[test]
fn sqlite_processes_racing_for_the_last_slot_have_one_winner() {
    let f = fixture_with(&[host("h1", 1)]);
    let results = race_processes(&f.url, 4);
    assert_winners(&results, 1, |c| *c);
    assert_eq!(live_slivers(&f.url), 1);
}

#[test]
fn postgres_threads_racing_for_the_last_slot_have_one_winner() {
    let Some((db, _am, _clock)) = pg_fixture_with("postgres_threads", &[host("h1", 1)]) else {
        return;
    };
    let results = race_threads(&db.url, 8, false);
    assert_winners(&results, 1, |e| e.code);
    assert_eq!(live_slivers(&db.url), 1);
}

#[test]
fn postgres_threads_racing_in_one_slice_for_three_slots_have_three_winners() {
    let Some((db, _am, _clock)) =
        pg_fixture_with("postgres_three_slots", &[host("h1", 2), host("h2", 1)])
    else {
        return;
    };
    let results = race_threads(&db.url, 10, true);
    assert_winners(&results, 3, |e| e.code);
    assert_eq!(live_slivers(&db.url), 3);
}

#[test]
fn postgres_processes_racing_for_the_last_slot_have_one_winner() {
    let Some((db, _am, _clock)) = pg_fixture_with("postgres_processes", &[host("h1", 1)]) else {
        return;
    };
    let results = race_processes(&db.url, 4);
    assert_winners(&results, 1, |c| *c);
    assert_eq!(live_slivers(&db.url), 1);
}

/// Races `racers` Provisions of one allocated slice on `url`; returns the
/// results and how many provision jobs were queued per sliver.
fn race_provisions(url: &str, racers: usize) -> (Vec<Result<(), AmError>>, Vec<usize>) {
    let clock = TestClock::new();
    let first = attach(url, &clock);
    let a = first
        .allocate(&principal(30), SLICE, &request(&["a", "b"], "default-vm"))
        .unwrap();
    let barrier = Arc::new(Barrier::new(racers));
    let handles: Vec<_> = (0..racers)
        .map(|_| {
            let am = attach(url, &clock);
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                am.provision(&principal(30), &slice(), &Default::default())
                    .map(|_| ())
                    .map_err(AmError::from)
            })
        })
        .collect();
    let results = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let jobs = a
        .slivers
        .iter()
        .map(|s| first.store().jobs_of_sliver(&s.urn).unwrap().len())
        .collect();
    (results, jobs)
}

/// One Provision wins; the others find nothing left to provision.
fn assert_one_provision(results: &[Result<(), AmError>], jobs: &[usize]) {
    assert_eq!(
        results.iter().filter(|r| r.is_ok()).count(),
        1,
        "{results:?}"
    );
    for e in results.iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(e.code, GeniCode::Unavailable, "{e}");
    }
    assert_eq!(jobs, [1, 1], "one provisioning job per sliver");
}

#[test]
fn sqlite_racing_provisions_of_one_slice_provision_once() {
    let f = fixture();
    let (results, jobs) = race_provisions(&f.url, 6);
    assert_one_provision(&results, &jobs);
}

#[test]
fn postgres_racing_provisions_of_one_slice_provision_once() {
    let Some((db, _am, _clock)) = pg_fixture_with("postgres_provisions", &[host("h1", 4)]) else {
        return;
    };
    let (results, jobs) = race_provisions(&db.url, 6);
    assert_one_provision(&results, &jobs);
}
