//! The Debian package: built with cargo-deb from the debug binary the suites
//! already use (`--no-build --profile dev`; `scripts/package.sh` makes the
//! release package the same way from a release build), inspected with
//! `dpkg-deb --info` and `--contents` (the binary, the configuration as a
//! conffile, the unit, the maintainer scripts, the shared-library
//! dependencies), extracted with `dpkg-deb -x`, and its binary run: its
//! version, then `serve` on the packaged configuration with its paths moved
//! into a temporary directory, until GetVersion answers. The unit passes
//! `systemd-analyze verify` pointed at the extracted binary, the packaged
//! configuration keeps every key (and every value but the packaged paths)
//! of `deploy/geni-am.example.toml`, and the Prometheus alert rules pass
//! `promtool check rules`.

use geni_am::client::Client;
use geni_am_tests::aggregate::{dev_init, set};
use geni_am_tests::calls::call;
use geni_am_tests::ports::free_port;
use geni_am_tests::{geni_am_bin, missing_prerequisite, workspace_root};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The keys whose values differ between the example and the packaged
/// configuration: the paths, absolute in the package.
const PACKAGED_PATHS: [&str; 7] = [
    "server.cert",
    "server.key",
    "server.trust_roots",
    "store.url",
    "backend.sim.state_file",
    "backend.opennebula.one_auth",
    "backend.opennebula.ca_file",
];

#[test]
fn the_packaged_configuration_has_every_key_of_the_example_and_only_its_paths_differ() {
    let example = flatten(&read_toml(
        &workspace_root().join("deploy/geni-am.example.toml"),
    ));
    let packaged = flatten(&read_toml(
        &workspace_root().join("deploy/debian/geni-am.toml"),
    ));
    let only_in = |a: &BTreeMap<String, toml::Value>, b: &BTreeMap<String, toml::Value>| {
        a.keys()
            .filter(|key| !b.contains_key(*key))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        only_in(&example, &packaged),
        Vec::<String>::new(),
        "keys of deploy/geni-am.example.toml missing from deploy/debian/geni-am.toml"
    );
    assert_eq!(
        only_in(&packaged, &example),
        Vec::<String>::new(),
        "keys of deploy/debian/geni-am.toml missing from deploy/geni-am.example.toml"
    );
    for (key, value) in &example {
        let packaged_value = &packaged[key];
        if PACKAGED_PATHS.contains(&key.as_str()) {
            let path = packaged_value
                .as_str()
                .expect("a packaged path is a string");
            assert!(
                path.starts_with("/etc/geni-am/") || path.starts_with("/var/lib/geni-am/"),
                "{key} = {path:?} is outside /etc/geni-am and /var/lib/geni-am"
            );
        } else {
            assert_eq!(packaged_value, value, "{key} differs from the example");
        }
    }
}

#[test]
fn the_package_holds_the_binary_the_conffile_the_unit_and_the_maintainer_scripts() {
    let Some(deb) = package() else { return };
    let info = run(Command::new("dpkg-deb").arg("--info").arg(deb));
    for field in ["Package: geni-am", "Section: net", "Architecture: "] {
        assert!(info.contains(field), "no {field:?} in:\n{info}");
    }
    let depends = info
        .lines()
        .find_map(|line| line.trim().strip_prefix("Depends: "))
        .unwrap_or_else(|| panic!("no Depends in:\n{info}"));
    for library in [
        "libc6",
        "libssl3",
        "libxml2",
        "libsqlite3-0",
        "libpq5",
        "adduser",
    ] {
        assert!(
            depends.contains(library),
            "{library} not in Depends: {depends}"
        );
    }
    let control = tempfile::tempdir().expect("temporary directory");
    run(Command::new("dpkg-deb")
        .arg("-e")
        .arg(deb)
        .arg(control.path()));
    let conffiles = std::fs::read_to_string(control.path().join("conffiles")).expect("conffiles");
    assert_eq!(conffiles.trim(), "/etc/geni-am/geni-am.toml");
    let postinst = std::fs::read_to_string(control.path().join("postinst")).expect("postinst");
    for step in [
        "adduser --system",
        "install -d -m 0750 -o geni-am -g geni-am /var/lib/geni-am",
        "daemon-reload",
    ] {
        assert!(
            postinst.contains(step),
            "postinst lacks {step:?}:\n{postinst}"
        );
    }
    assert!(
        !postinst.contains("deb-systemd-invoke start"),
        "the unit must not start before the operator configured it:\n{postinst}"
    );
    let postrm = std::fs::read_to_string(control.path().join("postrm")).expect("postrm");
    assert!(
        postrm.contains("\"purge\""),
        "postrm without purge:\n{postrm}"
    );
    let contents = run(Command::new("dpkg-deb").arg("--contents").arg(deb));
    for (path, mode) in [
        ("./usr/bin/geni-am", "-rwxr-xr-x"),
        ("./etc/geni-am/geni-am.toml", "-rw-r-----"),
        ("./usr/lib/systemd/system/geni-am.service", "-rw-r--r--"),
        ("./usr/share/doc/geni-am/INSTALL.md", "-rw-r--r--"),
        (
            "./usr/share/doc/geni-am/examples/prometheus/geni-am.rules.yml",
            "-rw-r--r--",
        ),
    ] {
        let line = contents
            .lines()
            .find(|line| line.ends_with(&format!(" {path}")))
            .unwrap_or_else(|| panic!("{path} not in the package:\n{contents}"));
        assert!(line.starts_with(mode), "{path} is not {mode}: {line}");
    }
}

