//! The simulator's HTTP/1.1 server: XML-RPC over POST on `/RPC2`, keep-alive
//! with oned's limit of 30 calls per connection, request size and inactivity
//! limits, and the injected transport faults and outages. [`OneSim`] is the handle tests
//! hold: it starts the server, exposes the control and inspection API, and
//! stops the server when dropped.

use crate::cloud::{Cloud, Delays, Quota};
use crate::methods;
use crate::version::Version;
use crate::xmlrpc::{self, Reply};
use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// Calls oned serves on one connection before closing it (`KEEPALIVE_MAX_CONN`).
pub const CALLS_PER_CONNECTION: usize = 30;
/// Largest request body accepted.
pub const MAX_BODY: usize = 64 * 1024 * 1024;
/// Largest request head accepted.
const MAX_HEAD: usize = 64 * 1024;
/// Client inactivity after which a connection is closed (`TIMEOUT`).
const IDLE_TIMEOUT: Duration = Duration::from_secs(15);
/// The `Server:` header. oned's Abyss server sends this; here it is the simulator's.
const SERVER_HEADER: &str = "Xmlrpc-c_Abyss/1.59.3";

/// How a simulator starts.
#[derive(Debug, Clone)]
pub struct SimSettings {
    /// Release to play, e.g. "7.4.0", "6.10.0", "5.12.x", "5.8".
    pub version: String,
    /// Life-cycle delays.
    pub delays: Delays,
    /// Pinned clock (seconds since the epoch); `None` follows the system clock.
    pub clock: Option<i64>,
    /// Address to listen on; `None` is 127.0.0.1 on a free port.
    pub listen: Option<SocketAddr>,
}

impl Default for SimSettings {
    fn default() -> Self {
        Self {
            version: Version::RECORDED.to_string(),
            delays: Delays::ZERO,
            clock: None,
            listen: None,
        }
    }
}

/// A transport fault applied to the next request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportFault {
    /// Close the connection without answering.
    Drop,
    /// Answer after this delay.
    Delay(Duration),
    /// Answer `500 Internal Server Error`.
    Http500,
}

struct Shared {
    cloud: Mutex<Cloud>,
    faults: Mutex<VecDeque<TransportFault>>,
    /// The fault every request meets while oned is down, if it is.
    outage: Mutex<Option<TransportFault>>,
    /// Methods whose next call is answered late: (method, delay).
    late_answers: Mutex<Vec<(String, Duration)>>,
    stop: AtomicBool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A running OpenNebula simulator.
pub struct OneSim {
    shared: Arc<Shared>,
    address: SocketAddr,
    acceptor: Option<JoinHandle<()>>,
}

/// Why a simulator could not start.
#[derive(Debug)]
pub enum StartError {
    /// The version string is not a release.
    Version(String),
    /// Binding the listener failed.
    Io(io::Error),
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::Version(v) => write!(f, "not an OpenNebula release: {v:?}"),
            StartError::Io(e) => write!(f, "cannot listen: {e}"),
        }
    }
}

impl std::error::Error for StartError {}

impl OneSim {
    /// Starts a simulator; panics with the reason if it cannot (a test helper).
    pub fn start(settings: SimSettings) -> OneSim {
        Self::try_start(settings).unwrap_or_else(|e| panic!("OpenNebula simulator: {e}"))
    }

