//! A small blocking XML-RPC-over-TLS client with a client certificate, for
//! tests and the load tool: OpenSSL `SslConnector` over a `TcpStream`,
//! HTTP/1.1 with `Content-Length` and keep-alive (one connection reused
//! across calls, reopened once when the server closed it meanwhile) or, for
//! the load tool's `--new-connection`, one connection per call as omni
//! makes them, the
//! certificate chain sent so servers can use the intermediates, and the
//! server's certificate verified (host name included) when a CA file is given.

use crate::config::{TlsFileError, TlsIdentity};
use geni_xmlrpc::{DecodeError, EncodeError, Value};
use openssl::ssl::{SslConnector, SslMethod, SslStream, SslVerifyMode};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

/// Largest response read.
const MAX_RESPONSE: usize = 256 << 20;
/// Largest response head (status line and headers).
const MAX_HEAD: usize = 64 << 10;
/// Socket read/write timeout.
const TIMEOUT: Duration = Duration::from_secs(120);

/// Why a call failed at the transport level.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The URL is not `https://HOST[:PORT]/PATH`.
    #[error("`{0}` is not an https://HOST[:PORT]/PATH URL")]
    BadUrl(String),
    /// The certificate, key or CA file cannot be used.
    #[error(transparent)]
    Identity(#[from] TlsFileError),
    /// OpenSSL failed (setup or handshake).
    #[error("TLS: {0}")]
    Tls(String),
    /// The connection failed.
    #[error("connection to {addr}: {source}")]
    Io {
        /// `host:port`.
        addr: String,
        /// The operating system error.
        source: std::io::Error,
    },
    /// The answer is not HTTP as expected.
    #[error("malformed HTTP answer: {0}")]
    Http(String),
    /// The server answered with an HTTP error status.
    #[error("HTTP {status}: {body}")]
    Status {
        /// The status code.
        status: u16,
        /// The body text.
        body: String,
    },
    /// The call could not be encoded.
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// The answer is not an XML-RPC response.
    #[error("answer: {0}")]
    Decode(#[from] DecodeError),
}

/// An HTTP answer.
#[derive(Debug, Clone)]
pub struct HttpReply {
    /// Status code.
    pub status: u16,
    /// Body bytes.
    pub body: Vec<u8>,
}

/// A connection to one XML-RPC endpoint.
pub struct Client {
    connector: SslConnector,
    host: String,
    addr: String,
    path: String,
    stream: Option<BufReader<SslStream<TcpStream>>>,
    connections: u64,
    keep_alive: bool,
}

impl Client {
    /// A client for the endpoint `url` (`https://host:port/am/3`), presenting
    /// the PEM chain `cert` (leaf first, intermediates after) with `key`, and
    /// verifying the server against `ca` when given. Connects lazily.
    pub fn new(
        url: &str,
        cert: &Path,
        key: &Path,
        ca: Option<&Path>,
    ) -> Result<Client, ClientError> {
        let (host, port, path) =
            split_url(url, "https", 443).ok_or_else(|| ClientError::BadUrl(url.into()))?;
        let identity = TlsIdentity::load(cert, key)?;
        let tls = |e: openssl::error::ErrorStack| ClientError::Tls(e.to_string());
        let mut builder = SslConnector::builder(SslMethod::tls_client()).map_err(tls)?;
        let mut chain = identity.chain.iter();
        if let Some(leaf) = chain.next()
            && builder.set_certificate(leaf).is_err()
        {
            // A legacy certificate (1024-bit key, SHA-1/MD5 signature):
            // presented as GENI clients of its era do, at security level 0.
            builder.set_security_level(0);
            builder.set_certificate(leaf).map_err(tls)?;
        }
        for issuer in chain {
            builder.add_extra_chain_cert(issuer.clone()).map_err(tls)?;
        }
        builder.set_private_key(&identity.key).map_err(tls)?;
        // The server's flight is read in one system call, not two per record.
        builder.set_read_ahead(true);
        match ca {
            Some(ca) => builder.set_ca_file(ca).map_err(tls)?,
            None => builder.set_verify(SslVerifyMode::NONE),
        }
        Ok(Client {
            connector: builder.build(),
            addr: socket_addr(&host, port),
            host,
            path,
            stream: None,
            connections: 0,
            keep_alive: true,
        })
    }

    /// How many connections this client has opened so far (1 when
    /// keep-alive held for every call).
    pub fn connections(&self) -> u64 {
        self.connections
    }

    /// Keeps the connection open between calls (the default) or, with
    /// `false`, asks for `Connection: close` and opens a new TCP connection
    /// and TLS handshake for every call.
    pub fn set_keep_alive(&mut self, keep_alive: bool) {
        self.keep_alive = keep_alive;
        if !keep_alive {
            self.stream = None;
        }
    }

    /// Calls `method` with `params`: the value, or the fault the server sent.
    pub fn call(
        &mut self,
        method: &str,
        params: &[Value],
    ) -> Result<geni_xmlrpc::Reply, ClientError> {
        let body = geni_xmlrpc::encode_call(method, params)?;
        let path = self.path.clone();
        let reply = self.send("POST", &path, body.as_bytes())?;
        if reply.status != 200 {
            return Err(ClientError::Status {
                status: reply.status,
                body: String::from_utf8_lossy(&reply.body).into_owned(),
            });
        }
        Ok(geni_xmlrpc::decode_response(&reply.body, MAX_RESPONSE)?)
    }

    /// Sends one raw HTTP request on the kept-alive connection; a request
    /// on a connection the server closed meanwhile is retried once on a new one.
    pub fn send(
        &mut self,
        method: &str,
        path: &str,
        body: &[u8],
    ) -> Result<HttpReply, ClientError> {
        let reused = self.stream.is_some();
        match self.exchange(method, path, body) {
            Err(ClientError::Io { .. }) | Err(ClientError::Http(_)) if reused => {
                self.stream = None;
                self.exchange(method, path, body)
            }
            other => other,
        }
    }

    /// One request and its answer.
    fn exchange(
        &mut self,
        method: &str,
        path: &str,
        body: &[u8],
    ) -> Result<HttpReply, ClientError> {
        let addr = self.addr.clone();
        let io = |source| ClientError::Io {
            addr: addr.clone(),
            source,
        };
        let stream = match self.stream.take() {
            Some(stream) => stream,
            None => BufReader::new(self.connect()?),
        };
        let mut stream = stream;
        let connection = if self.keep_alive {
            "keep-alive"
        } else {
            "close"
        };
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nUser-Agent: geni-am-client\r\nContent-Type: text/xml\r\nContent-Length: {}\r\nConnection: {connection}\r\n\r\n",
            self.addr,
            body.len()
        );
        let writer = stream.get_mut();
        writer.write_all(head.as_bytes()).map_err(io)?;
        writer.write_all(body).map_err(io)?;
        writer.flush().map_err(io)?;
        let (reply, keep) = read_reply(&mut stream, MAX_RESPONSE).map_err(|e| match e {
            ReadError::Io(source) => io(source),
            ReadError::Http(message) => ClientError::Http(message),
        })?;
        if keep && self.keep_alive {
            self.stream = Some(stream);
        }
        Ok(reply)
    }

    /// Opens a TCP connection and completes the TLS handshake.
    fn connect(&mut self) -> Result<SslStream<TcpStream>, ClientError> {
        self.connections += 1;
        let io = |source| ClientError::Io {
            addr: self.addr.clone(),
            source,
        };
        let tcp = TcpStream::connect(&self.addr).map_err(io)?;
        tcp.set_read_timeout(Some(TIMEOUT)).map_err(io)?;
        tcp.set_write_timeout(Some(TIMEOUT)).map_err(io)?;
        tcp.set_nodelay(true).map_err(io)?;
        self.handshake(tcp)
    }

    /// The TLS handshake with the server over `stream`, as each new
    /// connection starts.
    pub fn handshake<S: Read + Write + std::fmt::Debug>(
        &self,
        stream: S,
    ) -> Result<SslStream<S>, ClientError> {
        self.connector
            .connect(&self.host, stream)
            .map_err(|e| ClientError::Tls(e.to_string()))
    }
}

