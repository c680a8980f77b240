//! Shared fixtures of the store and core tests: an aggregate on a fresh
//! SQLite file (or PostgreSQL database) with a small inventory, a clock
//! the test moves, principals, and requests.
#![allow(dead_code)]

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use geni_am::core::{Aggregate, AggregateConfig, CoreError, Policy};
use geni_am::geni::AmError;
use geni_am::model::{Principal, Selector, UserKeys};
use geni_am::store::Store;
use geni_am::store::components::{ComponentDetails, ComponentRow, DiskImageSpec, SliverTypeSpec};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

pub const AUTHORITY: &str = "am.test.example";
pub const CM: &str = "urn:publicid:IDN+am.test.example+authority+cm";
pub const SLICE: &str = "urn:publicid:IDN+ch.test.example:proj+slice+exp1";
pub const USER: &str = "urn:publicid:IDN+ch.test.example+user+alice";
pub const IMAGE: &str = "urn:publicid:IDN+am.test.example+image+ubuntu22";

/// A core failure as the API answers it: its GENI code and message, by
/// the API's one mapping.
pub trait Answered {
    /// The code and message sent for this failure.
    fn answered(self) -> AmError;
}

impl Answered for CoreError {
    fn answered(self) -> AmError {
        AmError::from(self)
    }
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The shared corpus of real GENI data.
pub fn corpus() -> PathBuf {
    workspace_root().join("../shared/corpus")
}

/// A movable clock starting at 2026-01-01T00:00:00Z.
#[derive(Clone)]
pub struct TestClock(Arc<AtomicI64>);

impl TestClock {
    pub fn new() -> Self {
        Self(Arc::new(AtomicI64::new(start().timestamp())))
    }
    pub fn now(&self) -> DateTime<Utc> {
        DateTime::from_timestamp(self.0.load(Ordering::SeqCst), 0).unwrap()
    }
    pub fn advance(&self, by: TimeDelta) {
        self.0.fetch_add(by.num_seconds(), Ordering::SeqCst);
    }
}

pub fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap()
}

/// An aggregate and what keeps it alive.
pub struct Fixture {
    pub am: Aggregate,
    pub clock: TestClock,
    pub dir: tempfile::TempDir,
    pub url: String,
}

pub fn config() -> AggregateConfig {
    AggregateConfig {
        authority: AUTHORITY.into(),
        am_urn: format!("urn:publicid:IDN+{AUTHORITY}+authority+am"),
        cm_urn: CM.into(),
        policy: Policy::default(),
        ssh: Default::default(),
    }
}

/// A sliver type of `cpus` CPUs and `memory_mb` MiB booting [`IMAGE`].
pub fn sliver_type(name: &str, cpus: i64, memory_mb: i64) -> SliverTypeSpec {
    SliverTypeSpec {
        max_cores: None,
        max_ram_mb: None,
        max_disk_gb: None,
        name: name.into(),
        cpus,
        cores: None,
        memory_mb,
        disk_images: vec![DiskImageSpec {
            name: IMAGE.into(),
            os: Some("Linux".into()),
            version: Some("22.04".into()),
            description: Some("Ubuntu".into()),
            default: true,
        }],
    }
}

/// A shared host `name` with `cpus` CPUs offering `default-vm` (1 CPU,
/// 1 GiB) and `emulab-xen` (1 CPU, 512 MiB).
pub fn host(name: &str, cpus: i64) -> ComponentRow {
    ComponentRow {
        id: format!("urn:publicid:IDN+{AUTHORITY}+node+{name}"),
        name: name.into(),
        cpus,
        memory_mb: cpus * 1024,
        max_vms: cpus,
        exclusive: false,
        available: true,
        details: ComponentDetails {
            hardware_types: vec!["kvm-host".into()],
            sliver_types: vec![
                sliver_type("default-vm", 1, 1024),
                sliver_type("emulab-xen", 1, 512),
            ],
            location: None,
        },
    }
}

