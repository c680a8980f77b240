//! The HTTP client of oned's XML-RPC endpoint (OPENNEBULA.md §1.1, §6.3):
//! HTTP/1.1 POSTs over plain TCP (`http://host:2633/RPC2`) or OpenSSL
//! (`https://proxy/RPC2`), a small pool of kept-alive connections bounded
//! by `max_connections` (oned serves 15 in all), connections dropped before
//! oned's own 15 s idle limit or when oned announced it closes them, a
//! deadline per attempt covering connect, write and read, a size limit on
//! replies, and retries with exponential backoff and jitter for retryable
//! errors of calls that are safe to repeat. Calls that create objects are
//! tried once: after a lost answer the driver looks for its tag first.

use super::session::Session;
use super::{Answer, OneRpc, Param, RpcError, wire};
use crate::client::{HttpReply, ReadError, read_reply, socket_addr, split_url};
use openssl::ssl::{SslConnector, SslMethod, SslStream};
use std::io::{BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

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
    /// `host:port`, also the `Host` header.
    addr: String,
    /// The host name the proxy's certificate must carry.
    host: String,
    path: String,
    endpoint: String,
    tls: Option<SslConnector>,
    timeout: Duration,
    retries: u32,
    max_connections: usize,
    response_limit: usize,
    pool: Mutex<Pool>,
    slot_freed: Condvar,
    calls: AtomicU64,
    connections: AtomicU64,
}

/// Connections not in use, and how many calls are under way.
#[derive(Default)]
struct Pool {
    idle: Vec<Connection>,
    busy: usize,
}

/// One connection to oned, with the deadline of the attempt using it.
struct Connection {
    reader: BufReader<Link>,
    last_used: Instant,
}

/// The byte stream under a connection.
enum Link {
    Plain(Deadlined<TcpStream>),
    Tls(SslStream<Deadlined<TcpStream>>),
}

/// A socket whose every read and write ends by a deadline.
#[derive(Debug)]
struct Deadlined<S> {
    socket: S,
    deadline: Instant,
}

impl OneClient {
    /// A client for `settings`; connects lazily, on the first call.
    pub fn new(settings: ClientSettings) -> Result<OneClient, ClientError> {
        let bad_endpoint = || ClientError::BadEndpoint(settings.endpoint.clone());
        if settings.endpoint.contains('@') {
            return Err(bad_endpoint());
        }
        let (scheme_is_tls, (host, port, path)) =
            if let Some(parts) = split_url(&settings.endpoint, "https", 443) {
                (true, parts)
            } else {
                let parts = split_url(&settings.endpoint, "http", 80).ok_or_else(bad_endpoint)?;
                (false, parts)
            };
        if settings.max_connections == 0 {
            return Err(ClientError::BadSetting(
                "max_connections must be at least 1",
            ));
        }
        if settings.timeout.is_zero() {
            return Err(ClientError::BadSetting("the timeout must not be zero"));
        }
        let tls = if scheme_is_tls {
            let tls_error = |e: openssl::error::ErrorStack| ClientError::Tls(e.to_string());
            let mut builder = SslConnector::builder(SslMethod::tls_client()).map_err(tls_error)?;
            if let Some(ca) = &settings.ca_file {
                builder
                    .set_ca_file(ca)
                    .map_err(|e| ClientError::Tls(format!("CA file {}: {e}", ca.display())))?;
            }
            Some(builder.build())
        } else {
            None
        };
        let path = if path == "/" {
            "/RPC2".to_owned()
        } else {
            path
        };
        let addr = socket_addr(&host, port);
        Ok(OneClient {
            session: settings.session,
            addr,
            host,
            path,
            endpoint: settings.endpoint,
            tls,
            timeout: settings.timeout,
            retries: settings.retries,
            max_connections: settings.max_connections,
            response_limit: DEFAULT_RESPONSE_LIMIT,
            pool: Mutex::new(Pool::default()),
            slot_freed: Condvar::new(),
            calls: AtomicU64::new(0),
            connections: AtomicU64::new(0),
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

    /// The pool, even if a thread panicked while holding it (its state
    /// stays consistent: every change is a single push, pop or count).
    fn lock_pool(&self) -> MutexGuard<'_, Pool> {
        self.pool
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits for a free call slot; the slot is given back when the
    /// returned guard is dropped.
    fn take_slot(&self) -> Slot<'_> {
        let mut pool = self.lock_pool();
        while pool.busy >= self.max_connections {
            pool = self
                .slot_freed
                .wait(pool)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        pool.busy += 1;
        Slot { client: self }
    }

    /// A kept-alive connection oned has not closed meanwhile, if any.
    fn take_idle(&self) -> Option<Connection> {
        loop {
            let connection = self.lock_pool().idle.pop()?;
            if connection.last_used.elapsed() < IDLE_LIMIT && connection.is_open() {
                return Some(connection);
            }
        }
    }

    /// Opens a connection (TCP, then TLS for https) by `deadline`.
    fn connect(&self, deadline: Instant) -> std::io::Result<Connection> {
        self.connections.fetch_add(1, Ordering::Relaxed);
        let mut last_error = None;
        let mut socket = None;
        for addr in self.addr.to_socket_addrs()? {
            match TcpStream::connect_timeout(&addr, remaining(deadline)?) {
                Ok(stream) => {
                    socket = Some(stream);
                    break;
                }
                Err(e) => last_error = Some(e),
            }
        }
        let socket = socket.ok_or_else(|| {
            last_error.unwrap_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::NotFound, "the host has no address")
            })
        })?;
        socket.set_nodelay(true)?;
        let socket = Deadlined { socket, deadline };
        let link = match &self.tls {
            None => Link::Plain(socket),
            Some(connector) => Link::Tls(
                connector
                    .connect(&self.host, socket)
                    .map_err(|e| std::io::Error::other(format!("TLS handshake: {e}")))?,
            ),
        };
        Ok(Connection {
            reader: BufReader::new(link),
            last_used: Instant::now(),
        })
    }

