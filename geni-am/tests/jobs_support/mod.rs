//! Shared set-up of the jobs tests: a store (a SQLite file in a temporary
//! directory, or a fresh PostgreSQL database when `DATABASE_URL` is set),
//! the simulated cloud on the real clock with short delays and
//! the sliver type and image of a corpus request — or the OpenNebula
//! backend against the OpenNebula simulator (`onesim`) —, the aggregate
//! core on the store (components seeded from the cloud's inventory), and
//! the background jobs on both. Slivers are allocated and provisioned, and
//! actions performed, through the core as the API does.

#![allow(dead_code)] // each test file uses a different part

use chrono::{DateTime, TimeDelta, Utc};
use geni_am::core::{Aggregate, AggregateConfig, Policy, ProvisionOptions, SshAccess};
use geni_am::geni::AmError;
use geni_am::jobs::{self, JobsConfig, JobsHandle};
use geni_am::model::{OperationalState, Principal, Selector, UserKeys};
use geni_am::store::Store;
use geni_am::store::components::component_rows;
use geni_am::store::slivers::SliverRow;
use geni_am_backend::sim::SimulatedCloud;
use geni_am_backend::sim::config::{SAMPLE_SECTION, SimConfig};
use geni_am_backend::{Compute, VmSpec};
use geni_am_opennebula::OpenNebulaCloud;
use geni_am_opennebula::config::{OneConfig, SAMPLE_SECTION as ONE_SECTION};
use onesim::{OneSim, SimSettings};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The aggregate's authority in these tests.
pub const AUTHORITY: &str = "jobs.geni-am.test";
/// The slice every test works in.
pub const SLICE: &str = "urn:publicid:IDN+ch.geni.net:jobs+slice+demo";
/// The user whose keys are installed.
pub const ALICE: &str = "urn:publicid:IDN+ch.geni.net+user+alice";
/// A corpus request with two `emulab-xen` nodes, `romeo` and `juliet`,
/// booting [`IMAGE`], on one link.
pub const REQUEST: &str = "rspec/request/ffund-tcpip__two-hosts-one-segment.xml";
/// The sliver type the corpus request names.
pub const SLIVER_TYPE: &str = "emulab-xen";
/// The disk image the corpus request names.
pub const IMAGE: &str = "urn:publicid:IDN+emulab.net+image+emulab-ops:UBUNTU18-64-STD";

/// The cloud the jobs of a harness drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloudKind {
    /// The in-process simulated cloud ([`Harness::cloud`]).
    Simulated,
    /// The OpenNebula backend against the OpenNebula simulator
    /// ([`Harness::onesim`], release 7.4.0, no delays, the sample section's
    /// sliver type `small`, no retries).
    OpenNebula,
}

/// A store, a cloud and (once started) the jobs on them.
pub struct Harness {
    /// The aggregate core.
    pub aggregate: Aggregate,
    /// Its store.
    pub store: Store,
    /// The simulated cloud (the jobs' backend unless the harness runs on
    /// OpenNebula).
    pub cloud: Arc<SimulatedCloud>,
    /// The running jobs.
    pub jobs: Option<JobsHandle>,
    onesim: Option<OneSim>,
    backend: Arc<dyn Compute>,
    url: String,
    _database: Option<crate::core_support::PgDatabase>,
    _dir: tempfile::TempDir,
}

/// Defines, for each function `name(Harness)` listed, the tests
/// `name::sqlite` and `name::postgres` (which runs when `DATABASE_URL` is
/// set, see `core_support::PgDatabase`), on the simulated cloud or, after
/// `OpenNebula:`, on the OpenNebula simulator (see [`CloudKind`]).
#[macro_export]
macro_rules! on_both_stores {
    ($cloud:ident: $($name:ident),* $(,)?) => {$(
        mod $name {
            use $crate::jobs_support::{CloudKind, Harness};

            #[test]
            fn sqlite() {
                super::$name(Harness::sqlite_on(CloudKind::$cloud));
            }

            #[test]
            fn postgres() {
                if let Some(harness) = Harness::postgres_on(stringify!($name), CloudKind::$cloud) {
                    super::$name(harness);
                }
            }
        }
    )*};
    ($($name:ident),* $(,)?) => {
        $crate::on_both_stores!(Simulated: $($name),*);
    };
}

