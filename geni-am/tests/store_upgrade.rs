//! The upgrade path: a store written by an earlier release
//! (`tests/fixtures/store-2026-11-27`, see its README) opens with this
//! one — `serve` applies the new migrations at start (here `Store::open`,
//! which `serve` calls) — and its slices and slivers read back intact
//! through `geni-am admin` and through the core's Status and Describe.
//! Before that, `admin` refuses the old schema rather than migrating it
//! under a running `serve`, but backs it up.

mod core_support;

use chrono::{DateTime, TimeZone, Utc};
use core_support::config;
use geni_am::core::Aggregate;
use geni_am::model::{AllocationState, OperationalState, Selector};
use geni_am::store::Store;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

const SLICE: &str = "urn:publicid:IDN+geni-am.test+slice+demo";
const WEB: &str = "urn:publicid:IDN+geni-am.test+sliver+22b69ba17b904cf188cf4e14911a8da4";
const CACHE: &str = "urn:publicid:IDN+geni-am.test+sliver+835559dd18de4b618c15e6460c9f0e03";
const DB: &str = "urn:publicid:IDN+geni-am.test+sliver+570bd771dfda4fb3bcdca310ca937ae4";
const SPARE: &str = "urn:publicid:IDN+geni-am.test+sliver+ddb1f988c4a0451e978e7d5f2a3251b4";

/// The fixture.
fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/store-2026-11-27/am.sqlite")
}

/// A minute after the fixture was written: every live sliver unexpired.
fn then() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 27, 5, 3, 0).unwrap()
}

/// A copy of the fixture in `dir` and a development configuration using it.
fn copied(dir: &Path) -> (String, PathBuf) {
    let url = dir.join("am.sqlite");
    std::fs::copy(fixture(), &url).unwrap();
    let made = geni_am(&["dev", "init", "--dir", dir.to_str().unwrap()]);
    assert_eq!(made.status.code(), Some(0), "{made:?}");
    let config = dir.join("geni-am.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("url = \"geni-am.sqlite\"", "url = \"am.sqlite\""),
    )
    .unwrap();
    (url.display().to_string(), config)
}

fn geni_am(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_geni-am"))
        .args(args)
        .output()
        .expect("run geni-am")
}

/// `admin --json ARGS` on `config`, which must succeed.
fn admin_json(config: &Path, args: &[&str]) -> Value {
    let mut all = vec!["admin", "--config", config.to_str().unwrap(), "--json"];
    all.extend_from_slice(args);
    let out = geni_am(&all);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_fixture_is_small_and_of_the_earlier_schema() {
    let bytes = std::fs::metadata(fixture()).unwrap().len();
    assert!(bytes < 200 * 1024, "{bytes} bytes");
    let dir = tempfile::tempdir().unwrap();
    let (url, _) = copied(dir.path());
    let pending = Store::attach(&url, 1)
        .unwrap()
        .pending_migrations()
        .unwrap();
    assert_eq!(
        pending,
        ["20261129000010"],
        "only the operator migration is new"
    );
}

#[test]
fn admin_refuses_an_old_schema_but_backs_it_up() {
    let dir = tempfile::tempdir().unwrap();
    let (_, config) = copied(dir.path());
    let out = geni_am(&["admin", "--config", config.to_str().unwrap(), "slices"]);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("older than this geni-am") && said.contains("20261129000010"),
        "{said}"
    );
    let copy = dir.path().join("before-upgrade.sqlite");
    let backup = admin_json(&config, &["backup", copy.to_str().unwrap()]);
    assert!(backup["bytes"].as_u64().unwrap() > 0);
    let pending = Store::attach(copy.to_str().unwrap(), 1)
        .unwrap()
        .pending_migrations()
        .unwrap();
    assert_eq!(pending.len(), 1, "the backup is the old schema, untouched");
}

#[test]
fn an_earlier_store_opens_migrated_with_its_slivers_intact() {
    let dir = tempfile::tempdir().unwrap();
    let (url, config) = copied(dir.path());
    let store = Store::open(&url, 2).expect("the migrations apply");
    assert!(store.pending_migrations().unwrap().is_empty());

    let slices = admin_json(&config, &["slices"]);
    assert_eq!(slices.as_array().unwrap().len(), 1);
    assert_eq!(slices[0]["urn"], SLICE);
    assert_eq!(slices[0]["live_slivers"], 3);
    assert_eq!(slices[0]["by_state"]["geni_ready"], 1);
    assert_eq!(slices[0]["by_state"]["geni_notready"], 1);
    assert_eq!(slices[0]["by_state"]["geni_allocated"], 1);
    assert_eq!(slices[0]["shut_down"], Value::Null);

    let live = admin_json(&config, &["slivers", "--slice", SLICE]);
    let by_client: Vec<(&str, &str, &str)> = live
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["client_id"].as_str().unwrap(),
                s["urn"].as_str().unwrap(),
                s["operational_state"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        by_client,
        [
            ("cache", CACHE, "geni_notready"),
            ("web", WEB, "geni_ready"),
            ("spare", SPARE, "geni_pending_allocation"),
        ]
    );
    assert!(live[1]["vm"].is_string(), "the VM handle survives: {live}");
    let deleted = admin_json(&config, &["slivers", "--state", "geni_unallocated"]);
    assert_eq!(deleted[0]["urn"], DB);
    let events = admin_json(&config, &["events", "--slice", SLICE]);
    assert_eq!(events.as_array().unwrap().len(), 26, "{events}");
    let done = admin_json(&config, &["jobs"]);
    assert_eq!(done["queued"], 0);

    let am = Aggregate::new(store, geni_config())
        .unwrap()
        .with_clock(Arc::new(then));
    let status = am.status(&Selector::Slice(SLICE.into())).unwrap();
    let states: Vec<(String, AllocationState, OperationalState)> = status
        .slivers
        .iter()
        .map(|s| (s.urn.clone(), s.allocation, s.operational))
        .collect();
    assert!(states.contains(&(
        WEB.into(),
        AllocationState::Provisioned,
        OperationalState::Ready
    )));
    assert!(states.contains(&(
        CACHE.into(),
        AllocationState::Provisioned,
        OperationalState::NotReady
    )));
    assert!(states.contains(&(
        SPARE.into(),
        AllocationState::Allocated,
        OperationalState::PendingAllocation
    )));
    let described = am.describe(&Selector::Slice(SLICE.into())).unwrap();
    for urn in [WEB, CACHE, SPARE] {
        assert!(
            described.manifest.contains(&format!("sliver_id=\"{urn}\"")),
            "{}",
            described.manifest
        );
    }
    assert!(!described.manifest.contains(DB));
    assert!(
        described.manifest.contains("<login "),
        "the logins the backend reported survive: {}",
        described.manifest
    );
}

/// The identity of the development aggregate the fixture was made with.
fn geni_config() -> geni_am::core::AggregateConfig {
    let mut c = config();
    c.authority = "geni-am.test".into();
    c.am_urn = "urn:publicid:IDN+geni-am.test+authority+am".into();
    c.cm_urn = "urn:publicid:IDN+geni-am.test+authority+cm".into();
    c
}