    /// Starts a simulator in background threads.
    pub fn try_start(settings: SimSettings) -> Result<OneSim, StartError> {
        let version = Version::parse(&settings.version)
            .ok_or_else(|| StartError::Version(settings.version.clone()))?;
        let listen = settings
            .listen
            .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)));
        let listener = TcpListener::bind(listen).map_err(StartError::Io)?;
        let address = listener.local_addr().map_err(StartError::Io)?;
        let mut cloud = Cloud::new(version, settings.delays);
        cloud.pinned_clock = settings.clock.map(|s| s * 1000);
        let shared = Arc::new(Shared {
            cloud: Mutex::new(cloud),
            faults: Mutex::new(VecDeque::new()),
            outage: Mutex::new(None),
            late_answers: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        });
        let accept_shared = Arc::clone(&shared);
        let acceptor = std::thread::Builder::new()
            .name("onesim-accept".into())
            .spawn(move || accept_loop(&listener, &accept_shared))
            .map_err(StartError::Io)?;
        Ok(OneSim {
            shared,
            address,
            acceptor: Some(acceptor),
        })
    }

    /// `http://127.0.0.1:PORT/RPC2`.
    pub fn endpoint(&self) -> String {
        format!("http://{}/RPC2", self.address)
    }

    /// The listening address.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Runs `f` on the cloud state (the life cycle is advanced first).
    pub fn with_cloud<T>(&self, f: impl FnOnce(&mut Cloud) -> T) -> T {
        let mut cloud = lock(&self.shared.cloud);
        cloud.advance();
        f(&mut cloud)
    }

    /// Pins the clock to `secs` since the epoch.
    pub fn set_clock(&self, secs: i64) {
        self.set_clock_ms(secs * 1000);
    }

    /// Pins the clock to `ms` since the epoch.
    pub fn set_clock_ms(&self, ms: i64) {
        lock(&self.shared.cloud).pinned_clock = Some(ms);
    }

    /// Moves a pinned clock forward (pins it at the current time first if needed).
    pub fn advance_clock(&self, by: Duration) {
        let mut cloud = lock(&self.shared.cloud);
        let now = cloud.now_ms();
        cloud.pinned_clock = Some(now + i64::try_from(by.as_millis()).unwrap_or(i64::MAX));
    }

    /// UUIDs given to the next VMs, in order.
    pub fn queue_uuids<I: IntoIterator<Item = String>>(&self, uuids: I) {
        lock(&self.shared.cloud).uuids.extend(uuids);
    }

    /// The next `count` VMs to boot end in BOOT_FAILURE with an ERROR text.
    pub fn fail_next_boots(&self, count: u32) {
        lock(&self.shared.cloud).failing_boots = count;
    }

    /// Limits how many VMs (not DONE) may exist; creation beyond fails with the 512 quota text.
    pub fn set_vm_quota(&self, limit: Option<usize>) {
        lock(&self.shared.cloud).quota = limit.map(|vms| Quota { vms });
    }

    /// Sets a host's MAX_CPU (percent) and MAX_MEM (KiB), e.g. to exhaust capacity.
    pub fn set_host_capacity(&self, host_id: i32, max_cpu: i64, max_mem: i64) {
        let mut cloud = lock(&self.shared.cloud);
        if let Some(host) = cloud.hosts.iter_mut().find(|h| h.id == host_id) {
            host.max_cpu = max_cpu;
            host.max_mem = max_mem;
            if let Some(share) = host.doc.child_mut("HOST_SHARE") {
                share.set_value("MAX_CPU", max_cpu.to_string());
                share.set_value("MAX_MEM", max_mem.to_string());
            }
        }
    }

    /// Makes a host run `hypervisor` (`kvm`, `lxc` …) as oned reports it:
    /// its `IM_MAD` and `VM_MAD` drivers and the monitored
    /// `TEMPLATE/HYPERVISOR`.
    pub fn set_host_hypervisor(&self, host_id: i32, hypervisor: &str) {
        let mut cloud = lock(&self.shared.cloud);
        if let Some(host) = cloud.hosts.iter_mut().find(|h| h.id == host_id) {
            host.doc.set_value("IM_MAD", hypervisor);
            host.doc.set_value("VM_MAD", hypervisor);
            if let Some(template) = host.doc.child_mut("TEMPLATE") {
                for key in ["HYPERVISOR", "IM_MAD", "VM_MAD"] {
                    template.set_value(key, hypervisor);
                }
            }
        }
    }

    /// Applies `fault` to a coming request (faults queue in order).
    pub fn inject_transport_fault(&self, fault: TransportFault) {
        lock(&self.shared.faults).push_back(fault);
    }

    /// Takes oned down: until [`OneSim::end_outage`], every request meets
    /// `fault` (a dropped connection, as when oned is stopped or killed;
    /// an HTTP 500 from a proxy in front of it; a delay past the client's
    /// timeout), however long that lasts. Nothing reaches the cloud.
    pub fn begin_outage(&self, fault: TransportFault) {
        *lock(&self.shared.outage) = Some(fault);
    }

    /// Brings oned back: requests are answered again.
    pub fn end_outage(&self) {
        *lock(&self.shared.outage) = None;
    }

    /// The next call of `method` is carried out at once but answered only
    /// after `delay`: the window in which oned has acted and its client
    /// does not know yet (e.g. a VM created whose id is not recorded).
    pub fn answer_late(&self, method: &str, delay: Duration) {
        lock(&self.shared.late_answers).push((method.to_owned(), delay));
    }

    /// Stores a monitoring record for a VM (the figures a monitor driver reports).
    pub fn set_vm_monitoring(&self, id: i32, record: Vec<(String, String)>) -> bool {
        lock(&self.shared.cloud).monitor(id, record)
    }

    /// Purges a VM from the database: it vanishes and later calls get NO_EXISTS.
    pub fn purge_vm(&self, id: i32) -> bool {
        lock(&self.shared.cloud).purge(id)
    }

    /// The `one.vm.info` document of a VM.
    pub fn vm_document(&self, id: i32) -> Option<String> {
        self.with_cloud(|cloud| {
            cloud
                .vms
                .get(&id)
                .map(|vm| crate::docs::vm_full(cloud, vm, true).to_xml())
        })
    }

    /// (STATE, LCM_STATE) of a VM.
    pub fn vm_state(&self, id: i32) -> Option<(i32, i32)> {
        self.with_cloud(|cloud| cloud.vms.get(&id).map(|vm| (vm.state, vm.lcm)))
    }

    /// Ids of every VM the database holds.
    pub fn vm_ids(&self) -> Vec<i32> {
        self.with_cloud(|cloud| cloud.vms.keys().copied().collect())
    }

    /// The templates received by instantiate (extra templates), allocate and update, in order.
    pub fn received_templates(&self) -> Vec<String> {
        lock(&self.shared.cloud).received_templates.clone()
    }

    /// How many times `method` was called.
    pub fn call_count(&self, method: &str) -> u64 {
        lock(&self.shared.cloud)
            .call_counts
            .get(method)
            .copied()
            .unwrap_or(0)
    }

    /// The `one.vn.info` document of a network.
    pub fn vnet_document(&self, id: i32) -> Option<String> {
        self.with_cloud(|cloud| {
            cloud
                .vnets
                .iter()
                .find(|v| v.id == id)
                .map(|v| crate::docs::vnet(cloud, v, false).to_xml())
        })
    }

    /// Ids of the networks.
    pub fn vnet_ids(&self) -> Vec<i32> {
        lock(&self.shared.cloud)
            .vnets
            .iter()
            .map(|v| v.id)
            .collect()
    }

    /// Answers one XML-RPC body as the server would (no transport).
    pub fn answer(&self, body: &str) -> String {
        answer(&self.shared, body)
    }
}

