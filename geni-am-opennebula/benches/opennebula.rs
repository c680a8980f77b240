//! What one VM costs the aggregate on OpenNebula: the driver, over its
//! HTTP client, against the in-process OpenNebula simulator with every
//! life-cycle delay at zero, takes a VM from the search for its tag
//! through creation on hold, release, observation until running and
//! termination. Baseline, measured in the same run: as many bare
//! `one.system.version` round trips as the life cycle makes calls, so the
//! difference is the driver's and the simulator's work on the documents.

use criterion::{Criterion, criterion_group, criterion_main};
use geni_am_backend::{Compute, UserKeys, VmSpec, VmState};
use geni_am_opennebula::OpenNebulaCloud;
use geni_am_opennebula::config::{OneConfig, SAMPLE_SECTION};
use geni_am_opennebula::rpc::{ClientSettings, OneClient, OneRpc, Session};
use onesim::{OneSim, SimSettings};
use std::hint::black_box;

/// XML-RPC calls of one life cycle with zero delays: the search for the
/// tag, instantiate, observe (on hold), the VM read and release of start,
/// observe (running), terminate.
const CALLS_PER_VM: usize = 7;

fn spec(n: u64, host: &str) -> VmSpec {
    VmSpec {
        size: None,
        tag: format!("urn:publicid:IDN+bench.example+sliver+{n}"),
        name: format!("node-{n}"),
        host: Some(host.to_owned()),
        sliver_type: "small".into(),
        disk_image: None,
        users: vec![UserKeys {
            urn: "urn:publicid:IDN+ch.example+user+alice".into(),
            keys: vec!["ssh-ed25519 AAAA alice".into()],
        }],
        networks: Vec::new(),
        exclusive: false,
        install: Vec::new(),
        execute: Vec::new(),
    }
}

fn life_cycle(cloud: &OpenNebulaCloud, spec: &VmSpec) {
    let vm = cloud.create_vm(spec).unwrap();
    assert_eq!(cloud.observe(&vm).unwrap().state, VmState::Stopped);
    cloud.start(&vm).unwrap();
    assert_eq!(cloud.observe(&vm).unwrap().state, VmState::Running);
    cloud.destroy(&vm).unwrap();
}

fn bench(c: &mut Criterion) {
    let sim = OneSim::start(SimSettings::default());
    let mut config: OneConfig = toml::from_str(SAMPLE_SECTION).unwrap();
    config.endpoint = sim.endpoint();
    let cloud = OpenNebulaCloud::connect(&config, "bench.example").unwrap();
    let host = cloud.inventory().unwrap().hosts[0].component_id.clone();
    let bare = OneClient::new(ClientSettings::new(
        &sim.endpoint(),
        Session::parse("oneadmin:onetest").unwrap(),
    ))
    .unwrap();
    let mut group = c.benchmark_group("opennebula");
    group.sample_size(20);
    group.bench_function("round trips only (baseline)", |b| {
        b.iter(|| {
            for _ in 0..CALLS_PER_VM {
                black_box(bare.call("one.system.version", &[]).unwrap());
            }
        })
    });
    let mut n = 0;
    group.bench_function("one VM, tag search to terminate", |b| {
        b.iter(|| {
            n += 1;
            life_cycle(&cloud, &spec(n, &host));
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
