//! The load generator behind `geni-am bench`: N concurrent clients, each
//! on its own kept-alive TLS connection, run full AM API v3 lifecycles
//! (Allocate → Provision → `geni_start` → Status until `geni_ready` →
//! Delete) against a running aggregate; every call's latency is recorded
//! per method ([`stats`]) and the run's lifecycles per second computed.

pub mod stats;

use crate::client::{Client, ClientError};
use geni_xmlrpc::Value;
use stats::Latencies;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// What to run against which aggregate.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// The AM API v3 endpoint.
    pub url: String,
    /// The client certificate chain (PEM).
    pub cert: PathBuf,
    /// The client key (PEM).
    pub key: PathBuf,
    /// The CA file the server certificate is verified against.
    pub ca: Option<PathBuf>,
    /// The slice the lifecycles run in.
    pub slice_urn: String,
    /// The slice credential (XML).
    pub credential: String,
    /// The sliver type requested.
    pub sliver_type: String,
    /// Concurrent clients.
    pub clients: usize,
    /// Lifecycles per client.
    pub lifecycles: usize,
    /// Longest wait for `geni_ready`.
    pub ready_timeout: Duration,
    /// Pause between Status polls.
    pub poll_interval: Duration,
}

/// What a run measured.
#[derive(Debug, Default)]
pub struct Report {
    /// Latencies per AM API method.
    pub methods: BTreeMap<&'static str, Latencies>,
    /// Lifecycles that completed.
    pub completed: usize,
    /// Why the others failed (one line each).
    pub failures: Vec<String>,
    /// Wall time of the run.
    pub elapsed: Duration,
}

impl Report {
    /// Completed lifecycles per second of wall time.
    pub fn lifecycles_per_second(&self) -> f64 {
        self.completed as f64 / self.elapsed.as_secs_f64().max(f64::EPSILON)
    }

    fn merge(&mut self, other: Report) {
        for (method, latencies) in other.methods {
            self.methods.entry(method).or_default().extend(latencies);
        }
        self.completed += other.completed;
        self.failures.extend(other.failures);
    }
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A client could not be set up.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// A client thread could not be started or panicked.
    #[error("client thread: {0}")]
    Thread(String),
    /// The sliver type to request could not be read from the advertisement.
    #[error("no sliver type to request: {0}")]
    Advertisement(String),
}

/// The first sliver type the aggregate at `url` advertises on a node
/// available now (ListResources with `credential`), for a run that names
/// none: every aggregate offers its own types.
pub fn advertised_sliver_type(
    url: &str,
    cert: &std::path::Path,
    key: &std::path::Path,
    ca: Option<&std::path::Path>,
    credential: &str,
) -> Result<String, BenchError> {
    let mut client = Client::new(url, cert, key, ca)?;
    let options = Value::Struct(BTreeMap::from([
        ("geni_rspec_version".to_owned(), rspec_version()),
        ("geni_available".to_owned(), Value::Boolean(true)),
    ]));
    let params = [credentials(credential), options];
    let value = answer_value("ListResources", client.call("ListResources", &params))
        .map_err(BenchError::Advertisement)?;
    let advertisement = geni_xmlrpc::as_str(&value).unwrap_or_default();
    first_sliver_type(advertisement).ok_or_else(|| {
        BenchError::Advertisement(
            "the aggregate advertises no sliver type on an available node; name one with --sliver-type"
                .into(),
        )
    })
}

/// The first `sliver_type` of an available node of an advertisement.
fn first_sliver_type(advertisement: &str) -> Option<String> {
    let doc = geni_rspec::Document::parse(advertisement.as_bytes()).ok()?;
    let root = geni_rspec::RSpec::new(&doc).ok()?;
    root.nodes()
        .filter(|node| node.available_now() != Some(false))
        .find_map(|node| Some(node.sliver_type()?.name()?.into_owned()))
}

