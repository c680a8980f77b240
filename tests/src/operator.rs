//! The operator's endpoint of a test aggregate: plain HTTP GETs to it
//! ([`get`]), samples read from its Prometheus text ([`Metrics`]), and
//! pages rendered by headless Chromium ([`chromium`]).

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
    let mut stream = TcpStream::connect(host).expect("the operator endpoint accepts");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("read timeout");
    let extra: String = headers.iter().map(|h| format!("{h}\r\n")).collect();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{extra}\r\n"
    )
    .expect("request sent");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("answer read");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP answer");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status code");
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Answer {
        status,
        headers: head.to_owned(),
        body,
    }
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
