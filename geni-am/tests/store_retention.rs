//! The store stops growing: Allocate/Provision/Delete cycles of a large
//! request, with the backend jobs run to their end, leave deleted slivers,
//! request documents, finished jobs and events behind; once the retention
//! period has passed (a test clock moves a day per cycle) the purge removes
//! as much as each cycle adds — same row counts, and on SQLite the same
//! file size — while the live slice and its history inside the period stay.
//! Also: the background purger of the jobs does it on its own.

mod core_support;

use chrono::TimeDelta;
use core_support::*;
use diesel::RunQueryDsl;
use diesel::connection::SimpleConnection;
use geni_am::core::{Aggregate, ProvisionOptions};
use geni_am::store::Store;
use geni_am::store::retention::Retention;
use std::time::Duration;

/// Keep three days (the test moves one day per cycle), small batches.
fn retention() -> Retention {
    Retention {
        ended: TimeDelta::days(3),
        events: TimeDelta::days(4),
        batch: 7,
    }
}

/// A request of four nodes carrying about 200 KB of comment, as large
/// requests carry extensions the aggregate keeps byte for byte.
fn large_request() -> String {
    let padding = format!("<!-- {} -->\n", "x".repeat(200_000));
    request(&["a", "b", "c", "d"], "default-vm").replacen(
        "type=\"request\">\n",
        &format!("type=\"request\">\n{padding}"),
        1,
    )
}

/// Runs every due job to its end, as the workers would.
fn run_jobs(store: &Store, clock: &TestClock) {
    let jobs = store
        .claim_jobs("test/run-w0", clock.now(), TimeDelta::seconds(60), 100)
        .unwrap();
    for job in jobs {
        assert!(
            store
                .finish_job(&job.id, "test/run-w0", clock.now())
                .unwrap()
        );
    }
}

/// One cycle: allocate, provision, delete, the jobs done, a day passes,
/// then the purge.
fn cycle(am: &Aggregate, clock: &TestClock, document: &str) {
    let p = principal(365);
    am.allocate(&p, SLICE, document).expect("allocated");
    am.provision(&p, &slice(), &ProvisionOptions::default())
        .expect("provisioned");
    run_jobs(am.store(), clock);
    am.delete(&p, &slice()).expect("deleted");
    run_jobs(am.store(), clock);
    clock.advance(TimeDelta::days(1));
    am.store()
        .purge(&retention(), clock.now(), || true)
        .expect("purged");
}

/// Rows of each table that grows with the cycles.
fn row_counts(store: &Store) -> Vec<(&'static str, i64)> {
    ["slivers", "requests", "jobs", "events"]
        .into_iter()
        .map(|table| {
            let count = store
                .read(|conn| {
                    diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(&format!(
                        "(SELECT COUNT(*) FROM {table})"
                    )))
                    .get_result::<i64>(conn)
                    .map_err(geni_am::store::StoreError::from)
                })
                .unwrap();
            (table, count)
        })
        .collect()
}

