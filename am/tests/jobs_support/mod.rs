//! Shared set-up of the jobs tests: a store (a SQLite file in a temporary
//! directory, or a fresh PostgreSQL database when `DATABASE_URL` is set),
//! the simulated cloud on the real clock with short delays and
//! the sliver type and image of a corpus request, the aggregate core on
//! the store (components seeded from the cloud's inventory), and the
//! background jobs on both. Slivers are allocated and provisioned, and
//! actions performed, through the core as the API does.

#![allow(dead_code)] // each test file uses a different part

use am::backend::components::component_rows;
use am::backend::sim::SimulatedCloud;
use am::backend::sim::config::{SAMPLE_SECTION, SimConfig};
use am::backend::{Compute, VmSpec};
use am::core::types::{OperationalState, Principal, Selector, UserKeys};
use am::core::{Aggregate, AggregateConfig, Policy, ProvisionOptions, SshAccess};
use am::jobs::{self, JobsConfig, JobsHandle};
use am::store::Store;
use am::store::slivers::SliverRow;
use chrono::{DateTime, TimeDelta, Utc};
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

/// A store, a simulated cloud and (once started) the jobs on them.
pub struct Harness {
    /// The aggregate core.
    pub aggregate: Aggregate,
    /// Its store.
    pub store: Store,
    /// The simulated cloud.
    pub cloud: Arc<SimulatedCloud>,
    /// The running jobs.
    pub jobs: Option<JobsHandle>,
    _database: Option<crate::core_support::PgDatabase>,
    _dir: tempfile::TempDir,
}

/// Defines, for each function `name(Harness)` listed, the tests
/// `name::sqlite` and `name::postgres` (which runs when `DATABASE_URL` is
/// set, see `core_support::PgDatabase`).
#[macro_export]
macro_rules! on_both_stores {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn sqlite() {
                super::$name($crate::jobs_support::Harness::sqlite());
            }

            #[test]
            fn postgres() {
                if let Some(harness) = $crate::jobs_support::Harness::postgres(stringify!($name)) {
                    super::$name(harness);
                }
            }
        }
    )*};
}

/// A VM specification for `tag` of the corpus request's type, with no users.
pub fn small_vm(tag: &str, host: Option<String>) -> VmSpec {
    VmSpec {
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
        reaper_recheck_ms: 500,
        retry_base_secs: 1,
        retry_max_secs: 2,
        max_attempts: 5,
    }
}

/// The corpus folder.
pub fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
}

impl Harness {
    /// A fresh SQLite store and cloud; jobs not started.
    pub fn sqlite() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let url = dir.path().join("am.sqlite").to_string_lossy().into_owned();
        Harness::open(&url, None, dir)
    }

    /// A fresh PostgreSQL database and cloud, or None when `DATABASE_URL`
    /// is not set.
    pub fn postgres(test: &str) -> Option<Harness> {
        let database = crate::core_support::PgDatabase::create(test)?;
        let url = database.url.clone();
        Some(Harness::open(
            &url,
            Some(database),
            tempfile::tempdir().unwrap(),
        ))
    }

    fn open(
        url: &str,
        database: Option<crate::core_support::PgDatabase>,
        dir: tempfile::TempDir,
    ) -> Harness {
        let store = Store::open(url, 8).unwrap();
        let mut config: SimConfig = toml::from_str(SAMPLE_SECTION).unwrap();
        config.boot_delay_ms = 300;
        config.stop_delay_ms = 100;
        let host = &mut config.hosts[0];
        (host.cpus, host.memory_mb, host.max_vms) = (8, 16384, 8);
        let kind = &mut config.sliver_types[0];
        kind.name = SLIVER_TYPE.into();
        kind.disk_images[0].name = IMAGE.into();
        let cloud = Arc::new(SimulatedCloud::new(&config, AUTHORITY).unwrap());
        let rows = component_rows(&cloud.inventory().unwrap());
        store.sync_components(&rows, Utc::now()).unwrap();
        Harness {
            aggregate: aggregate_on(&store, SshAccess::default()),
            store,
            cloud,
            jobs: None,
            _database: database,
            _dir: dir,
        }
    }

    /// Starts the jobs with `config`.
    pub fn start(&mut self, config: JobsConfig) {
        let backend: Arc<dyn Compute> = self.cloud.clone();
        self.jobs = Some(jobs::start(self.store.clone(), backend, config).unwrap());
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
        let allocation = self
            .aggregate
            .allocate(&principal(slice), slice, document)
            .unwrap();
        let urns: Vec<String> = allocation.slivers.into_iter().map(|s| s.urn).collect();
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

    /// Performs `action` (e.g. `geni_start`) on one sliver through the core.
    pub fn act(&self, urn: &str, action: &str, users: Option<&[UserKeys]>) {
        let selector = slivers(SLICE, &[urn.to_owned()]);
        self.aggregate
            .perform_action(&principal(SLICE), &selector, action, false, users)
            .unwrap();
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
        let deadline = Instant::now() + Duration::from_secs(20);
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
        self.wait_for(urn, state.as_str(), |row| {
            row.operational_state == state.as_str()
        })
    }

    /// Waits until `check` holds of the cloud.
    pub fn wait_cloud(&self, what: &str, check: impl Fn(&SimulatedCloud) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !check(&self.cloud) {
            assert!(Instant::now() < deadline, "the cloud never had {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
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
