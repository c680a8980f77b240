//! Shared set-up of the jobs tests: a SQLite store in a temporary
//! directory, the simulated cloud on the real clock with short delays, the
//! background jobs started on both, and slivers from a corpus request
//! provisioned the way the core does it (rows written, a provision job
//! queued).

#![allow(dead_code)] // each test file uses a different part

use am::backend::sim::SimulatedCloud;
use am::backend::sim::config::{SAMPLE_SECTION, SimConfig};
use am::backend::{Compute, VmSpec};
use am::core::types::{AllocationState, OperationalState, UserKeys};
use am::jobs::{self, JobsConfig, JobsHandle};
use am::store::jobs::{JobKind, enqueue};
use am::store::slivers::{self, SliverRow};
use am::store::{Store, slices};
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
/// A corpus request with two nodes, `romeo` and `juliet`.
pub const REQUEST: &str = "rspec/request/ffund-tcpip__two-hosts-one-segment.xml";

/// A store, a simulated cloud and (once started) the jobs on them.
pub struct Harness {
    /// The store.
    pub store: Store,
    /// The simulated cloud.
    pub cloud: Arc<SimulatedCloud>,
    /// The running jobs.
    pub jobs: Option<JobsHandle>,
    _dir: tempfile::TempDir,
}

/// A VM specification for `tag` of the `small` type, with no users.
pub fn small_vm(tag: &str, host: Option<String>) -> VmSpec {
    VmSpec {
        tag: tag.to_owned(),
        name: "vm".into(),
        host,
        sliver_type: "small".into(),
        disk_image: None,
        users: Vec::new(),
        networks: Vec::new(),
    }
}

/// Fast settings: short polls, leases of a second, quick retries.
pub fn fast_jobs() -> JobsConfig {
    JobsConfig {
        workers: 2,
        lease_secs: 1,
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
    /// A fresh store and cloud; jobs not started.
    pub fn new() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("am.sqlite").to_str().unwrap(), 4).unwrap();
        let mut config: SimConfig = toml::from_str(SAMPLE_SECTION).unwrap();
        config.boot_delay_ms = 300;
        config.stop_delay_ms = 100;
        let host = &mut config.hosts[0];
        (host.cpus, host.memory_mb, host.max_vms) = (8, 16384, 8);
        let cloud = Arc::new(SimulatedCloud::new(&config, AUTHORITY).unwrap());
        Harness {
            store,
            cloud,
            jobs: None,
            _dir: dir,
        }
    }

    /// Starts the jobs with `config`.
    pub fn start(&mut self, config: JobsConfig) {
        let backend: Arc<dyn Compute> = self.cloud.clone();
        self.jobs = Some(jobs::start(self.store.clone(), backend, config).unwrap());
    }

    /// Stores the corpus request and one provisioned sliver per node in
    /// it, expiring at `expires`, with Alice's key, and queues their
    /// provision jobs. Returns the sliver URNs.
    pub fn provision(&self, expires: DateTime<Utc>) -> Vec<String> {
        let document = std::fs::read_to_string(corpus().join(REQUEST)).unwrap();
        let now = Utc::now();
        self.store
            .write(|conn| {
                slices::find_or_create(conn, SLICE, now + TimeDelta::days(30), now)?;
                let request = slices::insert_request(conn, SLICE, &document, now)?;
                let users = [UserKeys {
                    urn: ALICE.into(),
                    keys: vec!["ssh-ed25519 AAAAC3Nza alice@laptop".into()],
                }];
                slices::upsert_users(conn, SLICE, &users, now)?;
                let mut urns = Vec::new();
                for client_id in node_client_ids(&document) {
                    let row = sliver_row(&client_id, &request, expires);
                    slivers::insert(conn, &row)?;
                    let payload = serde_json::json!({});
                    enqueue(
                        conn,
                        JobKind::Provision,
                        SLICE,
                        Some(&row.urn),
                        &payload,
                        now,
                    )?;
                    urns.push(row.urn);
                }
                Ok::<_, am::store::StoreError>(urns)
            })
            .unwrap()
    }

    /// Queues an operational action the way the core does: the sliver
    /// moves to `immediate` at once and a job of `kind` is queued.
    pub fn act(&self, urn: &str, kind: JobKind, immediate: OperationalState) {
        let now = Utc::now();
        assert!(
            self.store
                .set_operational_state(urn, immediate, now)
                .unwrap()
        );
        self.store
            .write(|conn| enqueue(conn, kind, SLICE, Some(urn), &serde_json::json!({}), now))
            .unwrap();
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

/// The `client_id`s of the `<node>` elements of a request.
fn node_client_ids(document: &str) -> Vec<String> {
    document
        .split("<node ")
        .skip(1)
        .filter_map(|node| {
            let start = node.find("client_id=\"")? + "client_id=\"".len();
            let len = node[start..].find('"')?;
            Some(node[start..start + len].to_owned())
        })
        .collect()
}

fn sliver_row(client_id: &str, request: &str, expires: DateTime<Utc>) -> SliverRow {
    let urn = format!(
        "urn:publicid:IDN+{AUTHORITY}+sliver+{}",
        uuid::Uuid::new_v4().simple()
    );
    let mut row = SliverRow {
        urn,
        slice_urn: SLICE.into(),
        request_id: request.into(),
        client_id: client_id.into(),
        component_id: format!("urn:publicid:IDN+{AUTHORITY}+node+host1"),
        sliver_type: "small".into(),
        disk_image: None,
        cpus: 1,
        memory_mb: 1024,
        exclusive: false,
        allocation_state: String::new(),
        operational_state: String::new(),
        expires_at: expires.timestamp(),
        error: String::new(),
        annotations: "{}".into(),
        created_at: Utc::now().timestamp(),
    };
    row.set_states(
        AllocationState::Provisioned,
        OperationalState::PendingAllocation,
    );
    row
}
