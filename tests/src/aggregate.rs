//! The real `geni-am` binary as a test fixture: `geni-am dev init` writes a
//! development PKI and configuration into a temporary directory, the
//! configuration is pointed at the test's store (and given fast simulated
//! VMs that are saved next to it, so they outlive a restart), `geni-am serve` is started on a free loopback port and awaited
//! until it listens. The process can be killed and started again on the
//! same store, and a second process can share a PostgreSQL store.

use crate::database::Store;
use crate::ports::free_port;
use geni_am::client::Client;
use std::net::{Ipv4Addr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The development slice `geni-am dev init` writes a credential for.
pub const DEMO_SLICE: &str = "urn:publicid:IDN+geni-am.test+slice+demo";
/// The development experimenter.
pub const ALICE: &str = "urn:publicid:IDN+geni-am.test+user+alice";
/// How long a started aggregate gets to listen.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running aggregate and its files.
pub struct Aggregate {
    dir: tempfile::TempDir,
    port: u16,
    operator_port: u16,
    config: PathBuf,
    child: Option<Child>,
    store: Store,
}

impl Aggregate {
    /// Starts an aggregate on `store` with the development configuration,
    /// VMs that boot in 200 ms.
    pub fn start(store: Store) -> Aggregate {
        Aggregate::start_with(store, |_| {})
    }

    /// Starts an aggregate on `store` after `edit` changed its
    /// configuration (a TOML table as `dev init` wrote it).
    pub fn start_with(store: Store, edit: impl FnOnce(&mut toml::Table)) -> Aggregate {
        let dir = tempfile::tempdir().expect("temporary directory");
        let port = free_port();
        dev_init(&crate::geni_am_bin(), dir.path(), port);
        let config = dir.path().join("geni-am.toml");
        let mut table: toml::Table = std::fs::read_to_string(&config)
            .expect("dev init wrote a configuration")
            .parse()
            .expect("the configuration is TOML");
        set(&mut table, &["store", "url"], store.url().into());
        let operator_port = free_port();
        let operator = format!("127.0.0.1:{operator_port}");
        set(&mut table, &["operator", "listen"], operator.into());
        let state_file = dir.path().join("geni-am-sim.json");
        let state_file = state_file.display().to_string();
        set(
            &mut table,
            &["backend", "sim", "state_file"],
            state_file.into(),
        );
        for (key, ms) in [
            ("create_delay_ms", 0),
            ("boot_delay_ms", 200),
            ("stop_delay_ms", 0),
        ] {
            set(&mut table, &["backend", "sim", key], ms.into());
        }
        edit(&mut table);
        std::fs::write(&config, table.to_string()).expect("configuration written");
        let mut aggregate = Aggregate {
            dir,
            port,
            operator_port,
            config,
            child: None,
            store,
        };
        aggregate.spawn();
        aggregate
    }

    /// The aggregate's directory (PKI, configuration, SQLite file, log).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The store this aggregate runs on.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The configuration file.
    pub fn config(&self) -> &Path {
        &self.config
    }

    /// The loopback port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The process id of the running `geni-am serve`.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("the aggregate runs").id()
    }

    /// The loopback port of the operator's endpoint.
    pub fn operator_port(&self) -> u16 {
        self.operator_port
    }

    /// The URL of `path` (starting with `/`) on the operator's endpoint
    /// (plain HTTP on loopback).
    pub fn operator_url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.operator_port)
    }

    /// The endpoint URL of AM API `version` (2 or 3).
    pub fn url(&self, version: u8) -> String {
        format!("https://127.0.0.1:{}/am/{version}", self.port)
    }

    /// A client of AM API `version` presenting alice's certificate and
    /// verifying the server against the development CA.
    pub fn client(&self, version: u8) -> Client {
        self.client_as(
            version,
            &self.file("alice-cert.pem"),
            &self.file("alice-key.pem"),
        )
    }

    /// A client of AM API `version` presenting the certificate `cert` (PEM
    /// chain) with `key`.
    pub fn client_as(&self, version: u8, cert: &Path, key: &Path) -> Client {
        Client::new(
            &self.url(version),
            cert,
            key,
            Some(&self.file("ca-cert.pem")),
        )
        .expect("client set-up")
    }

    /// A file of the aggregate's directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The text of a file of the aggregate's directory.
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.file(name)).expect("aggregate file readable")
    }

    /// Runs `geni-am admin` on the aggregate's configuration as operator
    /// `operator-test` with `args` (`--json` first for JSON); what it
    /// printed, once it succeeded.
    pub fn admin(&self, args: &[&str]) -> String {
        let output = Command::new(crate::geni_am_bin())
            .arg("admin")
            .arg("--config")
            .arg(self.config())
            .args(["--operator", "operator-test"])
            .args(args)
            .output()
            .expect("geni-am admin runs");
        assert!(
            output.status.success(),
            "geni-am admin {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// What the process wrote to standard error so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.file("serve.log")).unwrap_or_default()
    }

    /// Kills the process at once (SIGKILL: no clean shutdown).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the process again on the same configuration and store.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// Starts a second process on the same directory and store, listening
    /// on another port (its configuration is `geni-am-<port>.toml`).
    pub fn sibling(&self) -> Sibling {
        let port = free_port();
        let mut table: toml::Table = std::fs::read_to_string(&self.config)
            .expect("configuration readable")
            .parse()
            .expect("configuration is TOML");
        let listen = format!("127.0.0.1:{port}");
        set(&mut table, &["server", "listen"], listen.into());
        let public = format!("https://127.0.0.1:{port}");
        set(&mut table, &["server", "public_url"], public.into());
        let operator = format!("127.0.0.1:{}", free_port());
        set(&mut table, &["operator", "listen"], operator.into());
        let config = self.dir.path().join(format!("geni-am-{port}.toml"));
        std::fs::write(&config, table.to_string()).expect("configuration written");
        let log = self.dir.path().join(format!("serve-{port}.log"));
        let child = spawn_serve(&config, &log, port);
        Sibling { child, port }
    }

    fn spawn(&mut self) {
        let log = self.file("serve.log");
        self.child = Some(spawn_serve(&self.config, &log, self.port));
    }
}

