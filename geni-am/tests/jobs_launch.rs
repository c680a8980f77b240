//! `service::launch` brings the background work up from the example
//! configuration: the simulated cloud it describes, its hosts as the
//! store's components, and jobs that stop when dropped.

use geni_am::config::Config;
use geni_am::service;
use geni_am::store::Store;
use std::path::PathBuf;

fn example() -> Config {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy/geni-am.example.toml");
    Config::parse(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn store_url(dir: &tempfile::TempDir) -> String {
    dir.path().join("am.sqlite").to_string_lossy().into_owned()
}

fn fresh_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&store_url(&dir), 4).unwrap();
    (dir, store)
}

#[test]
fn the_example_configuration_launches_the_simulated_cloud_and_seeds_components() {
    let mut config = example();
    let (dir, store) = fresh_store();
    config.store.url = store_url(&dir);

    let running = service::launch(&config, store.clone()).unwrap();
    assert_eq!(running.backend.name(), "simulated cloud");
    let components = store.components().unwrap();
    let hosts = &config.backend.sim.as_ref().unwrap().hosts;
    assert_eq!(components.len(), hosts.len());
    let expected = format!(
        "urn:publicid:IDN+{}+node+{}",
        config.aggregate.authority, hosts[0].name
    );
    assert_eq!(components[0].id, expected);
    assert_eq!(components[0].max_vms, i64::from(hosts[0].max_vms));
    drop(running);
}

#[test]
fn a_missing_sim_section_is_reported_with_its_key() {
    let mut config = example();
    config.backend.sim = None;
    let (dir, store) = fresh_store();
    config.store.url = store_url(&dir);
    let err = service::launch(&config, store).err().unwrap();
    assert!(
        err.to_string()
            .starts_with("cannot build the backend: backend.sim:"),
        "{err}"
    );
}