    /// One attempt: a connection from the pool (or a new one), the
    /// request, the reply; the connection goes back to the pool when oned
    /// keeps it open.
    fn attempt(&self, method: &str, body: &str) -> Result<Answer, RpcError> {
        let transport = |detail: String| RpcError::Transport {
            method: method.to_owned(),
            detail,
        };
        let _slot = self.take_slot();
        let deadline = Instant::now() + self.timeout;
        let io_detail = |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
                format!("no answer from {} within {:?}", self.endpoint, self.timeout)
            }
            _ => format!("{}: {e}", self.endpoint),
        };
        let mut connection = match self.take_idle() {
            Some(connection) => connection,
            None => self
                .connect(deadline)
                .map_err(|e| transport(io_detail(e)))?,
        };
        connection.set_deadline(deadline);
        let (reply, keep_alive) = self.exchange(&mut connection, body).map_err(|e| match e {
            ReadError::Io(e) => transport(io_detail(e)),
            ReadError::Http(message) => transport(format!(
                "{}: malformed HTTP answer: {message}",
                self.endpoint
            )),
        })?;
        if keep_alive {
            connection.last_used = Instant::now();
            self.lock_pool().idle.push(connection);
        }
        if reply.status != 200 {
            let text = String::from_utf8_lossy(&reply.body);
            let excerpt: String = text.chars().take(200).collect();
            return Err(transport(format!(
                "{} answered HTTP {}: {}",
                self.endpoint,
                reply.status,
                excerpt.trim()
            )));
        }
        wire::decode_response(method, &reply.body, self.response_limit)
    }

    /// Writes the request and reads its answer.
    fn exchange(
        &self,
        connection: &mut Connection,
        body: &str,
    ) -> Result<(HttpReply, bool), ReadError> {
        let head = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: geni-am\r\nContent-Type: text/xml\r\nContent-Length: {}\r\nConnection: keep-alive\r\n\r\n",
            self.path,
            self.addr,
            body.len()
        );
        let link = connection.reader.get_mut();
        link.write_all(head.as_bytes())?;
        link.write_all(body.as_bytes())?;
        link.flush()?;
        read_reply(&mut connection.reader, self.response_limit)
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
        self.client.lock_pool().busy -= 1;
        self.client.slot_freed.notify_one();
    }
}

/// Between half and all of `backoff`, so that clients that failed together
/// do not retry together.
fn jittered(backoff: Duration) -> Duration {
    backoff.mul_f64(rand::random_range(0.5..=1.0))
}

/// The time left until `deadline`, or a timeout error once it passed.
fn remaining(deadline: Instant) -> std::io::Result<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        Err(std::io::ErrorKind::TimedOut.into())
    } else {
        Ok(left)
    }
}

impl Connection {
    /// Sets the deadline of the attempt about to use the connection.
    fn set_deadline(&mut self, deadline: Instant) {
        self.reader.get_mut().socket_mut().deadline = deadline;
    }

    /// Whether the connection can carry another call: nothing left unread
    /// and oned has not closed it (a peek that would block).
    fn is_open(&self) -> bool {
        if !self.reader.buffer().is_empty() {
            return false;
        }
        let socket = &self.reader.get_ref().socket().socket;
        if socket.set_nonblocking(true).is_err() {
            return false;
        }
        let open = matches!(
            socket.peek(&mut [0; 1]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock
        );
        socket.set_nonblocking(false).is_ok() && open
    }
}

impl Link {
    fn socket(&self) -> &Deadlined<TcpStream> {
        match self {
            Link::Plain(socket) => socket,
            Link::Tls(stream) => stream.get_ref(),
        }
    }

    fn socket_mut(&mut self) -> &mut Deadlined<TcpStream> {
        match self {
            Link::Plain(socket) => socket,
            Link::Tls(stream) => stream.get_mut(),
        }
    }
}

impl Read for Link {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Link::Plain(socket) => socket.read(buf),
            Link::Tls(stream) => stream.read(buf),
        }
    }
}

impl Write for Link {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Link::Plain(socket) => socket.write(buf),
            Link::Tls(stream) => stream.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Link::Plain(socket) => socket.flush(),
            Link::Tls(stream) => stream.flush(),
        }
    }
}

impl Read for Deadlined<TcpStream> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.socket
            .set_read_timeout(Some(remaining(self.deadline)?))?;
        self.socket.read(buf)
    }
}

impl Write for Deadlined<TcpStream> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.socket
            .set_write_timeout(Some(remaining(self.deadline)?))?;
        self.socket.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.socket.flush()
    }
}

#[cfg(test)]
mod tests;
