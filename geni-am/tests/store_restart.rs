//! A restart loses nothing: slices, slivers with their states and
//! expiries, request documents (so manifests), users and keys, queued jobs
//! and events all survive dropping the aggregate and its store and opening
//! the same SQLite file or PostgreSQL database again; the lifecycle then
//! carries on. Also: a store opened twice at once sees one state.

mod core_support;

use chrono::TimeDelta;
use core_support::*;
use geni_am::core::{Aggregate, ProvisionOptions, RenewOptions};
use geni_am::model::OperationalState;

/// Everything a client or worker can observe of the slice.
fn snapshot(am: &Aggregate) -> (String, Vec<geni_am::model::SliverInfo>, usize, usize, usize) {
    let d = am.describe(&slice()).unwrap();
    let store = am.store();
    let jobs: usize = d
        .slivers
        .iter()
        .map(|s| store.jobs_of_sliver(&s.urn).unwrap().len())
        .sum();
    let users = store
        .read(|c| geni_am::store::slices::users(c, SLICE))
        .unwrap()
        .len();
    (
        d.manifest,
        d.slivers,
        jobs,
        store.slice_events(SLICE).unwrap().len(),
        users,
    )
}

/// Runs half a lifecycle on `url`, reopens, checks and finishes it.
fn restart_loses_nothing(url: &str) {
    let clock = TestClock::new();
    let p = principal(30);
    let before = {
        let am = open(url, &[host("h1", 4)], &clock);
        let a = am
            .allocate(&p, SLICE, &request(&["a", "b"], "default-vm"))
            .unwrap();
        let options = ProvisionOptions {
            users: vec![alice()],
            ..ProvisionOptions::default()
        };
        am.provision(&p, &slivers(&[&a.slivers[0].urn]), &options)
            .unwrap();
        am.store()
            .set_operational_state(&a.slivers[0].urn, OperationalState::Ready, clock.now())
            .unwrap();
        snapshot(&am)
    };
    let am = attach(url, &clock);
    let after = snapshot(&am);
    assert_eq!(after, before);
    assert_eq!(after.1.len(), 2);
    assert!(after.0.contains("ssh-ed25519"), "users' keys survive");
    // The lifecycle carries on where it stopped.
    let renewed = am
        .renew(
            &p,
            &slice(),
            start() + TimeDelta::days(2),
            RenewOptions::default(),
        )
        .unwrap();
    assert_eq!(renewed.len(), 2);
    am.provision(&p, &slice(), &ProvisionOptions::default())
        .expect("the other sliver is still allocated and can be provisioned");
    assert_eq!(am.delete(&p, &slice()).unwrap().len(), 2);
}

#[test]
fn sqlite_restart_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let url = dir.path().join("am.sqlite").to_string_lossy().into_owned();
    restart_loses_nothing(&url);
}

#[test]
fn postgres_restart_loses_nothing() {
    let Some(db) = PgDatabase::create("postgres_restart") else {
        return;
    };
    restart_loses_nothing(&db.url);
}

#[test]
fn two_stores_open_on_one_file_share_the_state() {
    let f = fixture();
    let other = attach(&f.url, &f.clock);
    let a =
        f.am.allocate(&principal(30), SLICE, &request(&["n1"], "default-vm"))
            .unwrap();
    let seen = other.status(&slice()).unwrap();
    assert_eq!(seen.slivers[0].urn, a.slivers[0].urn);
    other.delete(&principal(30), &slice()).unwrap();
    assert!(f.am.describe(&slice()).unwrap().slivers.is_empty());
}

/// Opens the store at `url` from four threads at once, then asserts that
/// every migration was applied exactly once and that one more open applies
/// none.
fn open_concurrently(url: &str) {
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let url = url.to_owned();
            std::thread::spawn(move || geni_am::store::Store::open(&url, 1).map(|_| ()))
        })
        .collect();
    for h in handles {
        h.join().unwrap().expect("every opener succeeds");
    }
    let applied = applied_migrations(url);
    let versions: Vec<&str> = applied.iter().map(|m| m.version.as_str()).collect();
    assert_eq!(
        versions,
        migration_versions(),
        "each migration applied once"
    );
    geni_am::store::Store::open(url, 1).expect("a later opener succeeds");
    assert_eq!(
        applied_migrations(url),
        applied,
        "a later open applied a migration"
    );
}

/// One row of diesel's migration table.
#[derive(Debug, PartialEq, diesel::QueryableByName)]
struct AppliedMigration {
    #[diesel(sql_type = diesel::sql_types::Text)]
    version: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    run_on: String,
}

/// The rows of diesel's migration table of the store at `url`, by version.
fn applied_migrations(url: &str) -> Vec<AppliedMigration> {
    use diesel::{Connection, RunQueryDsl};
    let query = diesel::sql_query(
        "SELECT version, CAST(run_on AS TEXT) AS run_on \
         FROM __diesel_schema_migrations ORDER BY version",
    );
    if url.starts_with("postgres") {
        let mut c = diesel::PgConnection::establish(url).expect("the database connects");
        query.load(&mut c).expect("the migration table reads")
    } else {
        use diesel::connection::SimpleConnection;
        let mut c = diesel::SqliteConnection::establish(url).expect("the file opens");
        // The openers' pools may still be closing connections in the
        // background: wait for their locks as the store's own connections do.
        c.batch_execute("PRAGMA busy_timeout = 30000;")
            .expect("the busy timeout is set");
        query.load(&mut c).expect("the migration table reads")
    }
}

/// The versions of the migrations the crate embeds (its `migrations/`
/// directories, named `<version>_<name>`), sorted.
fn migration_versions() -> Vec<String> {
    let dir = workspace_root().join("geni-am/migrations");
    let mut versions: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|name| name.split('_').next().map(|v| v.replace('-', "")))
        .collect();
    versions.sort();
    assert!(!versions.is_empty(), "no migration in {}", dir.display());
    versions
}

#[test]
fn migrations_run_once_when_openers_start_together_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    open_concurrently(&dir.path().join("am.sqlite").to_string_lossy());
}

#[test]
fn migrations_run_once_when_openers_start_together_on_postgres() {
    let Some(db) = PgDatabase::create("postgres_concurrent_open") else {
        return;
    };
    open_concurrently(&db.url);
}
