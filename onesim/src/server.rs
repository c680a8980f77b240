//! The simulator's HTTP/1.1 server: XML-RPC over POST on `/RPC2`, keep-alive
//! with oned's limit of 30 calls per connection, request size and inactivity
//! limits, and the injected transport faults and outages met before a call
//! reaches the cloud.

use crate::cloud::Cloud;
use crate::faults::{Transport, TransportFault};
use crate::methods;
use crate::xmlrpc::{self, Reply};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Calls oned serves on one connection before closing it (`KEEPALIVE_MAX_CONN`).
const CALLS_PER_CONNECTION: usize = 30;
/// Largest request body accepted.
const MAX_BODY: usize = 64 * 1024 * 1024;
/// Largest request head accepted.
const MAX_HEAD: usize = 64 * 1024;
/// Client inactivity after which a connection is closed (`TIMEOUT`).
const IDLE_TIMEOUT: Duration = Duration::from_secs(15);
/// The `Server:` header. oned's Abyss server sends this; here it is the simulator's.
const SERVER_HEADER: &str = "Xmlrpc-c_Abyss/1.59.3";

/// What the server's threads and the control handle share.
#[derive(Debug)]
pub struct Shared {
    cloud: Mutex<Cloud>,
    transport: Mutex<Transport>,
    stop: AtomicBool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Shared {
    /// Serves `cloud` with no transport fault.
    pub fn new(cloud: Cloud) -> Self {
        Shared {
            cloud: Mutex::new(cloud),
            transport: Mutex::new(Transport::default()),
            stop: AtomicBool::new(false),
        }
    }

    /// The cloud, locked.
    pub fn cloud(&self) -> MutexGuard<'_, Cloud> {
        lock(&self.cloud)
    }

    /// The transport faults, locked.
    pub fn transport(&self) -> MutexGuard<'_, Transport> {
        lock(&self.transport)
    }

    /// Asks the server's threads to stop.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

/// Accepts connections until [`Shared::stop`], one thread each.
pub fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stopped() {
            break;
        }
        let Ok(stream) = stream else { continue };
        let shared = Arc::clone(shared);
        let _ = std::thread::Builder::new()
            .name("onesim-conn".into())
            .spawn(move || serve_connection(stream, &shared));
    }
}

/// Answers one XML-RPC body as oned would (no transport).
pub fn answer(shared: &Shared, body: &str) -> String {
    let mut cloud = shared.cloud();
    let reply = match xmlrpc::parse_call(body) {
        Ok(call) => methods::dispatch(&mut cloud, &call),
        Err(text) => Reply::Fault { code: -503, text },
    };
    xmlrpc::encode_reply(&reply, cloud.version().five_element_failures())
}

/// The delay [`crate::OneSim::answer_late`] set for the method of `body`, taken.
fn late_answer(shared: &Shared, body: &str) -> Option<Duration> {
    if !shared.transport().holds_answers() {
        return None;
    }
    let method = xmlrpc::parse_call(body).ok()?.method;
    shared.transport().take_late_answer(&method)
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
        if shared.stopped() {
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
        let fault = shared.transport().next_fault();
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
