//! Throughput of the provisioning workers: slivers of corpus requests,
//! allocated and provisioned through the core on a SQLite store, driven by
//! the jobs on the simulated cloud (no delays) until every one is
//! `geni_notready`. Baseline, measured in the same run: the same jobs
//! claimed and finished on the same store with no backend work, so the
//! ratio is the cost of driving the backend and writing observed state.

mod support;

use chrono::{TimeDelta, Utc};
use criterion::{Criterion, criterion_group, criterion_main};
use geni_am::core::ProvisionOptions;
use geni_am::jobs::{self, JobsConfig};
use geni_am::model::{OperationalState, Selector};
use geni_am::store::Store;
use geni_am::store::components::component_rows;
use geni_am_backend::Compute;
use geni_am_backend::sim::SimulatedCloud;
use std::sync::Arc;
use std::time::{Duration, Instant};

const REQUEST: &str = "rspec/request/ffund-tcpip__two-hosts-one-segment.xml";
/// Slices per run; the corpus request has two nodes, so twice as many slivers.
const SLICES: usize = 25;

/// A store with `SLICES` provisioned slices and the cloud to run them on.
struct Setup {
    store: Store,
    cloud: Arc<SimulatedCloud>,
    slivers: Vec<String>,
    _dir: tempfile::TempDir,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("am.sqlite").to_str().unwrap(), 8).unwrap();
    let cloud = Arc::new(support::simulated_cloud());
    store
        .sync_components(&component_rows(&cloud.inventory().unwrap()), Utc::now())
        .unwrap();
    let aggregate = support::aggregate(&store);
    let document = support::corpus_request(REQUEST);
    let mut slivers = Vec::new();
    for i in 0..SLICES {
        let (slice, principal) = support::principal(i);
        aggregate.allocate(&principal, &slice, &document).unwrap();
        let report = aggregate
            .provision(
                &principal,
                &Selector::Slice(slice),
                &ProvisionOptions::default(),
            )
            .unwrap();
        slivers.extend(report.slivers.into_iter().map(|s| s.urn));
    }
    Setup {
        store,
        cloud,
        slivers,
        _dir: dir,
    }
}

fn fast(workers: u32) -> JobsConfig {
    JobsConfig {
        workers,
        idle_poll_ms: 1,
        poll_interval_ms: 2,
        ..JobsConfig::default()
    }
}

/// Runs the jobs until every sliver is `geni_notready`.
fn drive(setup: &Setup, workers: u32) -> Duration {
    let start = Instant::now();
    let backend: Arc<dyn Compute> = setup.cloud.clone();
    let handle = jobs::start(setup.store.clone(), backend, fast(workers)).unwrap();
    let notready = OperationalState::NotReady;
    while !setup
        .slivers
        .iter()
        .all(|urn| setup.store.sliver(urn).unwrap().unwrap().operational_state == notready)
    {
        std::thread::sleep(Duration::from_millis(1));
    }
    let elapsed = start.elapsed();
    handle.stop();
    elapsed
}

/// Claims and finishes every queued job with `workers` threads, no backend.
fn drain(setup: &Setup, workers: u32) -> Duration {
    let start = Instant::now();
    std::thread::scope(|scope| {
        for i in 0..workers {
            let store = &setup.store;
            scope.spawn(move || {
                let owner = format!("bench-{i}");
                loop {
                    let jobs = store
                        .claim_jobs(&owner, Utc::now(), TimeDelta::seconds(60), 1)
                        .unwrap();
                    if jobs.is_empty() {
                        return;
                    }
                    for job in jobs {
                        store.finish_job(&job.id, &owner, Utc::now()).unwrap();
                    }
                }
            });
        }
    });
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("jobs");
    group.sample_size(10);
    for workers in [1, 2] {
        group.bench_function(format!("queue only (baseline), {workers} workers"), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| drain(&setup(), workers)).sum());
        });
        group.bench_function(format!("provision to notready, {workers} workers"), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| drive(&setup(), workers)).sum());
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
