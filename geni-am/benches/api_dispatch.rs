//! What the API layer adds to a call: ListResources answered through the
//! server's request handler (client check, body limit, XML-RPC decode,
//! credential check, advertisement, envelope, encode), built by the
//! service's composition root from a configuration, against a baseline of
//! the work it cannot avoid — verifying the same user credential and
//! rendering the same advertisement — measured in the same run; GetVersion
//! shows the cost of a call without credentials.
//!
//! `cargo bench -p geni-am --bench api_dispatch -- --warm-up-time 1 --measurement-time 3`

use chrono::{TimeDelta, Utc};
use criterion::{Criterion, criterion_group, criterion_main};
use geni_am::api::ApiVersion;
use geni_am::config::Config;
use geni_am::core::Aggregate;
use geni_am::server::{Endpoint, PeerIdentity};
use geni_am::service;
use geni_am::store::components::component_rows;
use geni_am_backend::Compute;
use geni_am_backend::sim::SimulatedCloud;
use geni_am_backend::sim::config::{SAMPLE_SECTION, SimConfig};
use geni_credentials::TrustStore;
use geni_credentials::devca::Authority;
use geni_credentials::privilege::Privilege;
use geni_credentials::sfa;
use geni_credentials::sign::{self, Algorithms, CredentialSpec};
use geni_xmlrpc::Value;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Arc;

const AUTHORITY: &str = "am.bench.example";

/// The benched aggregate's configuration (the files it names are never read).
const CONFIG: &str = r#"
[server]
listen = "127.0.0.1:0"
public_url = "https://am.bench.example"
cert = "am-cert.pem"
key = "am-key.pem"
trust_roots = "trusted"

[aggregate]
authority = "am.bench.example"
urn = "urn:publicid:IDN+am.bench.example+authority+am"
cm_urn = "urn:publicid:IDN+am.bench.example+authority+cm"

[backend]
kind = "sim"
"#;

fn string(text: &str) -> Value {
    Value::String(text.into())
}

fn bench(c: &mut Criterion) {
    let ca = Authority::root("ch.bench.example", "sa").unwrap();
    let alice = ca.user("alice").unwrap();
    let mut trust = TrustStore::new();
    trust.add_root(ca.cert().clone());
    let trust = Arc::new(trust);
    let chain = trust.verify_chain(&alice.chain(), Utc::now()).unwrap();
    let privileges = [Privilege::new("info", true)];
    let credential = sign::issue(
        &CredentialSpec {
            owner: &alice.chain(),
            target: &alice.chain(),
            expires: Utc::now() + TimeDelta::days(1),
            privileges: &privileges,
        },
        &ca.identity().signing_key(),
        Algorithms::default(),
    )
    .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::parse(CONFIG).unwrap();
    config.store.url = dir.path().join("am.sqlite").to_string_lossy().into_owned();
    config.store.pool_size = 4;
    let store = service::open_store(&config.store).unwrap();
    let sim: SimConfig = toml::from_str(SAMPLE_SECTION).unwrap();
    let cloud = SimulatedCloud::new(&sim, AUTHORITY).unwrap();
    let rows = component_rows(&cloud.inventory().unwrap());
    store.sync_components(&rows, Utc::now()).unwrap();
    let aggregate = Aggregate::new(store, service::aggregate_config(&config)).unwrap();
    let handler = service::handler(aggregate.clone(), Arc::clone(&trust), &config.server);
    let peer = PeerIdentity::Verified(Arc::new(chain));
    let v3 = Endpoint::Api(ApiVersion::V3);

    let wrapped = Value::Struct(BTreeMap::from([
        ("geni_type".to_owned(), string("geni_sfa")),
        ("geni_version".to_owned(), string("3")),
        ("geni_value".to_owned(), string(&credential)),
    ]));
    let version = Value::Struct(BTreeMap::from([
        ("type".to_owned(), string("GENI")),
        ("version".to_owned(), string("3")),
    ]));
    let options = Value::Struct(BTreeMap::from([("geni_rspec_version".to_owned(), version)]));
    let list =
        geni_xmlrpc::encode_call("ListResources", &[Value::Array(vec![wrapped]), options]).unwrap();
    let get_version = geni_xmlrpc::encode_call("GetVersion", &[]).unwrap();
    let caller = alice.urn().clone();

    let mut group = c.benchmark_group("api_dispatch");
    group.bench_function("baseline: verify credential + advertisement", |b| {
        b.iter(|| {
            let request = sfa::Request {
                caller: &caller,
                target: None,
                operation: None,
                at: Utc::now(),
            };
            black_box(sfa::verify(credential.as_bytes(), &trust, &request).unwrap());
            black_box(aggregate.advertisement(false).unwrap())
        })
    });
    group.bench_function("ListResources via the request handler", |b| {
        b.iter(|| black_box(handler.answer(v3, Some(&peer), list.as_bytes())))
    });
    group.bench_function("GetVersion via the request handler", |b| {
        b.iter(|| black_box(handler.answer(v3, Some(&peer), get_version.as_bytes())))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
