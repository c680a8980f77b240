//! The HTTP client of oned's XML-RPC endpoint (the OpenNebula XML-RPC API
//! reference, "Authentication" and "Actions"): POSTs over plain HTTP
//! (`http://host:2633/RPC2`) or TLS through OpenSSL (`https://proxy/RPC2`),
//! carried by `ureq`. What is ours is oned's policy: at most
//! `max_connections` calls at once (oned serves 15 connections in all) and
//! as many kept-alive connections, dropped before oned's own 15 s idle
//! limit; a deadline per attempt covering connect, write and read; a size
//! limit on replies; and retries with exponential backoff and jitter for
//! retryable errors of calls that are safe to repeat. Calls that create
//! objects are tried once: after a lost answer the driver looks for its
//! tag first.

use super::session::Session;
use super::{Answer, OneRpc, Param, RpcError, wire};
use resolver::RememberingResolver;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use ureq::tls::{Certificate, RootCerts, TlsConfig, TlsProvider};
use ureq::unversioned::transport::{ConnectionDetails, Connector, DefaultConnector, Transport};

/// Largest reply read: pool dumps of a busy cloud are tens of MB.
pub const DEFAULT_RESPONSE_LIMIT: usize = 256 << 20;
/// Concurrent calls by default, well under oned's 15 connection slots.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4;
/// Deadline of one attempt by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Extra attempts for retryable errors by default.
pub const DEFAULT_RETRIES: u32 = 3;
/// The wait before the first retry; it doubles on every further retry.
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
/// The longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// A kept-alive connection idle this long is dropped rather than reused:
/// oned closes idle connections after 15 s (`KEEPALIVE_TIMEOUT`).
const IDLE_LIMIT: Duration = Duration::from_secs(10);
/// Longest reply head (status line and headers) read.
const MAX_HEAD: usize = 64 << 10;
/// Writes that change state but may be repeated with the same effect
/// (besides the reads, which all may).
const REPEATABLE_WRITES: [&str; 4] = [
    "one.vm.action",
    "one.vm.update",
    "one.vm.updateconf",
    "one.vn.delete",
];

/// How to reach one oned.
#[derive(Debug, Clone)]
pub struct ClientSettings {
    /// `http://host:2633/RPC2` or `https://host/RPC2` (the path defaults to `/RPC2`).
    pub endpoint: String,
    /// The session sent with every call.
    pub session: Session,
    /// Deadline of one attempt: connect, write and read together.
    pub timeout: Duration,
    /// Extra attempts for retryable errors of repeatable calls.
    pub retries: u32,
    /// Concurrent calls (and kept-alive connections) at most.
    pub max_connections: usize,
    /// For `https`: the CA that signed the proxy's certificate; the
    /// system's CAs when absent.
    pub ca_file: Option<PathBuf>,
}

impl ClientSettings {
    /// Settings for `endpoint` and `session` with the default timeout,
    /// retries and connection count, and the system's CAs.
    pub fn new(endpoint: &str, session: Session) -> ClientSettings {
        ClientSettings {
            endpoint: endpoint.to_owned(),
            session,
            timeout: DEFAULT_TIMEOUT,
            retries: DEFAULT_RETRIES,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            ca_file: None,
        }
    }
}

/// Why a client cannot be built from its settings.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The endpoint is not `http(s)://HOST[:PORT][/PATH]`.
    #[error(
        "OpenNebula endpoint `{0}` is not an http://HOST[:PORT]/PATH or https://HOST[:PORT]/PATH URL without credentials"
    )]
    BadEndpoint(String),
    /// `max_connections` is 0 or `timeout` is zero.
    #[error("OpenNebula client: {0}")]
    BadSetting(&'static str),
    /// The TLS setup failed (the CA file cannot be read, say).
    #[error("OpenNebula client TLS setup: {0}")]
    Tls(String),
}

/// Whether `method` may be sent again after an error without risk of
/// doing its work twice: every read, and the writes whose repetition has
/// the same effect. Creating calls are not repeatable.
pub fn is_repeatable(method: &str) -> bool {
    method.ends_with(".info")
        || method.ends_with(".infoextended")
        || method.ends_with(".infoset")
        || method.contains("pool.info")
        || method.starts_with("one.system.")
        || REPEATABLE_WRITES.contains(&method)
}

