//! AM-side cost of one provisioned VM with the OpenNebula backend: full
//! sliver lifecycles (Allocate → Provision → `geni_start` → `geni_ready`
//! → Delete → VM terminated) through the core and the background jobs on
//! a SQLite store, against the OpenNebula simulator (onesim, 7.4.0, every
//! life-cycle delay 0) over real HTTP XML-RPC. Baseline in the same run:
//! the same lifecycles on the in-process simulated cloud, no delays.
//!
//! The client waits for `geni_notready` (VM created) before `geni_start`.
//! Two requests: one unbound VM, and the corpus request
//! `ffund-tcpip__two-hosts-one-segment.xml` (two VMs on one LAN, so a
//! link network per slice) with one provisioning worker, and the single
//! VM with two. Before the timed runs, each request is run
//! [`COUNTED`] times with one worker and the XML-RPC calls per VM are
//! printed, by method from the simulator's counts and in total from the
//! client's counter.

mod support;

use chrono::Utc;
use criterion::{Criterion, criterion_group, criterion_main};
use geni_am::core::{Aggregate, ProvisionOptions};
use geni_am::jobs::{self, JobsConfig, JobsHandle};
use geni_am::model::{OperationalState, Selector};
use geni_am::store::Store;
use geni_am::store::components::component_rows;
use geni_am_backend::Compute;
use geni_am_backend::sim::SimulatedCloud;
use geni_am_opennebula::OpenNebulaCloud;
use geni_am_opennebula::config::{OneConfig, SAMPLE_SECTION};
use geni_am_opennebula::driver::system_clock;
use geni_am_opennebula::rpc::{Answer, OneClient, OneRpc, Param, RpcError};
use onesim::{OneSim, SimSettings};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use support::{AUTHORITY, IMAGE, SLIVER_TYPE};

const PAIR: &str = "rspec/request/ffund-tcpip__two-hosts-one-segment.xml";
/// Lifecycles whose calls are counted, per case.
const COUNTED: usize = 20;
/// One unbound VM of the bench's sliver type.
const SINGLE: &str = r#"<rspec xmlns="http://www.geni.net/resources/rspec/3" type="request"><node client_id="vm" exclusive="false"><sliver_type name="emulab-xen"/></node></rspec>"#;

/// The sample OpenNebula section (the simulator's template 0, links
/// reserved from its network 0) on `endpoint`, with the bench's type name.
fn one_section(endpoint: &str) -> OneConfig {
    let mut config: OneConfig = toml::from_str(SAMPLE_SECTION).unwrap();
    config.endpoint = endpoint.to_owned();
    config.sliver_types[0].name = SLIVER_TYPE.into();
    config
}

/// The client, shared so its call counter stays readable.
struct Shared(Arc<OneClient>);

impl OneRpc for Shared {
    fn call(&self, method: &str, params: &[Param]) -> Result<Answer, RpcError> {
        self.0.call(method, params)
    }
}

/// A backend under test and how to tell that its VMs and link networks
/// are gone.
struct Cloud {
    backend: Arc<dyn Compute>,
    /// The simulated cloud of the baseline.
    sim: Option<Arc<SimulatedCloud>>,
    /// The simulator and client of the OpenNebula case.
    one: Option<(OneSim, Arc<OneClient>)>,
}

impl Cloud {
    fn simulated() -> Cloud {
        let cloud = Arc::new(support::simulated_cloud());
        Cloud {
            backend: cloud.clone(),
            sim: Some(cloud),
            one: None,
        }
    }

    fn opennebula() -> Cloud {
        let sim = OneSim::start(SimSettings::default());
        sim.set_host_capacity(0, 100_000, 1 << 32);
        // The corpus request names this image: the simulator gets one of that name.
        let mut image = onesim::xml::parse(onesim::seed::IMAGE).unwrap();
        image.set_value("ID", "1");
        image.set_value("NAME", IMAGE);
        sim.put_image(image);
        let config = one_section(&sim.endpoint());
        let client = Arc::new(config.client().unwrap());
        let driver = OpenNebulaCloud::new(
            Box::new(Shared(client.clone())),
            config,
            AUTHORITY,
            system_clock(),
        );
        Cloud {
            backend: Arc::new(driver),
            sim: None,
            one: Some((sim, client)),
        }
    }

    /// Whether every VM and link network the backend made is gone (read
    /// without an XML-RPC call).
    fn all_gone(&self) -> bool {
        if let Some((sim, _)) = &self.one {
            let done = |id| sim.vm_state(id).is_some_and(|(state, _)| state == 6);
            let vms_done = sim.vm_ids().into_iter().all(done);
            return vms_done && sim.vnet_ids() == [0];
        }
        let sim = self.sim.as_ref().expect("one of the two clouds");
        sim.list_vms().unwrap().is_empty() && sim.networks().is_empty()
    }
}

/// A store, an aggregate and the running jobs over one backend.
struct Setup {
    cloud: Cloud,
    store: Store,
    aggregate: Aggregate,
    jobs: Option<JobsHandle>,
    slices: AtomicUsize,
    _dir: tempfile::TempDir,
}