/// A VM specification for `tag` of the corpus request's type, with no users.
pub fn small_vm(tag: &str, host: Option<String>) -> VmSpec {
    VmSpec {
        size: None,
        tag: tag.to_owned(),
        name: "vm".into(),
        host,
        sliver_type: SLIVER_TYPE.into(),
        disk_image: None,
        users: Vec::new(),
        networks: Vec::new(),
        exclusive: false,
        install: Vec::new(),
        execute: Vec::new(),
    }
}

/// Fast settings: short polls, short leases (stored to the second, so a
/// lease of 2 s lasts between 1 and 2 s), quick retries.
pub fn fast_jobs() -> JobsConfig {
    JobsConfig {
        workers: 2,
        lease_secs: 2,
        idle_poll_ms: 20,
        poll_interval_ms: 50,
        reconcile_interval_secs: 1,
        inventory_interval_ms: 100,
        reaper_recheck_ms: 500,
        retry_base_secs: 1,
        retry_max_secs: 2,
        ..JobsConfig::default()
    }
}

/// The corpus folder.
pub fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
}

impl Harness {
    /// A fresh SQLite store and simulated cloud; jobs not started.
    pub fn sqlite() -> Harness {
        Harness::sqlite_on(CloudKind::Simulated)
    }

    /// A fresh PostgreSQL database and simulated cloud, or None when
    /// `DATABASE_URL` is not set.
    pub fn postgres(test: &str) -> Option<Harness> {
        Harness::postgres_on(test, CloudKind::Simulated)
    }