/// The client of one oned.
pub struct OneClient {
    session: Session,
    /// The URL posted to, with the path defaulted to `/RPC2`.
    url: String,
    /// The endpoint as configured, for messages.
    endpoint: String,
    agent: ureq::Agent,
    timeout: Duration,
    retries: u32,
    max_connections: usize,
    response_limit: usize,
    /// Calls under way.
    busy: Mutex<usize>,
    slot_freed: Condvar,
    calls: AtomicU64,
    connections: Arc<AtomicU64>,
}

impl OneClient {
    /// A client for `settings`; connects lazily, on the first call.
    pub fn new(settings: ClientSettings) -> Result<OneClient, ClientError> {
        let (url, tls) = endpoint_url(&settings.endpoint)
            .ok_or_else(|| ClientError::BadEndpoint(settings.endpoint.clone()))?;
        if settings.max_connections == 0 {
            return Err(ClientError::BadSetting(
                "max_connections must be at least 1",
            ));
        }
        if settings.timeout.is_zero() {
            return Err(ClientError::BadSetting("the timeout must not be zero"));
        }
        let roots = match (&settings.ca_file, tls) {
            (Some(ca), true) => RootCerts::new_with_certs(&read_ca_file(ca)?),
            _ => RootCerts::PlatformVerifier,
        };
        let tls_config = TlsConfig::builder()
            .provider(TlsProvider::NativeTls)
            .root_certs(roots)
            .build();
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .max_redirects(0)
            .user_agent("geni-am")
            .timeout_global(Some(settings.timeout))
            .max_idle_connections(settings.max_connections)
            .max_idle_connections_per_host(settings.max_connections)
            .max_idle_age(IDLE_LIMIT)
            .max_response_header_size(MAX_HEAD)
            .tls_config(tls_config)
            .build();
        let connections = Arc::new(AtomicU64::new(0));
        let connector = DefaultConnector::new().chain(Counted(connections.clone()));
        Ok(OneClient {
            session: settings.session,
            url,
            endpoint: settings.endpoint,
            agent: ureq::Agent::with_parts(config, connector, RememberingResolver::default()),
            timeout: settings.timeout,
            retries: settings.retries,
            max_connections: settings.max_connections,
            response_limit: DEFAULT_RESPONSE_LIMIT,
            busy: Mutex::new(0),
            slot_freed: Condvar::new(),
            calls: AtomicU64::new(0),
            connections,
        })
    }

    /// The same client with replies limited to `limit` bytes.
    pub fn with_response_limit(mut self, limit: usize) -> OneClient {
        self.response_limit = limit;
        self
    }

    /// Requests sent to oned so far, retries included.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// Connections opened so far (few when keep-alive holds).
    pub fn connections(&self) -> u64 {
        self.connections.load(Ordering::Relaxed)
    }

    /// The count of calls under way, even if a thread panicked while
    /// holding it (every change is a single increment or decrement).
    fn lock_busy(&self) -> MutexGuard<'_, usize> {
        self.busy
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits for a free call slot; the slot is given back when the
    /// returned guard is dropped.
    fn take_slot(&self) -> Slot<'_> {
        let mut busy = self.lock_busy();
        while *busy >= self.max_connections {
            busy = self
                .slot_freed
                .wait(busy)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        *busy += 1;
        Slot { client: self }
    }

    /// One attempt: the request on a kept-alive connection (or a new one)
    /// and its reply, read whole so the connection goes back to the pool.
    fn attempt(&self, method: &str, body: &str) -> Result<Answer, RpcError> {
        let transport = |detail: String| RpcError::Transport {
            method: method.to_owned(),
            detail,
        };
        let _slot = self.take_slot();
        let mut reply = self
            .agent
            .post(&self.url)
            .content_type("text/xml")
            .send(body)
            .map_err(|e| transport(self.failure(e)))?;
        let status = reply.status().as_u16();
        let body = reply
            .body_mut()
            .with_config()
            .limit(u64::try_from(self.response_limit).unwrap_or(u64::MAX))
            .read_to_vec()
            .map_err(|e| transport(self.failure(e)))?;
        if status != 200 {
            let text = String::from_utf8_lossy(&body);
            let excerpt: String = text.chars().take(200).collect();
            return Err(transport(format!(
                "{} answered HTTP {status}: {}",
                self.endpoint,
                excerpt.trim()
            )));
        }
        wire::decode_response(method, &body, self.response_limit)
    }