impl Setup {
    fn new(cloud: Cloud, workers: u32) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("am.sqlite").to_str().unwrap(), 8).unwrap();
        let inventory = cloud.backend.inventory().unwrap();
        store
            .sync_components(&component_rows(&inventory), Utc::now())
            .unwrap();
        let aggregate = support::aggregate(&store);
        let config = JobsConfig {
            workers,
            idle_poll_ms: 1,
            poll_interval_ms: 2,
            reconcile_interval_secs: 3600,
            inventory_interval_ms: 3_600_000,
            ..JobsConfig::default()
        };
        let jobs = jobs::start(own_pool(&dir), cloud.backend.clone(), config).unwrap();
        Setup {
            cloud,
            store,
            aggregate,
            jobs: Some(jobs),
            slices: AtomicUsize::new(0),
            _dir: dir,
        }
    }

    /// One lifecycle of `request` in a new slice; returns the VMs it made.
    fn lifecycle(&self, request: &str) -> usize {
        let n = self.slices.fetch_add(1, Ordering::Relaxed);
        let (slice, principal) = support::principal(n);
        let selector = Selector::Slice(slice.clone());
        self.aggregate
            .allocate(&principal, &slice, request)
            .unwrap();
        let report = self
            .aggregate
            .provision(&principal, &selector, &ProvisionOptions::default())
            .unwrap();
        let slivers: Vec<String> = report.slivers.into_iter().map(|s| s.urn).collect();
        self.wait_for(&slivers, OperationalState::NotReady);
        self.aggregate
            .perform_action(&principal, &selector, "geni_start", false, None)
            .unwrap();
        self.wait_for(&slivers, OperationalState::Ready);
        self.aggregate.delete(&principal, &selector).unwrap();
        let gone_by = Instant::now() + Duration::from_secs(10);
        while !self.cloud.all_gone() {
            if Instant::now() > gone_by {
                eprintln!("{slice}: VMs or networks still there 10 s after Delete");
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        slivers.len()
    }
}

impl Setup {
    /// Waits until every sliver is in `state`; panics on a sliver error or
    /// after a minute.
    fn wait_for(&self, slivers: &[String], state: OperationalState) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let rows: Vec<_> = slivers
                .iter()
                .map(|urn| self.store.sliver(urn).unwrap().unwrap())
                .collect();
            if rows.iter().all(|row| row.operational_state == state) {
                return;
            }
            let states: Vec<(&str, &str)> = rows
                .iter()
                .map(|row| (row.operational_state.as_str(), row.error.as_str()))
                .collect();
            assert!(rows.iter().all(|row| row.error.is_empty()), "{states:?}");
            assert!(
                Instant::now() < deadline,
                "not {} in 60 s: {states:?}",
                state.as_str()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        if let Some(jobs) = self.jobs.take() {
            jobs.stop();
        }
    }
}

/// The jobs' own connections to the store, as `serve` gives them.
fn own_pool(dir: &tempfile::TempDir) -> Store {
    Store::open(dir.path().join("am.sqlite").to_str().unwrap(), 6).unwrap()
}

/// Runs `COUNTED` lifecycles and prints the XML-RPC calls per VM.
fn count_calls(name: &str, request: &str) {
    let setup = Setup::new(Cloud::opennebula(), 1);
    setup.lifecycle(request);
    let Some((sim, client)) = &setup.cloud.one else {
        return;
    };
    let counts = || sim.call_counts();
    let (before, calls_before) = (counts(), client.calls());
    let vms: usize = (0..COUNTED).map(|_| setup.lifecycle(request)).sum();
    let after = counts();
    let per_vm = |n: u64| n as f64 / vms as f64;
    let mut by_method: BTreeMap<&str, u64> = BTreeMap::new();
    for (method, count) in &after {
        let delta = count - before.get(method).copied().unwrap_or(0);
        if delta > 0 {
            by_method.insert(method.as_str(), delta);
        }
    }
    println!(
        "{name}: {vms} VMs, {:.2} XML-RPC calls per VM (client counter), {:.2} (simulator)",
        per_vm(client.calls() - calls_before),
        per_vm(by_method.values().sum())
    );
    for (method, count) in by_method {
        println!("  {method:<28} {:>6.2} per VM", per_vm(count));
    }
}

fn bench(c: &mut Criterion) {
    let pair = support::corpus_request(PAIR);
    let cases = [("1 VM", SINGLE), ("2 VMs + 1 link", pair.as_str())];
    for (name, request) in cases {
        count_calls(name, request);
    }
    let mut group = c.benchmark_group("opennebula");
    group.sample_size(10);
    // Two workers only for the single VM: with links, the next slices'
    // reservations outrun the link networks' deletion and exhaust the
    // simulator's parent network (see docs/PERFORMANCE.md).
    let runs = [(1, &cases[..]), (2, &cases[..1])];
    for (workers, cases) in runs {
        for &(name, request) in cases {
            for (backend, make) in [
                (
                    "simulated cloud (baseline)",
                    Cloud::simulated as fn() -> Cloud,
                ),
                ("OpenNebula via onesim", Cloud::opennebula),
            ] {
                let setup = Setup::new(make(), workers);
                setup.lifecycle(request);
                let id = format!("{name} lifecycle, {workers} workers, {backend}");
                group.bench_function(id, |b| {
                    b.iter_custom(|iters| {
                        let start = Instant::now();
                        for _ in 0..iters {
                            setup.lifecycle(request);
                        }
                        start.elapsed()
                    });
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
