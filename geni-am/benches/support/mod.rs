//! What the benches that drive slivers through the core share: the
//! simulated cloud with no delays and room for any load, the aggregate's
//! identity, the corpus and the bench user's principal.

use chrono::{TimeDelta, Utc};
use geni_am::core::{Aggregate, AggregateConfig, Policy};
use geni_am::model::Principal;
use geni_am::store::Store;
use geni_am_backend::sim::SimulatedCloud;
use geni_am_backend::sim::config::{SAMPLE_SECTION, SimConfig};
use std::path::PathBuf;

/// The benches' aggregate authority.
pub const AUTHORITY: &str = "bench.geni-am.test";
/// The sliver type of the corpus requests the benches use.
pub const SLIVER_TYPE: &str = "emulab-xen";
/// The disk image those requests name.
pub const IMAGE: &str = "urn:publicid:IDN+emulab.net+image+emulab-ops:UBUNTU18-64-STD";

/// A simulated cloud with no delays, one host big enough for any run and
/// the corpus requests' sliver type and image.
pub fn simulated_cloud() -> SimulatedCloud {
    let mut config: SimConfig = toml::from_str(SAMPLE_SECTION).unwrap();
    (
        config.create_delay_ms,
        config.boot_delay_ms,
        config.stop_delay_ms,
    ) = (0, 0, 0);
    let host = &mut config.hosts[0];
    (host.cpus, host.memory_mb, host.max_vms) = (1000, 1 << 22, 1000);
    let kind = &mut config.sliver_types[0];
    kind.name = SLIVER_TYPE.into();
    kind.disk_images[0].name = IMAGE.into();
    SimulatedCloud::new(&config, AUTHORITY).unwrap()
}

/// The aggregate of [`AUTHORITY`] on `store`, with the default policy.
pub fn aggregate(store: &Store) -> Aggregate {
    Aggregate::new(
        store.clone(),
        AggregateConfig {
            authority: AUTHORITY.into(),
            am_urn: format!("urn:publicid:IDN+{AUTHORITY}+authority+am"),
            cm_urn: format!("urn:publicid:IDN+{AUTHORITY}+authority+cm"),
            policy: Policy::default(),
            ssh: Default::default(),
        },
    )
    .unwrap()
}

/// The bench user acting on slice number `n`; returns the slice URN too.
pub fn principal(n: usize) -> (String, Principal) {
    let slice = format!("urn:publicid:IDN+ch.geni.net:bench+slice+s{n}");
    let principal = Principal {
        caller_urn: "urn:publicid:IDN+ch.geni.net+user+alice".into(),
        speaking_for: None,
        slice_urn: Some(slice.clone()),
        credential_expires: Utc::now() + TimeDelta::days(30),
    };
    (slice, principal)
}

/// A request of the shared corpus, by its path below `corpus/`.
pub fn corpus_request(path: &str) -> String {
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
    std::fs::read_to_string(corpus.join(path)).unwrap()
}