    /// What went wrong on the way to oned or back, for the operator.
    fn failure(&self, error: ureq::Error) -> String {
        match error {
            ureq::Error::Timeout(_) => {
                format!("no answer from {} within {:?}", self.endpoint, self.timeout)
            }
            ureq::Error::Io(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                format!("no answer from {} within {:?}", self.endpoint, self.timeout)
            }
            ureq::Error::BodyExceedsLimit(_) => format!(
                "{}: the reply is more than the limit of {} bytes",
                self.endpoint, self.response_limit
            ),
            ureq::Error::NativeTls(e) => format!("{}: TLS handshake: {e}", self.endpoint),
            ureq::Error::Tls(e) => format!("{}: TLS handshake: {e}", self.endpoint),
            ureq::Error::Protocol(e) => {
                format!("{}: malformed HTTP answer: {e}", self.endpoint)
            }
            other => format!("{}: {other}", self.endpoint),
        }
    }
}

impl OneRpc for OneClient {
    fn call(&self, method: &str, params: &[Param]) -> Result<Answer, RpcError> {
        let body = wire::encode_call(method, &self.session, params)?;
        let attempts = if is_repeatable(method) {
            self.retries.saturating_add(1)
        } else {
            1
        };
        let mut backoff = FIRST_BACKOFF;
        let mut attempt = 1;
        loop {
            let started = Instant::now();
            let outcome = self.attempt(method, &body);
            self.calls.fetch_add(1, Ordering::Relaxed);
            let elapsed_ms = started.elapsed().as_millis();
            match &outcome {
                Ok(_) => tracing::debug!(method, attempt, elapsed_ms, "OpenNebula call succeeded"),
                Err(e) => {
                    tracing::debug!(method, attempt, elapsed_ms, error = %e, "OpenNebula call failed")
                }
            }
            match outcome {
                Err(e) if e.is_retryable() && attempt < attempts => {
                    std::thread::sleep(jittered(backoff));
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    attempt += 1;
                }
                other => return other,
            }
        }
    }
}

/// A call slot taken from the client; given back on drop.
struct Slot<'c> {
    client: &'c OneClient,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        *self.client.lock_busy() -= 1;
        self.client.slot_freed.notify_one();
    }
}

/// The last link of the connector chain: counts the connections opened
/// (a call on a kept-alive connection does not pass here). It speaks
/// ureq's `unversioned` transport API, which may change in a minor ureq
/// release: an upgrade of ureq may have to adapt this one impl.
#[derive(Debug)]
struct Counted(Arc<AtomicU64>);

impl<In: Transport> Connector<In> for Counted {
    type Out = In;

    fn connect(
        &self,
        _details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<In>, ureq::Error> {
        if chained.is_some() {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
        Ok(chained)
    }
}

/// The URL to post to and whether it is TLS, from an endpoint
/// `http(s)://HOST[:PORT][/PATH]` without credentials; the path `/` or none
/// is oned's `/RPC2`.
fn endpoint_url(endpoint: &str) -> Option<(String, bool)> {
    let (tls, rest) = match endpoint.strip_prefix("https://") {
        Some(rest) => (true, rest),
        None => (false, endpoint.strip_prefix("http://")?),
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => {
            port.parse::<u16>().ok()?;
            host
        }
        _ => authority,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() || authority.contains('@') || path.contains(['?', '#', '@']) {
        return None;
    }
    let path = if path == "/" { "/RPC2" } else { path };
    let url = format!("{}://{authority}{path}", if tls { "https" } else { "http" });
    url.parse::<ureq::http::Uri>().ok()?;
    Some((url, tls))
}

/// The certificates of a PEM CA file.
fn read_ca_file(ca: &std::path::Path) -> Result<Vec<Certificate<'static>>, ClientError> {
    let fail = |problem: String| ClientError::Tls(format!("CA file {}: {problem}", ca.display()));
    let pem = std::fs::read(ca).map_err(|e| fail(e.to_string()))?;
    let certs: Vec<Certificate<'static>> = ureq::tls::parse_pem(&pem)
        .filter_map(|item| match item {
            Ok(ureq::tls::PemItem::Certificate(cert)) => Some(Ok(cert)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
        .collect::<Result<_, _>>()
        .map_err(|e| fail(e.to_string()))?;
    if certs.is_empty() {
        return Err(fail("holds no certificate".to_owned()));
    }
    Ok(certs)
}

/// Between half and all of `backoff`, so that clients that failed together
/// do not retry together.
fn jittered(backoff: Duration) -> Duration {
    backoff.mul_f64(rand::random_range(0.5..=1.0))
}

mod resolver;

#[cfg(test)]
mod tests;