#[test]
fn the_extracted_binary_serves_getversion_on_the_packaged_configuration() {
    let Some(root) = extracted() else { return };
    let bin = root.join("usr/bin/geni-am");
    let version = run(Command::new(&bin).arg("--version"));
    assert!(
        version.starts_with("geni-am ") && version.contains(env!("CARGO_PKG_VERSION")),
        "{version}"
    );
    let dir = tempfile::tempdir().expect("temporary directory");
    let port = free_port();
    dev_init(&bin, dir.path(), port);
    let mut config = read_toml(&root.join("etc/geni-am/geni-am.toml"));
    let here = |name: &str| toml::Value::from(dir.path().join(name).display().to_string());
    set(
        &mut config,
        &["server", "listen"],
        format!("127.0.0.1:{port}").into(),
    );
    let public_url = format!("https://127.0.0.1:{port}");
    set(
        &mut config,
        &["server", "public_url"],
        public_url.clone().into(),
    );
    set(&mut config, &["server", "cert"], here("am-cert.pem"));
    set(&mut config, &["server", "key"], here("am-key.pem"));
    set(&mut config, &["server", "trust_roots"], here("trusted"));
    set(&mut config, &["store", "url"], here("geni-am.sqlite"));
    set(
        &mut config,
        &["backend", "sim", "state_file"],
        here("sim.json"),
    );
    if config.contains_key("operator") {
        // The operator's endpoint, when configured, on a port of its own.
        let operator = format!("127.0.0.1:{}", free_port());
        set(&mut config, &["operator", "listen"], operator.into());
    }
    let config_path = dir.path().join("packaged.toml");
    std::fs::write(&config_path, config.to_string()).expect("configuration written");

    let log = dir.path().join("serve.log");
    let mut child = Command::new(&bin)
        .arg("serve")
        .arg("--config")
        .arg(&config_path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log file"))
        .spawn()
        .expect("the extracted binary starts");
    let mut client = Client::new(
        &format!("{public_url}/am/3"),
        &dir.path().join("alice-cert.pem"),
        &dir.path().join("alice-key.pem"),
        Some(&dir.path().join("ca-cert.pem")),
    )
    .expect("client set-up");
    let started = Instant::now();
    let answered = loop {
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "serve exited ({status}):\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        if client.call("GetVersion", &[]).is_ok() {
            break true;
        }
        if started.elapsed() > Duration::from_secs(60) {
            break false;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let envelope = answered.then(|| call(&mut client, "GetVersion", vec![]));
    let _ = child.kill();
    let _ = child.wait();
    let envelope = envelope.unwrap_or_else(|| {
        panic!(
            "no GetVersion answer within 60 s:\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        )
    });
    let am_urn = geni_xmlrpc::as_str(envelope.ok().member("urn")).map(str::to_owned);
    assert_eq!(
        am_urn.as_deref(),
        Some("urn:publicid:IDN+am.example.org+authority+am"),
        "the packaged [aggregate] answers"
    );
}

#[test]
fn the_packaged_unit_passes_systemd_analyze_verify() {
    let Some(root) = extracted() else { return };
    if !has_command("systemd-analyze") {
        missing_prerequisite("systemd-analyze is not installed (Debian's systemd)");
        return;
    }
    let unit = std::fs::read_to_string(root.join("usr/lib/systemd/system/geni-am.service"))
        .expect("the unit is in the package");
    for line in [
        "Type=notify",
        "ExecStart=/usr/bin/geni-am serve --config /etc/geni-am/geni-am.toml",
        "ExecReload=/bin/kill -HUP $MAINPID",
        "Restart=on-failure",
        "User=geni-am",
        "ProtectSystem=strict",
        "ReadWritePaths=/var/lib/geni-am",
        "NoNewPrivileges=yes",
        "PrivateTmp=yes",
        "CapabilityBoundingSet=\n",
    ] {
        assert!(unit.contains(line), "the unit lacks {line:?}");
    }
    assert!(unit.contains("\nWatchdogSec="), "the unit has no watchdog");
    // verify wants ExecStart's binary to exist: point a copy of the unit
    // at the extracted one.
    let extracted_bin = root.join("usr/bin/geni-am");
    let copy = tempfile::tempdir().expect("temporary directory");
    let unit_path = copy.path().join("geni-am.service");
    let pointed = unit.replace("/usr/bin/geni-am", &extracted_bin.display().to_string());
    std::fs::write(&unit_path, pointed).expect("unit copy written");
    let output = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&unit_path)
        .output()
        .expect("systemd-analyze runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "systemd-analyze verify failed:\n{stderr}"
    );
    let about_the_unit: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("geni-am.service"))
        .collect();
    assert!(
        about_the_unit.is_empty(),
        "systemd-analyze verify warns:\n{}",
        about_the_unit.join("\n")
    );
}

#[test]
fn the_alert_rules_pass_promtool() {
    let rules = workspace_root().join("deploy/prometheus/geni-am.rules.yml");
    if !has_command("promtool") {
        missing_prerequisite("promtool is not installed (Debian's prometheus)");
        return;
    }
    let checked = run(Command::new("promtool")
        .args(["check", "rules"])
        .arg(&rules));
    assert!(checked.contains("SUCCESS"), "{checked}");
    let text = std::fs::read_to_string(&rules).expect("rules readable");
    for alert in [
        "GeniAmBackendDown",
        "GeniAmJobsStuck",
        "GeniAmRefusalsSpike",
        "GeniAmCapacityExhausted",
    ] {
        assert!(
            text.contains(&format!("alert: {alert}")),
            "no alert {alert}"
        );
    }
}

/// The package built from the workspace's debug binary (once per test
/// process, into `target/package-test/`), or `None` when cargo-deb is
/// missing and the suite may skip.
fn package() -> Option<&'static Path> {
    static DEB: OnceLock<Option<PathBuf>> = OnceLock::new();
    DEB.get_or_init(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let has_cargo_deb = Command::new(&cargo)
            .args(["deb", "--version"])
            .output()
            .is_ok_and(|output| output.status.success());
        if !has_cargo_deb {
            missing_prerequisite("cargo-deb is not installed (scripts/install-cargo-deb.sh)");
            return None;
        }
        let bin = geni_am_bin();
        let out = workspace_root().join("target/package-test");
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).expect("package directory");
        let built = Command::new(&cargo)
            .current_dir(workspace_root())
            .args([
                "deb",
                "--quiet",
                "-p",
                "geni-am",
                "--no-build",
                "--profile",
                "dev",
            ])
            .args(["--fast", "--output"])
            .arg(&out)
            .output()
            .expect("cargo deb runs");
        assert!(
            built.status.success(),
            "cargo deb failed (binary {}):\n{}",
            bin.display(),
            String::from_utf8_lossy(&built.stderr)
        );
        let deb = std::fs::read_dir(&out)
            .expect("package directory readable")
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .find(|path| path.extension().is_some_and(|ext| ext == "deb"));
        Some(deb.expect("cargo deb wrote a .deb"))
    })
    .as_deref()
}