/// The SQLite file's size with the write-ahead log checkpointed into it.
fn file_size(store: &Store, path: &str) -> u64 {
    let mut conn = store.conn().unwrap();
    conn.batch_execute("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    std::fs::metadata(path).unwrap().len()
}

/// Cycles on `url` until well past the retention, then as many again:
/// nothing grows in between (the SQLite file sizes are printed).
fn the_store_stops_growing_once_retention_has_passed(url: &str, sqlite: Option<&str>) {
    let clock = TestClock::new();
    let am = open(url, &[host("h1", 8)], &clock);
    let document = large_request();
    for _ in 0..10 {
        cycle(&am, &clock, &document);
    }
    let rows = row_counts(am.store());
    let size = sqlite.map(|path| file_size(am.store(), path));
    for _ in 0..15 {
        cycle(&am, &clock, &document);
    }
    assert_eq!(row_counts(am.store()), rows, "rows after 15 more cycles");
    if let (Some(path), Some(size)) = (sqlite, size) {
        let later = file_size(am.store(), path);
        eprintln!("SQLite file: {size} bytes after 10 cycles, {later} after 25");
        assert!(
            later <= size,
            "the SQLite file grew from {size} to {later} bytes"
        );
    }
    // What the retention covers stays: the slivers deleted one and two
    // days ago (three days ago is past), events of the last four days.
    let slivers = rows.iter().find(|(t, _)| *t == "slivers").unwrap().1;
    assert_eq!(
        slivers,
        2 * 4,
        "the slivers of the last two cycles are kept"
    );
    let events = am.store().slice_events(SLICE).unwrap();
    let oldest = events.first().expect("recent events kept").at;
    assert!(clock.now() - oldest.get() <= TimeDelta::days(4));
    // A sliver never deleted is never purged, however old.
    let p = principal(365);
    let live = am.allocate(&p, SLICE, &document).unwrap().slivers[0]
        .urn
        .clone();
    clock.advance(TimeDelta::days(30));
    am.store()
        .purge(&retention(), clock.now(), || true)
        .unwrap();
    assert!(am.store().sliver(&live).unwrap().is_some());
}

#[test]
fn sqlite_the_store_stops_growing_once_retention_has_passed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("am.sqlite").to_string_lossy().into_owned();
    the_store_stops_growing_once_retention_has_passed(&path, Some(&path));
}

#[test]
fn postgres_the_store_stops_growing_once_retention_has_passed() {
    if let Some(db) = PgDatabase::create("postgres_retention") {
        the_store_stops_growing_once_retention_has_passed(&db.url, None);
    }
}

#[test]
fn a_deleted_sliver_whose_destroy_is_pending_keeps_its_row() {
    let f = fixture();
    let p = principal(365);
    f.am.allocate(&p, SLICE, &request(&["a"], "default-vm"))
        .unwrap();
    f.am.provision(&p, &slice(), &ProvisionOptions::default())
        .unwrap();
    run_jobs(f.am.store(), &f.clock);
    f.am.delete(&p, &slice()).unwrap();
    f.clock.advance(TimeDelta::days(60));
    f.am.store()
        .purge(&retention(), f.clock.now(), || true)
        .unwrap();
    let rows = row_counts(f.am.store());
    assert_eq!(rows[0], ("slivers", 1), "its capacity is still held");
    assert_eq!(rows[1], ("requests", 1));
    run_jobs(f.am.store(), &f.clock);
    f.clock.advance(TimeDelta::days(4));
    f.am.store()
        .purge(&retention(), f.clock.now(), || true)
        .unwrap();
    assert_eq!(
        &row_counts(f.am.store())[..3],
        [("slivers", 0), ("requests", 0), ("jobs", 0)]
    );
}

#[test]
fn the_background_purger_empties_what_retention_lets_go() {
    let f = fixture();
    let p = principal(365);
    f.am.allocate(&p, SLICE, &request(&["a", "b"], "default-vm"))
        .unwrap();
    f.am.delete(&p, &slice()).unwrap();
    let later = f.clock.now() + TimeDelta::days(10);
    let store = f.am.store().clone();
    let backend = std::sync::Arc::new(
        geni_am_backend::sim::SimulatedCloud::new(
            &toml::from_str(geni_am_backend::sim::config::SAMPLE_SECTION).unwrap(),
            AUTHORITY,
        )
        .unwrap(),
    );
    let mut jobs =
        geni_am::jobs::start(store.clone(), backend, geni_am::jobs::JobsConfig::default()).unwrap();
    jobs.purge(
        store.clone(),
        retention(),
        Duration::from_secs(3600),
        std::sync::Arc::new(move || later),
    )
    .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while row_counts(&store).iter().any(|(_, n)| *n > 0) {
        assert!(
            std::time::Instant::now() < deadline,
            "never purged: {:?}",
            row_counts(&store)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    jobs.stop();
}