/// `SCHEME://host[:port]/path` → (host, port, path), the port defaulting
/// to `default_port` and the path to `/`; IPv6 hosts in brackets.
pub(crate) fn split_url(
    url: &str,
    scheme: &str,
    default_port: u16,
) -> Option<(String, u16, String)> {
    let rest = url.strip_prefix(scheme)?.strip_prefix("://")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => (host, port.parse().ok()?),
        _ => (authority, default_port),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (!host.is_empty()).then(|| (host.to_owned(), port, path.to_owned()))
}

/// The `host:port` to connect to, an IPv6 host back in brackets.
pub(crate) fn socket_addr(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Why an answer could not be read.
pub(crate) enum ReadError {
    /// The connection failed or timed out.
    Io(std::io::Error),
    /// The bytes are not an HTTP/1.1 answer this client reads.
    Http(String),
}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> ReadError {
        ReadError::Io(e)
    }
}

/// Reads one answer whose body is at most `limit` bytes; also says whether
/// the connection may be reused.
pub(crate) fn read_reply(
    stream: &mut impl BufRead,
    limit: usize,
) -> Result<(HttpReply, bool), ReadError> {
    let http = |m: &str| ReadError::Http(m.to_owned());
    let mut head_bytes = 0;
    let mut line = String::new();
    let mut next_line = |stream: &mut dyn BufRead| -> Result<String, ReadError> {
        line.clear();
        let n = stream
            .take((MAX_HEAD - head_bytes) as u64)
            .read_line(&mut line)?;
        head_bytes += n;
        if n == 0 || !line.ends_with('\n') {
            return Err(http(
                "the connection closed in the middle of the answer head",
            ));
        }
        Ok(line.trim_end().to_owned())
    };
    let status_line = next_line(stream)?;
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| ReadError::Http(format!("bad status line `{status_line}`")))?;
    let (mut length, mut chunked, mut keep) = (None, false, true);
    loop {
        let header = next_line(stream)?;
        if header.is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            return Err(ReadError::Http(format!("bad header `{header}`")));
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = value.parse::<usize>().ok(),
            "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
            "connection" => keep = !value.eq_ignore_ascii_case("close"),
            _ => {}
        }
    }
    let body = if chunked {
        read_chunked(stream, limit)?
    } else {
        let length = length
            .ok_or_else(|| http("the answer has neither Content-Length nor chunked encoding"))?;
        if length > limit {
            return Err(ReadError::Http(format!(
                "the answer announces {length} bytes, more than the limit of {limit} bytes"
            )));
        }
        let mut body = vec![0; length];
        stream.read_exact(&mut body)?;
        body
    };
    Ok((HttpReply { status, body }, keep))
}

/// Reads a chunked body.
fn read_chunked(stream: &mut impl BufRead, limit: usize) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::new();
    loop {
        let mut size_line = String::new();
        stream.read_line(&mut size_line)?;
        let size_text = size_line.trim().split(';').next().unwrap_or_default();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| ReadError::Http(format!("bad chunk size `{}`", size_line.trim())))?;
        if body.len().saturating_add(size) > limit {
            return Err(ReadError::Http(format!(
                "the chunked answer exceeds the limit of {limit} bytes"
            )));
        }
        let start = body.len();
        body.resize(start + size, 0);
        stream.read_exact(&mut body[start..])?;
        let mut crlf = String::new();
        stream.read_line(&mut crlf)?;
        if size == 0 {
            return Ok(body);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_hosts_keep_their_brackets_in_the_address() {
        let (host, port, path) = split_url("https://[::1]:8443/am/3", "https", 443).unwrap();
        assert_eq!((host.as_str(), port, path.as_str()), ("::1", 8443, "/am/3"));
        assert_eq!(socket_addr(&host, port), "[::1]:8443");
        let (host, port, _) = split_url("https://am.example.org", "https", 443).unwrap();
        assert_eq!(socket_addr(&host, port), "am.example.org:443");
    }
}