    /// A fresh SQLite store and cloud of `kind`; jobs not started.
    pub fn sqlite_on(kind: CloudKind) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let url = dir.path().join("am.sqlite").to_string_lossy().into_owned();
        Harness::open(&url, None, dir, kind)
    }

    /// A fresh PostgreSQL database and cloud of `kind`, or None when
    /// `DATABASE_URL` is not set.
    pub fn postgres_on(test: &str, kind: CloudKind) -> Option<Harness> {
        let database = crate::core_support::PgDatabase::create(test)?;
        let url = database.url.clone();
        Some(Harness::open(
            &url,
            Some(database),
            tempfile::tempdir().unwrap(),
            kind,
        ))
    }

    fn open(
        url: &str,
        database: Option<crate::core_support::PgDatabase>,
        dir: tempfile::TempDir,
        kind: CloudKind,
    ) -> Harness {
        let store = Store::open(url, 8).unwrap();
        let cloud = Arc::new(
            SimulatedCloud::new(&sim_config(), AUTHORITY)
                .unwrap()
                .keeping_specs(),
        );
        let (onesim, backend): (_, Arc<dyn Compute>) = match kind {
            CloudKind::Simulated => (None, cloud.clone()),
            CloudKind::OpenNebula => {
                let (onesim, backend) = opennebula();
                (Some(onesim), Arc::new(backend))
            }
        };
        let rows = component_rows(&backend.inventory().unwrap());
        store.sync_components(&rows, Utc::now()).unwrap();
        Harness {
            aggregate: aggregate_on(&store, SshAccess::default()),
            store,
            cloud,
            jobs: None,
            onesim,
            backend,
            url: url.to_owned(),
            _database: database,
            _dir: dir,
        }
    }

    /// Replaces the simulated cloud (before the jobs start) by one that
    /// takes `millis` to define a new VM, as a real cloud takes seconds.
    pub fn slow_creation(&mut self, millis: u64) {
        assert!(self.jobs.is_none(), "the jobs already drive the cloud");
        assert!(self.onesim.is_none(), "a harness on the simulated cloud");
        let config = SimConfig {
            create_delay_ms: millis,
            ..sim_config()
        };
        self.cloud = Arc::new(
            SimulatedCloud::new(&config, AUTHORITY)
                .unwrap()
                .keeping_specs(),
        );
        self.backend = self.cloud.clone();
    }

    /// Where the store is (a SQLite path or a PostgreSQL URL), for a
    /// process of the binary to open it.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Another store on the same database, as another process opens it.
    pub fn another_store(&self) -> Store {
        Store::open(&self.url, 4).unwrap()
    }

    /// Starts the jobs with `config`.
    pub fn start(&mut self, config: JobsConfig) {
        let jobs = jobs::start(self.store.clone(), self.backend.clone(), config).unwrap();
        self.jobs = Some(jobs);
    }

    /// The OpenNebula simulator; panics when the harness runs on the
    /// simulated cloud.
    pub fn onesim(&self) -> &OneSim {
        self.onesim.as_ref().expect("a harness on OpenNebula")
    }

    /// Allocates the corpus request into [`SLICE`] and provisions its
    /// slivers until `expires`, with Alice's key. Returns the sliver URNs.
    pub fn provision(&self, expires: DateTime<Utc>) -> Vec<String> {
        self.provision_into(SLICE, expires)
    }

    /// [`Harness::provision`] into another slice.
    pub fn provision_into(&self, slice: &str, expires: DateTime<Utc>) -> Vec<String> {
        let document = std::fs::read_to_string(corpus().join(REQUEST)).unwrap();
        self.provision_document(slice, &document, expires)
    }

    /// Allocates `document` into `slice` and provisions its slivers until
    /// `expires`, with Alice's key. Returns the sliver URNs.
    pub fn provision_document(
        &self,
        slice: &str,
        document: &str,
        expires: DateTime<Utc>,
    ) -> Vec<String> {
        let urns = self.allocate_document(slice, document).unwrap();
        let options = ProvisionOptions {
            best_effort: false,
            end_time: Some(expires),
            users: vec![alice(&["ssh-ed25519 AAAAC3Nza alice@laptop"])],
        };
        self.aggregate
            .provision(&principal(slice), &slivers(slice, &urns), &options)
            .unwrap();
        urns
    }

    /// Allocates `document` into `slice` as Alice; the sliver URNs.
    pub fn allocate_document(&self, slice: &str, document: &str) -> Result<Vec<String>, AmError> {
        let allocation = self
            .aggregate
            .allocate(&principal(slice), slice, document)?;
        Ok(allocation.slivers.into_iter().map(|s| s.urn).collect())
    }

    /// Performs `action` (e.g. `geni_start`) on one sliver through the core.
    pub fn act(&self, urn: &str, action: &str, users: Option<&[UserKeys]>) {
        self.try_act(urn, action, users).unwrap();
    }

    /// Performs `action` on the sliver `urn` of [`SLICE`] through the core
    /// (all or nothing), and returns what the core answered.
    pub fn try_act(
        &self,
        urn: &str,
        action: &str,
        users: Option<&[UserKeys]>,
    ) -> Result<Vec<geni_am::model::SliverInfo>, AmError> {
        let selector = slivers(SLICE, &[urn.to_owned()]);
        Ok(self
            .aggregate
            .perform_action(&principal(SLICE), &selector, action, false, users)?)
    }

    /// Deletes every sliver of `slice` through the core.
    pub fn delete(&self, slice: &str) {
        self.delete_selected(&Selector::Slice(slice.into()));
    }

    /// Deletes the slivers `selector` names through the core.
    pub fn delete_selected(&self, selector: &Selector) {
        let slice = selector.slice_urn();
        self.aggregate.delete(&principal(slice), selector).unwrap();
    }

    /// Waits (up to 20 s) until the sliver satisfies `done`, and returns it.
    pub fn wait_for(&self, urn: &str, what: &str, done: impl Fn(&SliverRow) -> bool) -> SliverRow {
        self.wait_for_within(urn, what, Duration::from_secs(20), done)
    }

    /// Waits up to `limit` until the sliver satisfies `done`, and returns it.
    pub fn wait_for_within(
        &self,
        urn: &str,
        what: &str,
        limit: Duration,
        done: impl Fn(&SliverRow) -> bool,
    ) -> SliverRow {
        let deadline = Instant::now() + limit;
        loop {
            let row = self.store.sliver(urn).unwrap().unwrap();
            if done(&row) {
                return row;
            }
            assert!(
                Instant::now() < deadline,
                "{urn} never became {what}; it is {} / {} ({})",
                row.allocation_state,
                row.operational_state,
                row.error
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the sliver is in operational state `state`.
    pub fn wait_state(&self, urn: &str, state: OperationalState) -> SliverRow {
        self.wait_for(urn, state.as_str(), |row| row.operational_state == state)
    }

    /// Waits (up to 20 s) until `check` holds of the cloud.
    pub fn wait_cloud(&self, what: &str, check: impl Fn(&SimulatedCloud) -> bool) {
        self.wait_cloud_within(what, Duration::from_secs(20), check);
    }

    /// Waits up to `limit` until `check` holds of the cloud.
    pub fn wait_cloud_within(
        &self,
        what: &str,
        limit: Duration,
        check: impl Fn(&SimulatedCloud) -> bool,
    ) {
        eventually_within(&format!("the cloud had {what}"), limit, || {
            check(&self.cloud)
        });
    }
}

/// Waits (up to 20 s) until `check` holds; `what` says what never happened.
pub fn eventually(what: &str, check: impl Fn() -> bool) {
    eventually_within(what, Duration::from_secs(20), check);
}

/// Waits up to `limit` until `check` holds; `what` says what never happened.
pub fn eventually_within(what: &str, limit: Duration, check: impl Fn() -> bool) {
    let deadline = Instant::now() + limit;
    while !check() {
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An OpenNebula simulator of the recorded release, and the OpenNebula
/// backend on it with hosts under [`AUTHORITY`].
fn opennebula() -> (OneSim, OpenNebulaCloud) {
    let onesim = OneSim::start(SimSettings::default());
    let mut config: OneConfig = toml::from_str(ONE_SECTION).unwrap();
    config.endpoint = onesim.endpoint();
    config.retries = 0;
    let backend = OpenNebulaCloud::connect(&config, AUTHORITY).unwrap();
    (onesim, backend)
}

/// The sample simulated cloud with short delays, room for eight VMs on
/// its first host, and the sliver type and image of the corpus request.
fn sim_config() -> SimConfig {
    let mut config: SimConfig = toml::from_str(SAMPLE_SECTION).unwrap();
    config.boot_delay_ms = 300;
    config.stop_delay_ms = 100;
    let host = &mut config.hosts[0];
    (host.cpus, host.memory_mb, host.max_vms) = (8, 16384, 8);
    let sliver_type = &mut config.sliver_types[0];
    sliver_type.name = SLIVER_TYPE.into();
    sliver_type.disk_images[0].name = IMAGE.into();
    config
}

/// The aggregate core of the tests on `store`, with SSH access `ssh`.
pub fn aggregate_on(store: &Store, ssh: SshAccess) -> Aggregate {
    let identity = AggregateConfig {
        authority: AUTHORITY.into(),
        am_urn: format!("urn:publicid:IDN+{AUTHORITY}+authority+am"),
        cm_urn: format!("urn:publicid:IDN+{AUTHORITY}+authority+cm"),
        policy: Policy::default(),
        ssh,
    };
    Aggregate::new(store.clone(), identity).unwrap()
}

/// Alice with `keys`.
pub fn alice(keys: &[&str]) -> UserKeys {
    UserKeys {
        urn: ALICE.into(),
        keys: keys.iter().map(|k| k.to_string()).collect(),
    }
}

/// Alice, acting on `slice` with a credential valid for 30 days.
fn principal(slice: &str) -> Principal {
    Principal {
        caller_urn: ALICE.into(),
        speaking_for: None,
        slice_urn: Some(slice.into()),
        credential_expires: Utc::now() + TimeDelta::days(30),
    }
}

fn slivers(slice: &str, urns: &[String]) -> Selector {
    Selector::Slivers {
        slice_urn: slice.into(),
        urns: urns.to_vec(),
    }
}
