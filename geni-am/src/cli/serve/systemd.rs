//! What `serve` tells systemd (`Type=notify` in `deploy/geni-am.service`),
//! through `sd-notify` on the socket named by `NOTIFY_SOCKET`; nothing
//! happens when the variable is unset (started by hand or by a test).
//!
//! * `READY=1` once the port is bound and the store open;
//! * `RELOADING=1`, then `READY=1`, around a reload of the trust roots;
//! * `STOPPING=1` when the server has stopped answering;
//! * `WATCHDOG=1` every half of `WATCHDOG_USEC` (set by systemd from
//!   `WatchdogSec=`), from a thread that first checks the server is alive:
//!   it opens a TLS handshake to the listening port over loopback and
//!   pings only when the server's certificate came back in time, so a
//!   server whose workers hang stops the pings and systemd restarts it.

use openssl::ssl::{HandshakeError, SslConnector, SslMethod, SslVerifyMode};
use sd_notify::NotifyState;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// Tells systemd the aggregate is ready to answer.
pub fn ready() {
    send(&[NotifyState::Ready]);
}

/// Tells systemd the aggregate is reloading its configuration.
pub fn reloading() {
    match NotifyState::monotonic_usec_now() {
        Ok(now) => send(&[NotifyState::Reloading, now]),
        Err(_) => send(&[NotifyState::Reloading]),
    }
}

/// Tells systemd the aggregate is stopping.
pub fn stopping() {
    send(&[NotifyState::Stopping]);
}

/// When systemd asked for a watchdog (`WATCHDOG_USEC`, for this process),
/// starts the thread that pings it every half period while the server at
/// `listen` completes the server's side of a TLS handshake.
pub fn start_watchdog(listen: SocketAddr) -> std::io::Result<()> {
    let Some(period) = sd_notify::watchdog_enabled() else {
        return Ok(());
    };
    let every = period / 2;
    let probe = Probe::new(listen, every / 2).map_err(std::io::Error::other)?;
    tracing::info!(
        every_ms = every.as_millis() as u64,
        "systemd watchdog: pinging while the server answers"
    );
    std::thread::Builder::new()
        .name("watchdog".into())
        .spawn(move || {
            loop {
                let started = Instant::now();
                match probe.check() {
                    Ok(()) => send(&[NotifyState::Watchdog]),
                    Err(why) => tracing::warn!("systemd watchdog not fed: {why}"),
                }
                std::thread::sleep(every.saturating_sub(started.elapsed()));
            }
        })?;
    Ok(())
}

/// Sends `states`, logging a failure (the aggregate runs on regardless).
fn send(states: &[NotifyState]) {
    if let Err(error) = sd_notify::notify(states) {
        tracing::warn!("cannot notify systemd: {error}");
    }
}

/// A liveness check of the server: the server's half of a TLS handshake
/// over loopback, without a client certificate (the server then refuses
/// the connection, having shown it is alive).
struct Probe {
    addr: SocketAddr,
    timeout: Duration,
    connector: SslConnector,
}

impl Probe {
    /// A probe of the server listening on `listen` (an unspecified address
    /// is reached over loopback), giving up after `timeout`.
    fn new(listen: SocketAddr, timeout: Duration) -> Result<Probe, openssl::error::ErrorStack> {
        let ip = match listen.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        let mut connector = SslConnector::builder(SslMethod::tls_client())?;
        // Only the server's answering is checked, not who it is.
        connector.set_verify(SslVerifyMode::NONE);
        Ok(Probe {
            addr: SocketAddr::new(ip, listen.port()),
            timeout: timeout.max(Duration::from_millis(100)),
            connector: connector.build(),
        })
    }

    /// Whether the server sent its certificate within the timeout.
    fn check(&self) -> Result<(), String> {
        let tcp = TcpStream::connect_timeout(&self.addr, self.timeout)
            .map_err(|e| format!("connecting to {}: {e}", self.addr))?;
        let deadline = Some(self.timeout);
        tcp.set_read_timeout(deadline)
            .and_then(|()| tcp.set_write_timeout(deadline))
            .map_err(|e| e.to_string())?;
        let mut config = self.connector.configure().map_err(|e| e.to_string())?;
        config.set_verify_hostname(false);
        let answered = match config.connect("localhost", tcp) {
            Ok(stream) => stream.ssl().peer_certificate().is_some(),
            Err(HandshakeError::Failure(mid) | HandshakeError::WouldBlock(mid)) => {
                mid.ssl().peer_certificate().is_some()
            }
            Err(HandshakeError::SetupFailure(e)) => return Err(e.to_string()),
        };
        if answered {
            Ok(())
        } else {
            Err(format!(
                "{} did not answer a TLS handshake within {:?}",
                self.addr, self.timeout
            ))
        }
    }
}