impl Drop for OneSim {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept.
        let _ = TcpStream::connect_timeout(&self.address, Duration::from_secs(1));
        if let Some(handle) = self.acceptor.take() {
            let _ = handle.join();
        }
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else { continue };
        let shared = Arc::clone(shared);
        let _ = std::thread::Builder::new()
            .name("onesim-conn".into())
            .spawn(move || serve_connection(stream, &shared));
    }
}

fn answer(shared: &Shared, body: &str) -> String {
    let mut cloud = lock(&shared.cloud);
    let reply = match xmlrpc::parse_call(body) {
        Ok(call) => methods::dispatch(&mut cloud, &call),
        Err(text) => Reply::Fault { code: -503, text },
    };
    xmlrpc::encode_reply(&reply, cloud.version.five_element_failures())
}

/// The delay [`OneSim::answer_late`] set for the method of `body`, taken.
fn late_answer(shared: &Shared, body: &str) -> Option<Duration> {
    let mut late = lock(&shared.late_answers);
    if late.is_empty() {
        return None;
    }
    let method = xmlrpc::parse_call(body).ok()?.method;
    let at = late.iter().position(|(name, _)| *name == method)?;
    Some(late.remove(at).1)
}

/// A parsed request head.
struct Head {
    method: String,
    path: String,
    content_length: usize,
    close: bool,
    expect_continue: bool,
    chunked: bool,
}

/// Reads one line of the request head, never more than `budget` bytes.
fn read_limited_line(reader: &mut BufReader<TcpStream>, budget: &mut usize) -> io::Result<String> {
    let mut line = Vec::new();
    let limit = u64::try_from(*budget).unwrap_or(u64::MAX);
    let n = reader.by_ref().take(limit).read_until(b'\n', &mut line)?;
    *budget = budget.saturating_sub(n);
    if n > 0 && !line.ends_with(b"\n") && *budget == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "request head too large",
        ));
    }
    String::from_utf8(line)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "request head is not UTF-8"))
}

