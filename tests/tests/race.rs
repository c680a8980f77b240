//! Racing Allocates for the last free capacity never double-book: N
//! clients (each its own slice and connection) allocate one VM at once on
//! an aggregate with room for one, on SQLite and on PostgreSQL, and with
//! two aggregate processes sharing one PostgreSQL database. Exactly one
//! wins; the others are refused with a GENI code.

use chrono::{Duration, Utc};
use geni_am::client::Client;
use geni_am_tests::aggregate::{Aggregate, set};
use geni_am_tests::calls::{call, creds, s, st};
use geni_am_tests::creds::DevAuthority;
use geni_am_tests::database::{PgDatabase, Store};
use geni_am_tests::requests;
use std::sync::{Arc, Barrier};

/// Clients racing.
const RACERS: usize = 8;

geni_am_tests::on_both_stores!(racing_allocates);

fn racing_allocates(store: Store) {
    let aggregate = one_vm_aggregate(store);
    let urls = [aggregate.url(3)];
    race(&aggregate, &urls);
}

#[test]
fn two_processes_on_one_postgres() {
    let Some(db) = PgDatabase::create("two_processes_on_one_postgres") else {
        return;
    };
    let aggregate = one_vm_aggregate(Store::Postgres(db));
    let sibling = aggregate.sibling();
    let urls = [aggregate.url(3), sibling.url(3)];
    race(&aggregate, &urls);
}

/// An aggregate whose simulated cloud has one host for one VM.
fn one_vm_aggregate(store: Store) -> Aggregate {
    Aggregate::start_with(store, |config| {
        let mut host = toml::Table::new();
        host.insert("name".into(), "solo".into());
        host.insert("cpus".into(), 8.into());
        host.insert("memory_mb".into(), 16384.into());
        host.insert("max_vms".into(), 1.into());
        let hosts = toml::Value::Array(vec![toml::Value::Table(host)]);
        set(config, &["backend", "sim", "hosts"], hosts);
    })
}

/// Runs the race against the endpoints `urls` (clients spread over them)
/// and asserts exactly one winner.
fn race(aggregate: &Aggregate, urls: &[String]) {
    let dev = DevAuthority::open(aggregate.dir());
    let request = requests::vms(&["only"]);
    let barrier = Arc::new(Barrier::new(RACERS));
    let racers: Vec<_> = (0..RACERS)
        .map(|i| {
            let (slice, credential) =
                dev.slice_credential(&format!("racer{i}"), Utc::now() + Duration::days(7));
            let mut client = Client::new(
                &urls[i % urls.len()],
                &aggregate.file("alice-cert.pem"),
                &aggregate.file("alice-key.pem"),
                Some(&aggregate.file("ca-cert.pem")),
            )
            .expect("client set-up");
            // Connect before the race so the handshakes do not spread it out.
            call(&mut client, "GetVersion", vec![]).ok();
            let barrier = Arc::clone(&barrier);
            let request = request.clone();
            std::thread::spawn(move || {
                barrier.wait();
                call(
                    &mut client,
                    "Allocate",
                    vec![s(&slice), creds(&credential), s(&request), st(vec![])],
                )
            })
        })
        .collect();
    let answers: Vec<_> = racers
        .into_iter()
        .map(|r| r.join().expect("racer thread"))
        .collect();
    let winners: Vec<_> = answers.iter().filter(|a| a.code == 0).collect();
    assert_eq!(winners.len(), 1, "exactly one winner: {answers:#?}");
    assert_eq!(winners[0].slivers().len(), 1);
    for loser in answers.iter().filter(|a| a.code != 0) {
        assert!(!loser.output.is_empty(), "a refusal says why: {loser:?}");
    }
}
