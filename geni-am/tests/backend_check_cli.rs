//! End to end: `geni-am backend check`, run as the built binary on a
//! configuration written by `geni-am dev init`, against the OpenNebula
//! simulator (onesim): a usable cloud, a refused password, a missing
//! template, an unreachable endpoint, and the simulated cloud.

use onesim::{OneSim, SimSettings};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn geni_am(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_geni-am"))
        .args(args)
        .output()
        .expect("run geni-am")
}

/// A development configuration in `dir`; returns its path.
fn dev_config(dir: &Path) -> PathBuf {
    let made = geni_am(&["dev", "init", "--dir", dir.to_str().unwrap()]);
    assert_eq!(made.status.code(), Some(0), "{made:?}");
    dir.join("geni-am.toml")
}

/// The development configuration with its `[backend]` replaced by an
/// OpenNebula section.
fn opennebula_config(dir: &Path, endpoint: &str, session: &str, template_id: i32) -> PathBuf {
    let path = dev_config(dir);
    let text = std::fs::read_to_string(&path).unwrap();
    let head = &text[..text.find("[backend]").unwrap()];
    let backend = format!(
        r#"[backend]
kind = "opennebula"

[backend.opennebula]
endpoint = "{endpoint}"
session = "{session}"
timeout_secs = 5
retries = 0
images = ["geni-img"]

[[backend.opennebula.sliver_types]]
name = "small"
template_id = {template_id}
cpu = 0.5
vcpu = 1
memory_mb = 256

[backend.opennebula.links]
parent_network = 0
size = 16
"#
    );
    std::fs::write(&path, format!("{head}{backend}")).unwrap();
    path
}

/// Runs the check; returns the exit status and the printed lines.
fn check(config: &Path) -> (Option<i32>, Vec<String>) {
    let out = geni_am(&["backend", "check", "--config", config.to_str().unwrap()]);
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    (out.status.code(), lines)
}

fn has(lines: &[String], prefix: &str) -> bool {
    lines.iter().any(|l| l.starts_with(prefix))
}

#[test]
fn a_usable_cloud_passes_every_check() {
    let sim = OneSim::start(SimSettings::default());
    let dir = tempfile::tempdir().unwrap();
    let config = opennebula_config(dir.path(), &sim.endpoint(), "oneadmin:onetest", 0);
    let (status, lines) = check(&config);
    assert_eq!(status, Some(0), "{lines:#?}");
    let expected = [
        format!("✓ endpoint: {} answers as OpenNebula", sim.endpoint()),
        "✓ session: authenticated as `oneadmin` (user 0), primary group `oneadmin` (0), groups [0]; in the oneadmin group".into(),
        "✓ version: OpenNebula 7.4.0 (supported: 5.10 to 7.x)".into(),
        "✓ sliver type small: template 0 `geni-small`: CPU 0.1, MEMORY 128 MiB, CONTEXT with NETWORK = \"YES\", 1 NIC(s)".into(),
        "✓ images: 1 READY: geni-img".into(),
        "✓ links: parent network 0 `geni-net`: 100 of 100 addresses free, 16 per link, room for 6 links".into(),
        "✓ hosts: 1 of 1 usable: localhost (dummy, 8 CPU, 16384 MiB free)".into(),
        "✓ quotas: no VM quota set".into(),
    ];
    for line in &expected {
        assert!(has(&lines, line), "missing {line:?} in {lines:#?}");
    }
    assert_eq!(lines.len(), expected.len(), "{lines:#?}");
    assert_eq!(
        sim.call_count("one.template.instantiate"),
        0,
        "nothing is created"
    );
}

#[test]
fn a_refused_password_stops_the_checks_that_need_a_session() {
    let sim = OneSim::start(SimSettings::default());
    let dir = tempfile::tempdir().unwrap();
    let config = opennebula_config(dir.path(), &sim.endpoint(), "oneadmin:wrong", 0);
    let (status, lines) = check(&config);
    assert_eq!(status, Some(1), "{lines:#?}");
    assert!(has(&lines, "✓ endpoint: "), "{lines:#?}");
    assert!(
        has(
            &lines,
            "✗ session: OpenNebula refused the session of user `oneadmin`: check the password or token"
        ),
        "{lines:#?}"
    );
    assert_eq!(
        lines.last().unwrap(),
        "✗ remaining checks: not run: they need a reachable endpoint and an accepted session"
    );
    assert_eq!(lines.len(), 3, "{lines:#?}");
}

#[test]
fn a_missing_template_fails_its_sliver_type_only() {
    let sim = OneSim::start(SimSettings {
        version: "6.10.0".into(),
        ..SimSettings::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let config = opennebula_config(dir.path(), &sim.endpoint(), "oneadmin:onetest", 7);
    let (status, lines) = check(&config);
    assert_eq!(status, Some(1), "{lines:#?}");
    assert!(
        has(
            &lines,
            "✗ sliver type small: template 7 does not exist or this user cannot use it"
        ),
        "{lines:#?}"
    );
    assert!(has(&lines, "✓ version: OpenNebula 6.10.0"), "{lines:#?}");
    let failed: Vec<&String> = lines.iter().filter(|l| l.starts_with('✗')).collect();
    assert_eq!(failed.len(), 1, "{lines:#?}");
}

#[test]
fn an_unreachable_endpoint_is_reported_with_what_to_check() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let dir = tempfile::tempdir().unwrap();
    let endpoint = format!("http://127.0.0.1:{port}/RPC2");
    let config = opennebula_config(dir.path(), &endpoint, "oneadmin:onetest", 0);
    let (status, lines) = check(&config);
    assert_eq!(status, Some(1), "{lines:#?}");
    assert!(
        has(&lines, &format!("✗ endpoint: {endpoint}: ")),
        "{lines:#?}"
    );
    assert!(
        lines[0].contains("is backend.opennebula.endpoint reachable from this host?"),
        "{lines:#?}"
    );
    assert_eq!(lines.len(), 2, "{lines:#?}");
}

#[test]
fn the_simulated_cloud_prints_its_inventory() {
    let dir = tempfile::tempdir().unwrap();
    let config = dev_config(dir.path());
    let (status, lines) = check(&config);
    assert_eq!(status, Some(0), "{lines:#?}");
    assert_eq!(
        lines[0],
        "✓ simulated cloud: 2 hosts, 1 sliver types (nothing to connect to)"
    );
    assert!(
        has(&lines, "✓ host host1: 8 CPUs, 16384 MiB, at most 4 VMs"),
        "{lines:#?}"
    );
    assert!(
        has(
            &lines,
            "✓ sliver type default-vm: 1 CPUs, 1024 MiB, images: urn:publicid:IDN+"
        ),
        "{lines:#?}"
    );
    let bad = geni_am(&["backend", "check", "--config", "/nonexistent/geni-am.toml"]);
    assert_eq!(bad.status.code(), Some(2));
}
