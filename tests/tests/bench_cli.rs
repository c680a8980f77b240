//! `geni-am bench` against the real binary: N clients run full v3
//! lifecycles and the report names every method with its percentiles and
//! the lifecycles per second; without `--sliver-type` it requests a type
//! the aggregate advertises; an Allocate refused for want of room is sent
//! again and counted; GetVersion runs make exactly the calls asked for, on
//! one connection per call with `--new-connection`, `--processes`
//! merges its client processes' calls into one report, and `--populate`
//! leaves the slivers asked for provisioned in slices of their own;
//! `--slices` spreads the clients' lifecycles over slices;
//! `--rate` starts the lifecycles on a schedule (an open load) and says
//! how late they started after their slots.

use geni_am_tests::aggregate::Aggregate;
use geni_am_tests::database::Store;
use std::path::Path;
use std::process::Command;

/// Runs `geni-am bench` on `config` with `clients` clients of
/// `lifecycles` lifecycles each; what it printed, once it succeeded.
fn bench(config: &Path, clients: u32, lifecycles: u32) -> String {
    let (clients, lifecycles) = (clients.to_string(), lifecycles.to_string());
    bench_with(
        config,
        &["--clients", &clients, "--lifecycles", &lifecycles],
    )
}

/// Runs `geni-am bench --config config` with `args`; what it printed,
/// once it succeeded.
fn bench_with(config: &Path, args: &[&str]) -> String {
    let output = Command::new(geni_am_tests::geni_am_bin())
        .arg("bench")
        .arg("--config")
        .arg(config)
        .args(args)
        .output()
        .expect("geni-am bench runs");
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "bench failed:\n{report}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    report
}