impl Drop for Aggregate {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A second aggregate process sharing another's directory and store.
pub struct Sibling {
    child: Child,
    port: u16,
}

impl Sibling {
    /// The endpoint URL of AM API `version`.
    pub fn url(&self, version: u8) -> String {
        format!("https://127.0.0.1:{}/am/{version}", self.port)
    }
}

impl Drop for Sibling {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `geni-am serve --config config` with standard error appended to
/// `log` and waits until it accepts connections on `port`.
fn spawn_serve(config: &Path, log: &Path, port: u16) -> Child {
    let log_file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("log file");
    let mut child = Command::new(crate::geni_am_bin())
        .arg("serve")
        .arg("--config")
        .arg(config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log_file)
        .spawn()
        .expect("geni-am serve starts");
    let started = Instant::now();
    loop {
        if TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_ok() {
            return child;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "geni-am serve exited ({status}) before listening:\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        if started.elapsed() > START_TIMEOUT {
            let _ = child.kill();
            panic!("geni-am serve did not listen on port {port} within {START_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs `bin dev init` into `dir` for an aggregate on 127.0.0.1:`port`:
/// a development PKI (`ca-cert.pem`, `am-cert.pem`, `alice-cert.pem`, the
/// roots in `trusted/`) and `geni-am.toml`.
pub fn dev_init(bin: &Path, dir: &Path, port: u16) {
    let init = Command::new(bin)
        .args(["dev", "init", "--host", "127.0.0.1", "--port"])
        .arg(port.to_string())
        .arg("--dir")
        .arg(dir)
        .output()
        .expect("geni-am dev init runs");
    assert!(
        init.status.success(),
        "geni-am dev init failed: {}",
        String::from_utf8_lossy(&init.stderr)
    );
}

/// Sets `path` in `table` to `value`, creating tables on the way.
pub fn set(table: &mut toml::Table, path: &[&str], value: toml::Value) {
    let (last, parents) = path.split_last().expect("a non-empty key path");
    let mut current = table;
    for key in parents {
        current = current
            .entry((*key).to_owned())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .expect("a table on the key path");
    }
    current.insert((*last).to_owned(), value);
}