fn read_head(reader: &mut BufReader<TcpStream>) -> io::Result<Option<Head>> {
    let mut budget = MAX_HEAD;
    let request_line = loop {
        let line = read_limited_line(reader, &mut budget)?;
        if line.is_empty() {
            return Ok(None);
        }
        if !line.trim().is_empty() {
            break line;
        }
    };
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or("").to_owned();
    let path = parts.next().unwrap_or("").to_owned();
    let http10 = parts.next() == Some("HTTP/1.0");
    let mut head = Head {
        method,
        path,
        content_length: 0,
        close: http10,
        expect_continue: false,
        chunked: false,
    };
    loop {
        let line = read_limited_line(reader, &mut budget)?;
        if line.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "request head cut",
            ));
        }
        let line = line.trim_end();
        if line.is_empty() {
            return Ok(Some(head));
        }
        if let Some((name, value)) = line.split_once(':') {
            let value = value.trim();
            match name.trim().to_ascii_lowercase().as_str() {
                "content-length" => {
                    head.content_length = value.parse().map_err(|_| {
                        io::Error::new(io::ErrorKind::InvalidData, "bad Content-Length")
                    })?;
                }
                "expect" => head.expect_continue = value.eq_ignore_ascii_case("100-continue"),
                "transfer-encoding" => {
                    head.chunked = value.to_ascii_lowercase().contains("chunked")
                }
                "connection" => {
                    let value = value.to_ascii_lowercase();
                    head.close =
                        value.contains("close") || (http10 && !value.contains("keep-alive"));
                }
                _ => {}
            }
        }
    }
}

fn write_response(stream: &mut TcpStream, status: &str, body: &str, close: bool) -> io::Result<()> {
    let connection = if close { "close" } else { "Keep-Alive" };
    let head = format!(
        "HTTP/1.1 {status}\r\nConnection: {connection}\r\nServer: {SERVER_HEADER}\r\nContent-Type: text/xml\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    // One write: a separate body segment would wait for the client's delayed ACK.
    let mut message = head.into_bytes();
    message.extend_from_slice(body.as_bytes());
    stream.write_all(&message)?;
    stream.flush()
}

fn serve_connection(stream: TcpStream, shared: &Shared) {
    let _ = stream.set_read_timeout(Some(IDLE_TIMEOUT));
    let _ = stream.set_nodelay(true);
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    for served in 1..=CALLS_PER_CONNECTION {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let head = match read_head(&mut reader) {
            Ok(Some(head)) => head,
            Ok(None) => return,
            Err(_) => {
                let _ = write_response(&mut writer, "400 Bad Request", "", true);
                return;
            }
        };
        if head.chunked {
            let _ = write_response(&mut writer, "411 Length Required", "", true);
            return;
        }
        if head.content_length > MAX_BODY {
            let _ = write_response(&mut writer, "413 Payload Too Large", "", true);
            return;
        }
        if head.expect_continue && writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").is_err() {
            return;
        }
        let mut body = vec![0; head.content_length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let close = head.close || served == CALLS_PER_CONNECTION;
        let down = *lock(&shared.outage);
        let fault = down.or_else(|| lock(&shared.faults).pop_front());
        match fault {
            Some(TransportFault::Drop) => return,
            Some(TransportFault::Http500) => {
                let _ = write_response(&mut writer, "500 Internal Server Error", "", close);
                if close {
                    return;
                }
                continue;
            }
            Some(TransportFault::Delay(delay)) => std::thread::sleep(delay),
            None => {}
        }
        if head.method != "POST" || head.path != "/RPC2" {
            let _ = write_response(&mut writer, "404 Not Found", "", true);
            return;
        }
        let reply = match String::from_utf8(body) {
            Ok(text) => {
                let reply = answer(shared, &text);
                if let Some(delay) = late_answer(shared, &text) {
                    std::thread::sleep(delay);
                }
                reply
            }
            Err(_) => xmlrpc::encode_reply(
                &Reply::Fault {
                    code: -503,
                    text: "Call XML not valid UTF-8".into(),
                },
                true,
            ),
        };
        if write_response(&mut writer, "200 OK", &reply, close).is_err() || close {
            return;
        }
    }
}