/// Runs `geni-am bench --config config` with `args`, which it must refuse
/// before running anything (exit status 2); what it wrote to stderr.
fn bench_refused(config: &Path, args: &[&str]) -> String {
    let output = Command::new(geni_am_tests::geni_am_bin())
        .arg("bench")
        .arg("--config")
        .arg(config)
        .args(args)
        .output()
        .expect("geni-am bench runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    stderr
}

/// The numbers of the report's line for `method`: calls, then the mean,
/// p50, p90, p99 and max in milliseconds.
fn columns_of(report: &str, method: &str) -> Vec<f64> {
    let line = report
        .lines()
        .find(|l| l.starts_with(method) && l[method.len()..].starts_with(' '))
        .unwrap_or_else(|| panic!("no {method} line in:\n{report}"));
    let columns: Vec<f64> = line[method.len()..]
        .split_whitespace()
        .map(|n| n.parse().unwrap_or_else(|_| panic!("`{n}` in `{line}`")))
        .collect();
    assert_eq!(columns.len(), 6, "`{line}`");
    columns
}

/// The call count of the report's line for `method`.
fn calls_of(report: &str, method: &str) -> usize {
    columns_of(report, method)[0] as usize
}

/// The largest lag of the line saying how late the lifecycles started
/// after their slots, in milliseconds.
fn largest_lag(report: &str) -> f64 {
    let line = report
        .lines()
        .find(|l| l.starts_with("lifecycles started behind their slot by "))
        .unwrap_or_else(|| panic!("no lag line in:\n{report}"));
    line.rsplit_once("max ")
        .and_then(|(_, rest)| rest.strip_suffix(" ms")?.parse().ok())
        .unwrap_or_else(|| panic!("no largest lag in `{line}`"))
}

/// The number that starts the report's line ending in `rest`.
fn count_before(report: &str, rest: &str) -> usize {
    report
        .lines()
        .find_map(|l| l.strip_suffix(rest)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no line `N{rest}` in:\n{report}"))
}

/// The connections and calls of the report's line
/// `N connections opened for M calls`.
fn connections_and_calls(report: &str) -> (usize, usize) {
    let line = report
        .lines()
        .find(|l| l.contains(" connections opened for "))
        .unwrap_or_else(|| panic!("no connections line in:\n{report}"));
    let numbers: Vec<usize> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    match numbers[..] {
        [connections, calls] => (connections, calls),
        _ => panic!("not two counts in `{line}`"),
    }
}

#[test]
fn bench_runs_lifecycles() {
    let aggregate = Aggregate::start(Store::Sqlite);
    let report = bench(aggregate.config(), 3, 2);
    for method in [
        "Allocate",
        "Provision",
        "PerformOperationalAction",
        "Status",
        "Delete",
    ] {
        let calls = calls_of(&report, method);
        assert!(calls >= 6, "{method}: one call per lifecycle at least");
    }
    assert!(
        report.contains("6 lifecycles completed, 0 failed"),
        "totals:\n{report}"
    );
    assert!(report.contains("lifecycles/s"));
}

#[test]
fn bench_requests_a_sliver_type_the_aggregate_advertises_when_none_is_named() {
    let aggregate = Aggregate::start_with(Store::Sqlite, |table| {
        let types = table
            .get_mut("backend")
            .and_then(|b| b.get_mut("sim"))
            .and_then(|s| s.get_mut("sliver_types"))
            .and_then(toml::Value::as_array_mut)
            .expect("dev init configures sliver types");
        for kind in types.iter_mut().filter_map(toml::Value::as_table_mut) {
            let renamed = format!("site-{}", kind["name"].as_str().unwrap_or("vm"));
            kind.insert("name".into(), renamed.into());
        }
    });
    let report = bench(aggregate.config(), 1, 1);
    assert!(
        report.contains("1 lifecycles completed, 0 failed"),
        "totals:\n{report}"
    );
}

#[test]
fn bench_refuses_a_missing_configuration() {
    let output = Command::new(geni_am_tests::geni_am_bin())
        .args(["bench", "--config", "/nonexistent/geni-am.toml"])
        .output()
        .expect("geni-am bench runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("/nonexistent/geni-am.toml"), "{stderr}");
}

#[test]
fn an_allocate_refused_for_no_room_is_sent_again_until_every_lifecycle_completes() {
    // One VM of room for three clients: while one client's sliver lives
    // (and until its destroy job ran), the others' Allocates are refused.
    let aggregate = Aggregate::start_with(Store::Sqlite, |table| {
        let hosts = table
            .get_mut("backend")
            .and_then(|b| b.get_mut("sim"))
            .and_then(|s| s.get_mut("hosts"))
            .and_then(toml::Value::as_array_mut)
            .expect("dev init configures hosts");
        hosts.truncate(1);
        let host = hosts[0].as_table_mut().expect("a host table");
        host.insert("max_vms".into(), 1.into());
    });
    let report = bench(aggregate.config(), 3, 2);
    assert!(
        report.contains("6 lifecycles completed, 0 failed"),
        "totals:\n{report}"
    );
    let retries = count_before(
        &report,
        " Allocate calls refused for no room and sent again",
    );
    assert!(retries > 0, "three clients shared one VM:\n{report}");
    assert_eq!(calls_of(&report, "Allocate (no room)"), retries);
    assert_eq!(calls_of(&report, "Allocate"), 6, "{report}");
}

#[test]
fn getversion_makes_calls_times_clients_calls_on_one_kept_alive_connection_each() {
    let aggregate = Aggregate::start(Store::Sqlite);
    let report = bench_with(
        aggregate.config(),
        &["--getversion", "--clients", "3", "--calls", "7"],
    );
    assert_eq!(calls_of(&report, "GetVersion"), 21, "{report}");
    assert!(
        report.contains("21 GetVersion calls completed, 0 failed"),
        "totals:\n{report}"
    );
    assert!(report.contains(" calls/s\n"), "{report}");
    assert_eq!(connections_and_calls(&report), (3, 21));
    assert!(report.contains("client CPU "), "{report}");
}

#[test]
fn new_connection_opens_one_connection_per_call() {
    let aggregate = Aggregate::start(Store::Sqlite);
    let config = aggregate.config();
    let args = ["--new-connection", "--clients", "2"];
    let getversion = bench_with(
        config,
        &[&args[..], &["--getversion", "--calls", "5"]].concat(),
    );
    assert_eq!(connections_and_calls(&getversion), (10, 10));
    assert!(
        getversion.contains("a new connection per call"),
        "{getversion}"
    );
    let lifecycles = bench_with(config, &[&args[..], &["--lifecycles", "1"]].concat());
    assert!(
        lifecycles.contains("2 lifecycles completed, 0 failed"),
        "totals:\n{lifecycles}"
    );
    let (connections, calls) = connections_and_calls(&lifecycles);
    assert!(
        calls >= 10,
        "five calls per lifecycle at least:\n{lifecycles}"
    );
    assert_eq!(connections, calls, "{lifecycles}");
}

#[test]
fn processes_merge_every_client_process_calls_into_one_report() {
    let aggregate = Aggregate::start(Store::Sqlite);
    let config = aggregate.config();
    let getversion = bench_with(
        config,
        &[
            "--getversion",
            "--processes",
            "2",
            "--clients",
            "3",
            "--calls",
            "4",
        ],
    );
    assert!(getversion.contains(", 2 client processes"), "{getversion}");
    assert_eq!(calls_of(&getversion, "GetVersion"), 12, "{getversion}");
    assert_eq!(connections_and_calls(&getversion), (3, 12));
    assert!(getversion.contains("client CPU "), "{getversion}");
    // The processes number their clients apart: three nodes of one slice.
    let lifecycles = bench_with(
        config,
        &["--processes", "3", "--clients", "3", "--lifecycles", "1"],
    );
    assert!(
        lifecycles.contains("3 lifecycles completed, 0 failed"),
        "totals:\n{lifecycles}"
    );
    assert_eq!(calls_of(&lifecycles, "Allocate"), 3, "{lifecycles}");
}

#[test]
fn slices_spread_the_clients_lifecycles_client_i_in_slice_i_mod_n() {
    let aggregate = Aggregate::start(Store::Sqlite);
    // Over two processes of two clients each, so that the second one's
    // clients (numbers 2 and 3) land in their slices by their numbers
    // across the run, not within their process.
    let report = bench_with(
        aggregate.config(),
        &[
            "--processes",
            "2",
            "--clients",
            "4",
            "--slices",
            "3",
            "--lifecycles",
            "1",
        ],
    );
    assert!(
        report.starts_with("4 clients x 1 lifecycles in 3 slices against "),
        "{report}"
    );
    assert!(
        report.contains("4 lifecycles completed, 0 failed"),
        "totals:\n{report}"
    );
    let events: serde_json::Value =
        serde_json::from_str(&aggregate.admin(&["--json", "events", "--limit", "1000"]))
            .expect("admin prints JSON");
    // The slivers each slice's events name: clients 0 and 3 in bench0, 1
    // in bench1, 2 in bench2, and none in the development slice.
    let mut slivers = std::collections::BTreeMap::<&str, std::collections::BTreeSet<&str>>::new();
    for event in events.as_array().expect("an array of events") {
        if let (Some(slice), Some(sliver)) =
            (event["slice_urn"].as_str(), event["sliver_urn"].as_str())
        {
            slivers.entry(slice).or_default().insert(sliver);
        }
    }
    let counts: Vec<(&str, usize)> = slivers.iter().map(|(slice, s)| (*slice, s.len())).collect();
    assert_eq!(
        counts,
        [
            ("urn:publicid:IDN+geni-am.test+slice+bench0", 2),
            ("urn:publicid:IDN+geni-am.test+slice+bench1", 1),
            ("urn:publicid:IDN+geni-am.test+slice+bench2", 1),
        ],
        "{events:#}"
    );
}

#[test]
fn slices_must_be_at_least_one_for_lifecycles_and_not_with_one_named_slice() {
    let aggregate = Aggregate::start(Store::Sqlite);
    for (args, says) in [
        (&["--slices", "0"][..], "--slices must be at least 1"),
        (
            &["--slices", "2", "--getversion"][..],
            "cannot be used with",
        ),
        (
            &["--slices", "2", "--populate", "10"][..],
            "cannot be used with",
        ),
        (
            &[
                "--slices",
                "2",
                "--slice",
                "urn:publicid:IDN+geni-am.test+slice+demo",
            ][..],
            "--slice names the one slice of every client",
        ),
    ] {
        let stderr = bench_refused(aggregate.config(), args);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

#[test]
fn populate_provisions_the_slivers_asked_for_in_slices_of_their_own() {
    let aggregate = Aggregate::start(Store::Sqlite);
    // Four requests (2, 2, 2 and 1 nodes), two to a slice of 4.
    let report = bench_with(
        aggregate.config(),
        &[
            "--clients",
            "2",
            "--populate",
            "7",
            "--nodes-per-request",
            "2",
            "--slivers-per-slice",
            "4",
        ],
    );
    assert!(
        report.contains("7 slivers completed, 0 failed"),
        "totals:\n{report}"
    );
    assert_eq!(calls_of(&report, "Allocate"), 4, "{report}");
    assert_eq!(calls_of(&report, "Provision"), 4, "{report}");
    let slices: serde_json::Value =
        serde_json::from_str(&aggregate.admin(&["--json", "slices"])).expect("admin prints JSON");
    let live: Vec<(&str, u64, &serde_json::Value)> = slices
        .as_array()
        .expect("an array of slices")
        .iter()
        .map(|s| {
            (
                s["urn"].as_str().unwrap(),
                s["live_slivers"].as_u64().unwrap(),
                &s["by_state"],
            )
        })
        .collect();
    // Provisioned, their VMs created and not started.
    let provisioned = |n: u64| serde_json::json!({ "geni_notready": n });
    assert_eq!(
        live,
        [
            (
                "urn:publicid:IDN+geni-am.test+slice+populate0",
                4,
                &provisioned(4)
            ),
            (
                "urn:publicid:IDN+geni-am.test+slice+populate1",
                3,
                &provisioned(3)
            ),
        ],
        "{slices:#}"
    );
}

#[test]
fn rate_starts_each_client_lifecycle_on_its_schedule() {
    let aggregate = Aggregate::start(Store::Sqlite);
    let started = std::time::Instant::now();
    // Two clients, two lifecycles each, one offered per second: the fourth
    // (slot 3) may not start before 3 s into the run.
    let report = bench_with(
        aggregate.config(),
        &["--clients", "2", "--lifecycles", "2", "--rate", "1"],
    );
    let elapsed = started.elapsed();
    assert!(report.contains(", 1 lifecycles/s offered"), "{report}");
    assert!(
        report.contains("4 lifecycles completed, 0 failed"),
        "{report}"
    );
    assert!(
        elapsed >= std::time::Duration::from_secs(3),
        "the last lifecycle started before its slot: {elapsed:?}"
    );
    // Each client's slots are 2 s apart and a lifecycle takes far less
    // (a 200 ms boot): a lag counted from the run's start instead of the
    // slot would reach 3 s.
    let lag = largest_lag(&report);
    assert!(lag < 2000.0, "largest lag {lag} ms:\n{report}");
}

#[test]
fn a_schedule_the_aggregate_cannot_keep_shows_in_how_late_lifecycles_started() {
    let aggregate = Aggregate::start(Store::Sqlite);
    // One client offered a million lifecycles a second: the third starts
    // when the second ended, two whole lifecycles after its slot (2 µs),
    // so at least two Allocates and two Deletes late. Two Allocates take
    // at least the median of three (the second shortest), as do two
    // Deletes; the report rounds each figure to 0.1 ms.
    let report = bench_with(
        aggregate.config(),
        &["--clients", "1", "--lifecycles", "3", "--rate", "1000000"],
    );
    assert!(
        report.contains("3 lifecycles completed, 0 failed"),
        "{report}"
    );
    let medians = columns_of(&report, "Allocate")[2] + columns_of(&report, "Delete")[2];
    let lag = largest_lag(&report);
    assert!(
        lag + 0.15 >= medians && lag > 0.0,
        "largest lag {lag} ms, medians of Allocate and Delete {medians} ms:\n{report}"
    );
}

#[test]
fn rate_must_be_a_positive_number() {
    let aggregate = Aggregate::start(Store::Sqlite);
    for rate in ["0", "-5", "NaN"] {
        let stderr = bench_refused(aggregate.config(), &[&format!("--rate={rate}")]);
        assert!(
            stderr.contains("--rate must be a positive number"),
            "--rate {rate}: {stderr}"
        );
    }
}
