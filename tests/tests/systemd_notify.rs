//! `serve` under systemd (`Type=notify`): with `NOTIFY_SOCKET` naming a
//! Unix datagram socket the test binds, as systemd does, `READY=1` arrives
//! once the port is bound and the store open, so that a GetVersion sent at
//! that moment is answered at once; with `WATCHDOG_USEC` set, `WATCHDOG=1`
//! follows every half period; SIGHUP gives `RELOADING=1` then `READY=1`,
//! and SIGTERM `STOPPING=1` before a clean exit.

use geni_am_tests::aggregate::Aggregate;
use geni_am_tests::database::Store;
use std::os::unix::net::UnixDatagram;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A datagram socket standing for systemd's notification socket.
struct NotifySocket {
    socket: UnixDatagram,
    _dir: tempfile::TempDir,
}

impl NotifySocket {
    fn bind() -> (NotifySocket, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("notify.sock");
        let socket = UnixDatagram::bind(&path).expect("notify socket bound");
        (NotifySocket { socket, _dir: dir }, path)
    }

    /// The next notification (its lines), or `None` after `within`.
    fn next(&self, within: Duration) -> Option<Vec<String>> {
        self.socket
            .set_read_timeout(Some(within))
            .expect("read timeout");
        let mut buffer = [0u8; 4096];
        let n = self.socket.recv(&mut buffer).ok()?;
        let text = String::from_utf8_lossy(&buffer[..n]);
        Some(text.lines().map(str::to_owned).collect())
    }

    /// Notifications until one has `line`; those before it, or a panic
    /// after `within`.
    fn until(&self, line: &str, within: Duration) -> Vec<Vec<String>> {
        let deadline = Instant::now() + within;
        let mut before = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(message) = self.next(left.max(Duration::from_millis(1))) else {
                panic!("no {line} within {within:?}; received {before:?}");
            };
            if message.iter().any(|l| l == line) {
                return before;
            }
            before.push(message);
        }
    }
}

/// `geni-am serve` on the aggregate's configuration with `env` set.
fn serve_with(aggregate: &Aggregate, env: &[(&str, &Path)], watchdog_usec: Option<u64>) -> Child {
    let log = std::fs::File::create(aggregate.file("notify-serve.log")).expect("log file");
    let mut command = Command::new(geni_am_tests::geni_am_bin());
    command
        .arg("serve")
        .arg("--config")
        .arg(aggregate.config())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log);
    for (name, value) in env {
        command.env(name, value);
    }
    if let Some(usec) = watchdog_usec {
        command.env("WATCHDOG_USEC", usec.to_string());
    }
    command.spawn().expect("geni-am serve starts")
}

/// An aggregate's files, its fixture process stopped so the test starts its own.
fn prepared() -> Aggregate {
    let mut aggregate = Aggregate::start(Store::Sqlite);
    aggregate.kill();
    aggregate
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(child.id().to_string())
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{name} failed");
}

#[test]
fn ready_arrives_once_the_port_and_the_store_answer_a_getversion_at_once() {
    let aggregate = prepared();
    let (notify, path) = NotifySocket::bind();
    let mut child = serve_with(&aggregate, &[("NOTIFY_SOCKET", &path)], None);
    let before = notify.until("READY=1", Duration::from_secs(60));
    assert!(
        before.is_empty(),
        "notifications before READY=1: {before:?}"
    );
    // No retry: the first call after READY=1 must be answered.
    let outcome = aggregate.client(3).call("GetVersion", &[]);
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        outcome.is_ok(),
        "GetVersion right after READY=1 failed: {outcome:?}\n{}",
        aggregate.read("notify-serve.log")
    );
}

#[test]
fn the_watchdog_is_fed_every_half_period_and_reload_and_stop_are_announced() {
    let aggregate = prepared();
    let (notify, path) = NotifySocket::bind();
    let mut child = serve_with(&aggregate, &[("NOTIFY_SOCKET", &path)], Some(600_000));
    notify.until("READY=1", Duration::from_secs(60));
    // Every 300 ms: at least four pings in 1.5 s, none missing for long.
    let started = Instant::now();
    let mut pings = 0;
    while started.elapsed() < Duration::from_millis(1500) {
        match notify.next(Duration::from_millis(600)) {
            Some(message) if message == ["WATCHDOG=1"] => pings += 1,
            other => panic!("expected WATCHDOG=1, got {other:?}"),
        }
    }
    assert!(pings >= 4, "{pings} watchdog pings in 1.5 s");

    signal(&child, "HUP");
    let reloading = notify.until("RELOADING=1", Duration::from_secs(10));
    assert!(
        reloading.iter().all(|m| m == &["WATCHDOG=1"]),
        "{reloading:?}"
    );
    notify.until("READY=1", Duration::from_secs(10));

    signal(&child, "TERM");
    notify.until("STOPPING=1", Duration::from_secs(60));
    let status = child.wait().expect("serve exits");
    assert!(
        status.success(),
        "serve exited with {status}:\n{}",
        aggregate.read("notify-serve.log")
    );
}
