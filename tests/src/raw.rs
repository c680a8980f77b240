//! Raw HTTP over TLS to a test aggregate, for what the AM client never
//! does: headers of the test's choosing, a body sent a byte at a time, a
//! connection opened (handshake completed) before its first request is
//! timed, or answers read as HTTP status and XML-RPC fault.

use crate::aggregate::Aggregate;
use openssl::ssl::{SslConnector, SslMethod, SslStream};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::path::Path;
use std::time::Duration;

/// Longest wait for any answer: a safety net against a hung test, not a
/// measurement.
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// One TLS connection to the aggregate, handshake completed.
pub struct Connection {
    stream: BufReader<SslStream<TcpStream>>,
}

/// An HTTP answer.
#[derive(Debug)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The body.
    pub body: Vec<u8>,
}

impl Answer {
    /// The message of the XML-RPC fault the body holds; fails the test
    /// when it holds none.
    pub fn fault_message(&self) -> String {
        match geni_xmlrpc::decode_response(&self.body, 1 << 20) {
            Ok(Err(fault)) => fault.string().to_owned(),
            other => panic!(
                "HTTP {} without an XML-RPC fault ({other:?}): {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            ),
        }
    }
}

impl Connection {
    /// Connects to `aggregate` presenting `cert` and `key` (PEM), with
    /// `TCP_NODELAY` as real clients set it, and completes the handshake.
    pub fn open(aggregate: &Aggregate, cert: &Path, key: &Path) -> Connection {
        let mut connector = SslConnector::builder(SslMethod::tls_client()).expect("connector");
        connector
            .set_certificate_chain_file(cert)
            .expect("client chain");
        connector
            .set_private_key_file(key, openssl::ssl::SslFiletype::PEM)
            .expect("client key");
        connector
            .set_ca_file(aggregate.file("ca-cert.pem"))
            .expect("CA file");
        let tcp = TcpStream::connect((Ipv4Addr::LOCALHOST, aggregate.port())).expect("connects");
        tcp.set_nodelay(true).expect("TCP_NODELAY");
        tcp.set_read_timeout(Some(READ_TIMEOUT)).expect("timeout");
        let tls = connector
            .build()
            .connect("127.0.0.1", tcp)
            .expect("TLS handshake");
        Connection {
            stream: BufReader::new(tls),
        }
    }

    /// Connects as alice, the development user.
    pub fn alice(aggregate: &Aggregate) -> Connection {
        Connection::open(
            aggregate,
            &aggregate.file("alice-cert.pem"),
            &aggregate.file("alice-key.pem"),
        )
    }

    /// Writes `bytes` and flushes them.
    pub fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let tls = self.stream.get_mut();
        tls.write_all(bytes)?;
        tls.flush()
    }

    /// Sends a POST of `body` to `path` with the `extra` header lines.
    pub fn post(&mut self, path: &str, extra: &[&str], body: &[u8]) -> std::io::Result<()> {
        let mut request = post_head(path, extra, body.len()).into_bytes();
        request.extend_from_slice(body);
        self.send(&request)
    }

    /// Reads one answer (its body by `Content-Length`).
    pub fn read_answer(&mut self) -> std::io::Result<Answer> {
        let mut line = String::new();
        self.stream.read_line(&mut line)?;
        let status = line
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .ok_or_else(|| std::io::Error::other(format!("no status line: {line:?}")))?;
        let mut length = 0;
        loop {
            line.clear();
            self.stream.read_line(&mut line)?;
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        self.stream.read_exact(&mut body)?;
        Ok(Answer { status, body })
    }

    /// Whether the server has sent anything not read yet (an answer, or
    /// the end of the connection), without waiting for it.
    pub fn server_spoke(&mut self) -> bool {
        if !self.stream.buffer().is_empty() {
            return true;
        }
        let tcp = self.stream.get_ref().get_ref();
        let mut byte = [0u8; 1];
        tcp.set_nonblocking(true).expect("non-blocking");
        let peeked = tcp.peek(&mut byte);
        tcp.set_nonblocking(false).expect("blocking");
        peeked.is_ok()
    }

    /// Whether the server closed the connection: reading meets its end
    /// (or a reset) instead of data.
    pub fn is_closed(&mut self) -> bool {
        let mut byte = [0u8; 1];
        matches!(self.stream.read(&mut byte), Ok(0) | Err(_))
    }
}

/// The head of a POST to `path` announcing `length` body bytes, with the
/// `extra` header lines.
pub fn post_head(path: &str, extra: &[&str], length: usize) -> String {
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/xml\r\nContent-Length: {length}\r\n"
    );
    for line in extra {
        head.push_str(line);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    head
}