/// Opens an aggregate on `url` with `inventory`.
pub fn open(url: &str, inventory: &[ComponentRow], clock: &TestClock) -> Aggregate {
    let store = Store::open(url, 8).expect("store opens");
    store
        .sync_components(inventory, clock.now())
        .expect("inventory stored");
    let c = clock.clone();
    Aggregate::new(store, config())
        .expect("aggregate")
        .with_clock(Arc::new(move || c.now()))
}

/// A fresh SQLite aggregate with two 4-CPU hosts.
pub fn fixture() -> Fixture {
    fixture_with(&[host("h1", 4), host("h2", 4)])
}

/// A fresh SQLite aggregate with `inventory`.
pub fn fixture_with(inventory: &[ComponentRow]) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let url = dir.path().join("am.sqlite").to_string_lossy().into_owned();
    let clock = TestClock::new();
    let am = open(&url, inventory, &clock);
    Fixture {
        am,
        clock,
        dir,
        url,
    }
}

/// A principal for [`SLICE`] whose credential expires `days` from the start.
pub fn principal(days: i64) -> Principal {
    Principal {
        caller_urn: USER.into(),
        speaking_for: None,
        slice_urn: Some(SLICE.into()),
        credential_expires: start() + TimeDelta::days(days),
    }
}

pub fn slice() -> Selector {
    Selector::Slice(SLICE.into())
}

pub fn slivers(urns: &[&str]) -> Selector {
    Selector::Slivers {
        slice_urn: SLICE.into(),
        urns: urns.iter().map(|u| u.to_string()).collect(),
    }
}

pub fn alice() -> UserKeys {
    UserKeys {
        urn: USER.into(),
        keys: vec!["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKx alice@laptop\n".into()],
    }
}

/// A GENI v3 request with one unbound node per client id, of `sliver_type`.
pub fn request(client_ids: &[&str], sliver_type: &str) -> String {
    let nodes: String = client_ids
        .iter()
        .map(|c| {
            format!(
                "  <node client_id=\"{c}\" exclusive=\"false\">\n    <sliver_type name=\"{sliver_type}\"/>\n    <interface client_id=\"{c}:if0\"/>\n  </node>\n"
            )
        })
        .collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:schemaLocation=\"http://www.geni.net/resources/rspec/3 http://www.geni.net/resources/rspec/3/request.xsd\" type=\"request\">\n{nodes}</rspec>\n"
    )
}

/// A prerequisite of an optional half of a test is missing (`what` says
/// which): with `GENI_AM_REQUIRE_ALL=1` (as `scripts/test.sh` sets) the
/// test fails; otherwise a loud notice says the half did not run, and the
/// caller skips it.
pub fn missing_prerequisite(what: &str) {
    assert!(
        std::env::var("GENI_AM_REQUIRE_ALL").as_deref() != Ok("1"),
        "GENI_AM_REQUIRE_ALL=1 but {what}"
    );
    eprintln!("\n*** {what}: this part of the test did NOT run ***\n");
}

/// A PostgreSQL database created for one test and dropped afterwards.
pub struct PgDatabase {
    admin_url: String,
    name: String,
    /// URL of the fresh database.
    pub url: String,
}

impl PgDatabase {
    /// A fresh database on the server of `DATABASE_URL`, or None (with a
    /// loud notice) when it is unset; with `GENI_AM_REQUIRE_ALL=1` an unset
    /// `DATABASE_URL` fails the test instead.
    pub fn create(test: &str) -> Option<PgDatabase> {
        use diesel::{Connection, RunQueryDsl};
        let Ok(admin_url) = std::env::var("DATABASE_URL") else {
            missing_prerequisite(&format!(
                "{test}: DATABASE_URL is not set (the PostgreSQL half)"
            ));
            return None;
        };
        let name = format!("geni_am_test_{}", uuid::Uuid::new_v4().simple());
        let mut admin = diesel::PgConnection::establish(&admin_url).expect("DATABASE_URL connects");
        diesel::sql_query(format!("CREATE DATABASE {name}"))
            .execute(&mut admin)
            .expect("test database created");
        let url = with_database(&admin_url, &name);
        Some(PgDatabase {
            admin_url,
            name,
            url,
        })
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        use diesel::{Connection, RunQueryDsl};
        if let Ok(mut admin) = diesel::PgConnection::establish(&self.admin_url) {
            let _ = diesel::sql_query(format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ))
            .execute(&mut admin);
        }
    }
}

