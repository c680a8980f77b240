//! The operator's endpoint of a test aggregate: GETs to it over plain
//! HTTP ([`get`]) or HTTPS ([`get_tls`]), samples read from its Prometheus text ([`Metrics`]), and
//! pages rendered by headless Chromium ([`chromium`]).

use openssl::ssl::{SslConnector, SslFiletype, SslMethod};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// An HTTP answer of the endpoint.
#[derive(Debug)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The header lines, as sent.
    pub headers: String,
    /// The body.
    pub body: String,
}

/// GETs `url` (`http://127.0.0.1:PORT/path`) with the extra header lines
/// `headers` (each `Name: value`).
pub fn get(url: &str, headers: &[&str]) -> Answer {
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let stream = TcpStream::connect(host).expect("the operator endpoint accepts");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("read timeout");
    exchange(stream, host, path, headers).expect("an HTTP answer")
}

/// GETs `path` over HTTPS from the endpoint on loopback `port`, checking
/// its certificate against `ca` and presenting `client` (certificate and
/// key files) when given; the error when the handshake fails.
pub fn get_tls(
    port: u16,
    ca: &Path,
    client: Option<(&Path, &Path)>,
    path: &str,
) -> Result<Answer, String> {
    let mut connector = SslConnector::builder(SslMethod::tls_client()).expect("connector");
    connector.set_ca_file(ca).expect("CA file");
    if let Some((cert, key)) = client {
        connector
            .set_certificate_chain_file(cert)
            .expect("client chain");
        connector
            .set_private_key_file(key, SslFiletype::PEM)
            .expect("client key");
    }
    let tcp = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    tcp.set_read_timeout(Some(Duration::from_secs(60)))
        .expect("read timeout");
    let tls = connector
        .build()
        .connect("127.0.0.1", tcp)
        .map_err(|e| e.to_string())?;
    exchange(tls, &format!("127.0.0.1:{port}"), path, &[]).map_err(|e| e.to_string())
}

/// Sends one GET of `path` on `stream` and reads the answer to its end.
fn exchange(
    mut stream: impl Read + Write,
    host: &str,
    path: &str,
    headers: &[&str],
) -> std::io::Result<Answer> {
    let extra: String = headers.iter().map(|h| format!("{h}\r\n")).collect();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{extra}\r\n"
    )?;
    stream.flush()?;
    let mut raw = Vec::new();
    // A TLS peer may close without close_notify: keep what arrived.
    if let Err(error) = stream.read_to_end(&mut raw)
        && raw.is_empty()
    {
        return Err(error);
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| std::io::Error::other(format!("not an HTTP answer: {text:?}")))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status: {head:?}")))?;
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Ok(Answer {
        status,
        headers: head.to_owned(),
        body,
    })
}

/// The body of a chunked answer.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// One scrape of `/metrics`.
pub struct Metrics(pub String);

impl Metrics {
    /// Scrapes the endpoint whose `/metrics` URL is `url`.
    pub fn scrape(url: &str) -> Metrics {
        let answer = get(url, &[]);
        assert_eq!(answer.status, 200, "{}", answer.body);
        Metrics(answer.body)
    }

    /// The value of the sample `name` whose labels include every
    /// `(label, value)` of `labels` summed over the others (0 when none).
    pub fn sum(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.0
            .lines()
            .filter(|line| !line.starts_with('#'))
            .filter_map(|line| {
                let (series, value) = line.rsplit_once(' ')?;
                let (metric, rest) = series.split_once('{').unwrap_or((series, "}"));
                if metric != name {
                    return None;
                }
                let all = labels
                    .iter()
                    .all(|(label, value)| rest.contains(&format!("{label}=\"{value}\"")));
                all.then(|| value.parse::<f64>().ok()).flatten()
            })
            .sum()
    }
}

/// Headless Chromium, when installed: `chromium` or `chromium-browser`.
pub fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser"]
        .into_iter()
        .find_map(|name| {
            let found = Command::new("sh")
                .args(["-c", &format!("command -v {name}")])
                .output()
                .ok()?;
            let path = String::from_utf8_lossy(&found.stdout).trim().to_owned();
            (found.status.success() && !path.is_empty()).then(|| PathBuf::from(path))
        })
}

/// Runs headless `chromium` on `url` with `args` (`--dump-dom`,
/// `--screenshot=…`), its profile in `profile`; what it printed.
pub fn run_chromium(chromium: &Path, profile: &Path, url: &str, args: &[&str]) -> String {
    let output = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .output()
        .expect("chromium runs");
    assert!(
        output.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}