/// The package extracted with `dpkg-deb -x` (once per test process).
fn extracted() -> Option<&'static Path> {
    static ROOT: OnceLock<Option<PathBuf>> = OnceLock::new();
    ROOT.get_or_init(|| {
        let deb = package()?;
        let root = deb.with_file_name("root");
        run(Command::new("dpkg-deb").arg("-x").arg(deb).arg(&root));
        Some(root)
    })
    .as_deref()
}

/// Runs `command`, asserts it succeeded, and returns its standard output.
fn run(command: &mut Command) -> String {
    let output: Output = command.output().expect("the command runs");
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Whether `name` is a command on the PATH.
fn has_command(name: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .is_ok_and(|output| output.status.success())
}

fn read_toml(path: &Path) -> toml::Table {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every leaf of `table` by dotted path (the first element of an array of
/// tables stands for all of them, as in the example).
fn flatten(table: &toml::Table) -> BTreeMap<String, toml::Value> {
    fn walk(prefix: &str, value: &toml::Value, out: &mut BTreeMap<String, toml::Value>) {
        let tables = match value {
            toml::Value::Table(table) => vec![table],
            toml::Value::Array(items)
                if items.iter().all(toml::Value::is_table) && !items.is_empty() =>
            {
                items.iter().filter_map(toml::Value::as_table).collect()
            }
            leaf => {
                out.insert(prefix.to_owned(), leaf.clone());
                return;
            }
        };
        for (index, table) in tables.into_iter().enumerate() {
            for (key, value) in table {
                let path = match (prefix.is_empty(), index) {
                    (true, _) => key.clone(),
                    (false, 0) => format!("{prefix}.{key}"),
                    (false, n) => format!("{prefix}[{n}].{key}"),
                };
                walk(&path, value, out);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk("", &toml::Value::Table(table.clone()), &mut out);
    out
}
