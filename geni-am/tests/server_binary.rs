//! The real binary: `geni-am dev init` writes a PKI and configuration (and
//! keeps them when run again), `geni-am serve` answers GetVersion over TLS
//! with the configured absolute endpoint URLs, stops cleanly on SIGTERM, and
//! refuses a bad configuration with a message naming file and key.

use geni_am::client::Client;
use geni_xmlrpc::{Value, as_str, member};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_geni-am");

#[path = "../../tests/src/ports.rs"]
mod ports;
use ports::free_port;

fn dev_init(dir: &Path, port: u16, force: bool) -> Output {
    let mut command = Command::new(BIN);
    command
        .args(["dev", "init", "--dir"])
        .arg(dir)
        .args(["--port", &port.to_string()])
        .args(["--operator-port", &free_port().to_string()]);
    if force {
        command.arg("--force");
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    output
}

/// The aggregate process, killed if the test fails before stopping it.
struct Serving(Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(config: &Path, port: u16) -> Serving {
    let child = Command::new(BIN)
        .args(["serve", "--config"])
        .arg(config)
        .env_remove("GLIBC_TUNABLES")
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "geni-am serve did not listen");
        std::thread::sleep(Duration::from_millis(100));
    }
    Serving(child)
}

/// Calls GetVersion twice with Python's `xmlrpc.client` over TLS (client
/// certificate, server verified against the dev CA, host name checked) and
/// prints `geni_api` and the v3 URL.
fn python_getversion(dir: &Path, url: &str) -> String {
    let script = r#"
import ssl, sys, xmlrpc.client
d, url = sys.argv[1], sys.argv[2]
ctx = ssl.create_default_context(cafile=d + "/ca-cert.pem")
ctx.load_cert_chain(d + "/alice-cert.pem", d + "/alice-key.pem")
proxy = xmlrpc.client.ServerProxy(url, context=ctx)
proxy.GetVersion()
reply = proxy.GetVersion({"geni_extra": True})
sys.stdout.write("%d %s" % (reply["geni_api"], reply["value"]["geni_api_versions"]["3"]))
"#;
    let output = Command::new("python3")
        .args(["-c", script])
        .arg(dir)
        .arg(url)
        .output()
        .expect("python3 runs (it is needed for the interop suites)");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn dev_init_then_serve_answers_getversion_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let first = String::from_utf8(dev_init(dir.path(), port, false).stdout).unwrap();
    assert!(
        first.contains("Wrote:") && first.contains("curl --cacert"),
        "{first}"
    );
    let ca = std::fs::read(dir.path().join("ca-cert.pem")).unwrap();
    let again = String::from_utf8(dev_init(dir.path(), port, false).stdout).unwrap();
    assert!(again.contains("already exist"), "{again}");
    assert_eq!(std::fs::read(dir.path().join("ca-cert.pem")).unwrap(), ca);

    let mut serving = serve(&dir.path().join("geni-am.toml"), port);
    if cfg!(all(target_os = "linux", target_env = "gnu")) {
        // serve ran itself again without glibc's thread caches, same pid.
        let environ = std::fs::read(format!("/proc/{}/environ", serving.0.id())).unwrap();
        assert!(
            environ
                .split(|b| *b == 0)
                .any(|var| var == b"GLIBC_TUNABLES=glibc.malloc.tcache_count=0"),
            "{}",
            String::from_utf8_lossy(&environ)
        );
    }
    let url = format!("https://localhost:{port}/am/3");
    let mut client = Client::new(
        &url,
        &dir.path().join("alice-cert.pem"),
        &dir.path().join("alice-key.pem"),
        Some(&dir.path().join("ca-cert.pem")),
    )
    .unwrap();
    let reply = client.call("GetVersion", &[]).unwrap().unwrap();
    assert_eq!(member(&reply, "geni_api"), Some(&Value::Integer(3)));
    let versions = member(&reply, "value")
        .and_then(|v| member(v, "geni_api_versions"))
        .unwrap();
    assert_eq!(member(versions, "3").and_then(as_str), Some(url.as_str()));
    assert_eq!(
        member(versions, "2").and_then(as_str),
        Some(format!("https://localhost:{port}/am/2").as_str())
    );

    let python = python_getversion(dir.path(), &url);
    assert_eq!(python, format!("3 {url}"));

    let pid = serving.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = serving.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "geni-am did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "{status}");

    let forced = String::from_utf8(dev_init(dir.path(), port, true).stdout).unwrap();
    assert!(forced.contains("Wrote:"), "{forced}");
    assert_ne!(std::fs::read(dir.path().join("ca-cert.pem")).unwrap(), ca);
}

#[test]
fn serve_refuses_a_bad_configuration_naming_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    dev_init(dir.path(), free_port(), false);
    let config = dir.path().join("geni-am.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace("public_url = \"https://", "public_url = \""),
    )
    .unwrap();
    let output = Command::new(BIN)
        .args(["serve", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("geni-am.toml") && stderr.contains("server.public_url"),
        "{stderr}"
    );
}
