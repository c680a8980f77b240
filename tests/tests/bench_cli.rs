//! `geni-am bench` against the real binary: N clients run full v3
//! lifecycles and the report names every method with its percentiles and
//! the lifecycles per second; without `--sliver-type` it requests a type
//! the aggregate advertises.

use geni_am_tests::aggregate::Aggregate;
use geni_am_tests::database::Store;
use std::path::Path;
use std::process::Command;

/// Runs `geni-am bench` on `config` with `clients` clients of
/// `lifecycles` lifecycles each; what it printed, once it succeeded.
fn bench(config: &Path, clients: u32, lifecycles: u32) -> String {
    let output = Command::new(geni_am_tests::geni_am_bin())
        .arg("bench")
        .arg("--config")
        .arg(config)
        .args(["--clients", &clients.to_string()])
        .args(["--lifecycles", &lifecycles.to_string()])
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
        let line = report
            .lines()
            .find(|l| l.starts_with(method))
            .unwrap_or_else(|| panic!("no {method} line in:\n{report}"));
        let calls: usize = line
            .split_whitespace()
            .nth(1)
            .and_then(|n| n.parse().ok())
            .expect("a call count");
        assert!(
            calls >= 6,
            "{method}: one call per lifecycle at least: {line}"
        );
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