/// `url` with its database name replaced by `name`.
fn with_database(url: &str, name: &str) -> String {
    let scheme_end = url.find("://").map_or(0, |i| i + 3);
    let (base, query) = match url.find('?') {
        Some(q) => (&url[..q], &url[q..]),
        None => (url, ""),
    };
    let host_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |i| scheme_end + i);
    format!("{}/{name}{query}", &base[..host_end])
}

/// An aggregate on a fresh PostgreSQL database (kept alive by the
/// returned guard), or None when PostgreSQL is not configured.
pub fn pg_fixture_with(
    test: &str,
    inventory: &[ComponentRow],
) -> Option<(PgDatabase, Aggregate, TestClock)> {
    let db = PgDatabase::create(test)?;
    let clock = TestClock::new();
    let am = open(&db.url, inventory, &clock);
    Some((db, am, clock))
}

/// Another aggregate on the store at `url` (as a second AM process would
/// open it), without touching the inventory.
pub fn attach(url: &str, clock: &TestClock) -> Aggregate {
    let c = clock.clone();
    Aggregate::new(Store::open(url, 2).expect("store opens"), config())
        .expect("aggregate")
        .with_clock(Arc::new(move || c.now()))
}

/// Allocates one `default-vm` node per client id into [`SLICE`] (with
/// [`principal`]`(30)`) and provisions them all; returns the sliver URNs
/// in client id order.
pub fn provisioned(f: &Fixture, client_ids: &[&str]) -> Vec<String> {
    let p = principal(30);
    let a =
        f.am.allocate(&p, SLICE, &request(client_ids, "default-vm"))
            .expect("allocated");
    f.am.provision(&p, &slice(), &geni_am::core::ProvisionOptions::default())
        .expect("provisioned");
    a.slivers.into_iter().map(|s| s.urn).collect()
}

/// How many slivers Describe reports for [`SLICE`].
pub fn described(f: &Fixture) -> usize {
    f.am.describe(&slice()).expect("described").slivers.len()
}

/// Runs `f` on `store` while another thread holds the store's writers'
/// turn (a write transaction left open), and returns what `f` returned.
/// Panics if `f` waited for that turn: the holder lets go only after `f`
/// has answered, or after a bound generous enough for a slow machine.
pub fn beside_an_open_write<T: Send + 'static>(
    store: &Store,
    f: impl FnOnce(&Store) -> T + Send + 'static,
) -> T {
    use std::sync::mpsc::{RecvTimeoutError, channel};
    let (holding, held) = channel();
    let (release, released) = channel::<()>();
    let writer = {
        let store = store.clone();
        std::thread::spawn(move || {
            store
                .write(|_| {
                    holding.send(()).expect("the test waits");
                    // Let go when told, or when the test has gone.
                    let _ = released.recv();
                    Ok::<_, geni_am::store::StoreError>(())
                })
                .expect("the open write")
        })
    };
    held.recv().expect("the write opened");
    let (answer, answered) = channel();
    let asker = {
        let store = store.clone();
        std::thread::spawn(move || answer.send(f(&store)))
    };
    let outcome = answered.recv_timeout(std::time::Duration::from_secs(20));
    release.send(()).expect("the holder waits");
    writer.join().expect("the holder");
    let asked = asker.join();
    match outcome {
        Ok(answer) => answer,
        Err(RecvTimeoutError::Timeout) => panic!("waited for the writers' turn"),
        // `f` panicked: its own message says why.
        Err(RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(asked.expect_err("the asker ended without an answer"))
        }
    }
}