/// Runs `options.clients` clients of `options.lifecycles` lifecycles each
/// and gathers what they measured.
pub fn run(options: &BenchOptions) -> Result<Report, BenchError> {
    let clients = (0..options.clients)
        .map(|_| {
            let ca = options.ca.as_deref();
            Client::new(&options.url, &options.cert, &options.key, ca)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let started = Instant::now();
    let mut report = std::thread::scope(|scope| {
        let handles: Vec<_> = clients
            .into_iter()
            .enumerate()
            .map(|(i, mut client)| scope.spawn(move || run_client(i, &mut client, options)))
            .collect();
        let mut report = Report::default();
        for handle in handles {
            let part = handle
                .join()
                .map_err(|_| BenchError::Thread("a client thread panicked".into()))?;
            report.merge(part);
        }
        Ok::<_, BenchError>(report)
    })?;
    report.elapsed = started.elapsed();
    Ok(report)
}

/// The lifecycles of client number `index`.
fn run_client(index: usize, client: &mut Client, options: &BenchOptions) -> Report {
    let mut session = Session {
        client,
        options,
        request: request(&options.sliver_type, &format!("bench{index}")),
        report: Report::default(),
    };
    for _ in 0..options.lifecycles {
        match session.lifecycle() {
            Ok(()) => session.report.completed += 1,
            Err(failure) => session.report.failures.push(failure),
        }
    }
    session.report
}

/// A client making timed calls.
struct Session<'a> {
    client: &'a mut Client,
    options: &'a BenchOptions,
    /// This client's request (its own node client_id).
    request: String,
    report: Report,
}

impl Session<'_> {
    /// Allocate → Provision → `geni_start` → Status until ready → Delete.
    fn lifecycle(&mut self) -> Result<(), String> {
        let slice = s(&self.options.slice_urn);
        let request = s(&self.request);
        let allocated = self.call("Allocate", vec![slice, self.creds(), request, empty()])?;
        let urn = first_sliver(&allocated)?;
        let urns = Value::Array(vec![s(&urn)]);
        let version = Value::Struct(BTreeMap::from([(
            "geni_rspec_version".to_owned(),
            rspec_version(),
        )]));
        let outcome = self
            .call("Provision", vec![urns.clone(), self.creds(), version])
            .and_then(|_| {
                let args = vec![urns.clone(), self.creds(), s("geni_start"), empty()];
                self.call("PerformOperationalAction", args)
            })
            .and_then(|_| self.wait_ready(&urns));
        let deleted = self.call("Delete", vec![urns, self.creds(), empty()]);
        outcome.and(deleted).map(drop)
    }

    fn wait_ready(&mut self, urns: &Value) -> Result<Value, String> {
        let started = Instant::now();
        loop {
            let status = self.call("Status", vec![urns.clone(), self.creds(), empty()])?;
            let state = geni_xmlrpc::member(&status, "geni_slivers")
                .and_then(|list| match list {
                    Value::Array(items) => items.first(),
                    _ => None,
                })
                .and_then(|sliver| geni_xmlrpc::member(sliver, "geni_operational_status"))
                .and_then(geni_xmlrpc::as_str)
                .unwrap_or_default();
            match state {
                "geni_ready" => return Ok(status),
                "geni_failed" => return Err("Status: the sliver failed".into()),
                _ if started.elapsed() > self.options.ready_timeout => {
                    let waited = started.elapsed();
                    return Err(format!("Status: still {state} after {waited:?}"));
                }
                _ => std::thread::sleep(self.options.poll_interval),
            }
        }
    }

    fn creds(&self) -> Value {
        credentials(&self.options.credential)
    }

    /// Calls `method`, records its latency, and returns the envelope's
    /// value when `geni_code` is 0.
    fn call(&mut self, method: &'static str, params: Vec<Value>) -> Result<Value, String> {
        let started = Instant::now();
        let reply = self.client.call(method, &params);
        self.report
            .methods
            .entry(method)
            .or_default()
            .push(started.elapsed());
        answer_value(method, reply)
    }
}

/// The value of a call's answer when `geni_code` is 0, else why not.
fn answer_value(
    method: &str,
    reply: Result<geni_xmlrpc::Reply, ClientError>,
) -> Result<Value, String> {
    let envelope = match reply {
        Ok(Ok(envelope)) => envelope,
        Ok(Err(fault)) => return Err(format!("{method}: fault {fault:?}")),
        Err(error) => return Err(format!("{method}: {error}")),
    };
    let code = geni_xmlrpc::member(&envelope, "code")
        .and_then(|code| geni_xmlrpc::member(code, "geni_code"))
        .and_then(geni_xmlrpc::as_int);
    if code != Some(0) {
        let output = geni_xmlrpc::member(&envelope, "output")
            .and_then(geni_xmlrpc::as_str)
            .unwrap_or_default();
        return Err(format!("{method}: geni_code {code:?}: {output}"));
    }
    Ok(geni_xmlrpc::member(&envelope, "value")
        .cloned()
        .unwrap_or_else(empty))
}

/// The credentials argument holding one SFA credential.
fn credentials(credential: &str) -> Value {
    Value::Array(vec![Value::Struct(BTreeMap::from([
        ("geni_type".to_owned(), s("geni_sfa")),
        ("geni_version".to_owned(), s("3")),
        ("geni_value".to_owned(), s(credential)),
    ]))])
}

/// `geni_rspec_version` GENI 3.
fn rspec_version() -> Value {
    Value::Struct(BTreeMap::from([
        ("type".to_owned(), s("GENI")),
        ("version".to_owned(), s("3")),
    ]))
}

/// The first sliver URN of an Allocate value.
fn first_sliver(value: &Value) -> Result<String, String> {
    let Some(Value::Array(slivers)) = geni_xmlrpc::member(value, "geni_slivers") else {
        return Err("Allocate: no geni_slivers".into());
    };
    slivers
        .first()
        .and_then(|sliver| geni_xmlrpc::member(sliver, "geni_sliver_urn"))
        .and_then(geni_xmlrpc::as_str)
        .map(str::to_owned)
        .ok_or_else(|| "Allocate: no sliver URN".into())
}

/// A request for one unbound VM of `sliver_type` named `client_id`.
fn request(sliver_type: &str, client_id: &str) -> String {
    format!(
        "<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" type=\"request\"><node client_id=\"{client_id}\" exclusive=\"false\"><sliver_type name=\"{sliver_type}\"/></node></rspec>"
    )
}

fn s(text: &str) -> Value {
    Value::String(text.to_owned())
}

fn empty() -> Value {
    Value::Struct(BTreeMap::new())
}
