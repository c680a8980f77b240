//! Typed columns keep the stored format: states and kinds are stored as
//! their names, times as unix seconds and annotations as the JSON earlier
//! releases wrote, so databases need no migration; and a value the AM
//! never writes (edited by hand, or from a newer version) reads as
//! `StoreError::Corrupt` naming its column. On SQLite and PostgreSQL.

mod core_support;

use core_support::*;
use diesel::RunQueryDsl;
use diesel::sql_types::{BigInt, Text};
use geni_am::core::{Aggregate, ProvisionOptions};
use geni_am::model::SliverAnnotations;
use geni_am::store::{Store, StoreError};

/// A sliver's columns as the database holds them.
#[derive(Debug, diesel::QueryableByName)]
struct RawSliver {
    #[diesel(sql_type = Text)]
    allocation_state: String,
    #[diesel(sql_type = Text)]
    operational_state: String,
    #[diesel(sql_type = BigInt)]
    expires_at: i64,
    #[diesel(sql_type = BigInt)]
    created_at: i64,
    #[diesel(sql_type = Text)]
    annotations: String,
}

/// A job's columns as the database holds them.
#[derive(Debug, diesel::QueryableByName)]
struct RawJob {
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Text)]
    state: String,
    #[diesel(sql_type = Text)]
    payload: String,
    #[diesel(sql_type = BigInt)]
    run_after: i64,
}

fn raw_sliver(store: &Store, urn: &str) -> RawSliver {
    store
        .read(|conn| {
            Ok::<_, StoreError>(
                diesel::sql_query(format!(
                    "SELECT allocation_state, operational_state, expires_at, created_at, \
                     annotations FROM slivers WHERE urn = '{urn}'"
                ))
                .get_result(conn)?,
            )
        })
        .unwrap()
}

fn raw_job(store: &Store, urn: &str) -> RawJob {
    store
        .read(|conn| {
            Ok::<_, StoreError>(
                diesel::sql_query(format!(
                    "SELECT kind, state, payload, run_after FROM jobs WHERE sliver_urn = '{urn}'"
                ))
                .get_result(conn)?,
            )
        })
        .unwrap()
}

/// Sets `column` of the sliver `urn` to the text `value`, as a hand edit.
fn overwrite(store: &Store, table: &str, column: &str, value: &str, urn_column: &str, urn: &str) {
    store
        .write(|conn| {
            diesel::sql_query(format!(
                "UPDATE {table} SET {column} = '{value}' WHERE {urn_column} = '{urn}'"
            ))
            .execute(conn)
            .map_err(StoreError::from)
        })
        .unwrap();
}

/// A provisioned sliver on a fresh aggregate at `url`; its URN.
fn provisioned_on(url: &str, clock: &TestClock) -> (Aggregate, String) {
    let am = open(url, &[host("h1", 4)], clock);
    let p = principal(30);
    let a = am
        .allocate(&p, SLICE, &request(&["a"], "default-vm"))
        .unwrap();
    let urn = a.slivers[0].urn.clone();
    let fresh = raw_sliver(am.store(), &urn);
    assert_eq!(fresh.allocation_state, "geni_allocated");
    assert_eq!(fresh.operational_state, "geni_pending_allocation");
    assert_eq!(fresh.expires_at, a.slivers[0].expires.timestamp());
    assert_eq!(fresh.created_at, clock.now().timestamp());
    assert_eq!(
        fresh.annotations, "{}",
        "a new sliver stores no annotations"
    );
    am.provision(&p, &slice(), &ProvisionOptions::default())
        .unwrap();
    (am, urn)
}

fn stored_values_keep_their_format(url: &str) {
    let clock = TestClock::new();
    let (am, urn) = provisioned_on(url, &clock);
    let row = raw_sliver(am.store(), &urn);
    assert_eq!(row.allocation_state, "geni_provisioned");
    let job = raw_job(am.store(), &urn);
    assert_eq!(
        (job.kind.as_str(), job.state.as_str()),
        ("provision", "queued")
    );
    assert_eq!(job.payload, format!(r#"{{"caller":"{USER}"}}"#));
    assert_eq!(job.run_after, clock.now().timestamp());
    let annotations = SliverAnnotations {
        hostname: Some("a.example.org".into()),
        ..SliverAnnotations::default()
    };
    am.store()
        .set_annotations(&urn, &annotations, clock.now())
        .unwrap();
    assert_eq!(
        raw_sliver(am.store(), &urn).annotations,
        serde_json::to_string(&annotations).unwrap()
    );
    assert_eq!(
        am.store()
            .sliver(&urn)
            .unwrap()
            .unwrap()
            .annotations
            .value(),
        &annotations
    );
}

fn an_unknown_value_reads_as_corrupt_naming_its_column(url: &str) {
    let clock = TestClock::new();
    let (am, urn) = provisioned_on(url, &clock);
    let store = am.store();
    let corrupt = |store: &Store| match store.sliver(&urn) {
        Err(StoreError::Corrupt { what, value }) => (what, value),
        other => panic!("expected a corrupt value, got {other:?}"),
    };
    overwrite(
        store,
        "slivers",
        "operational_state",
        "geni_dancing",
        "urn",
        &urn,
    );
    assert_eq!(
        corrupt(store),
        ("slivers.operational_state", "geni_dancing".to_owned())
    );
    overwrite(
        store,
        "slivers",
        "operational_state",
        "geni_ready",
        "urn",
        &urn,
    );
    overwrite(
        store,
        "slivers",
        "allocation_state",
        "geni_reserved",
        "urn",
        &urn,
    );
    assert_eq!(
        corrupt(store),
        ("slivers.allocation_state", "geni_reserved".to_owned())
    );
    overwrite(
        store,
        "slivers",
        "allocation_state",
        "geni_provisioned",
        "urn",
        &urn,
    );
    overwrite(
        store,
        "slivers",
        "annotations",
        "{\"hostname\":",
        "urn",
        &urn,
    );
    assert_eq!(
        corrupt(store),
        ("slivers.annotations", "{\"hostname\":".to_owned())
    );
    overwrite(store, "jobs", "kind", "teleport", "sliver_urn", &urn);
    match store.jobs_of_sliver(&urn) {
        Err(StoreError::Corrupt { what, value }) => {
            assert_eq!((what, value.as_str()), ("jobs.kind", "teleport"));
        }
        other => panic!("expected a corrupt job kind, got {other:?}"),
    }
}

#[test]
fn sqlite_stored_values_keep_their_format() {
    let dir = tempfile::tempdir().unwrap();
    stored_values_keep_their_format(&dir.path().join("am.sqlite").to_string_lossy());
}

#[test]
fn postgres_stored_values_keep_their_format() {
    if let Some(db) = PgDatabase::create("postgres_stored_format") {
        stored_values_keep_their_format(&db.url);
    }
}

#[test]
fn sqlite_an_unknown_value_reads_as_corrupt_naming_its_column() {
    let dir = tempfile::tempdir().unwrap();
    an_unknown_value_reads_as_corrupt_naming_its_column(
        &dir.path().join("am.sqlite").to_string_lossy(),
    );
}

#[test]
fn postgres_an_unknown_value_reads_as_corrupt_naming_its_column() {
    if let Some(db) = PgDatabase::create("postgres_corrupt_value") {
        an_unknown_value_reads_as_corrupt_naming_its_column(&db.url);
    }
}
