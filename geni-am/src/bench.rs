//! The load generator behind `geni-am bench`: N concurrent clients, each
//! on its own TLS connection (kept alive, or a new one per call), run full
//! AM API v3 lifecycles (Allocate → Provision → `geni_start` → Status until
//! `geni_ready` → Delete) or GetVersion calls against a running aggregate,
//! or fill it with many provisioned slivers ([`populate`]); every call's
//! latency is recorded per method ([`stats`]), with an open load how late
//! each lifecycle started after its slot, and the run's rate and the
//! client's CPU time ([`cpu`]) measured. The clients run as threads
//! of this process or spread over several processes ([`processes`], which
//! read each other's [`wire`] lines).

pub mod cpu;
pub mod populate;
pub mod processes;
mod session;
pub mod stats;
pub mod wire;

use crate::client::{Client, ClientError};
use geni_xmlrpc::Value;
pub use session::ALLOCATE_NO_ROOM;
use session::{Session, answer_value, credentials, rspec_version};
use stats::Latencies;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant, SystemTime};

/// What each client does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// This many full lifecycles.
    Lifecycles(usize),
    /// This many GetVersion calls.
    GetVersion(usize),
    /// This many provisioned slivers, made by all clients together.
    Populate(usize),
}

impl Workload {
    /// What one unit of work is called in the report.
    pub fn unit(self) -> &'static str {
        match self {
            Workload::Lifecycles(_) => "lifecycles",
            Workload::GetVersion(_) => "GetVersion calls",
            Workload::Populate(_) => "slivers",
        }
    }

    /// What the rate is counted in.
    pub fn rate_unit(self) -> &'static str {
        match self {
            Workload::Lifecycles(_) => "lifecycles/s",
            Workload::GetVersion(_) => "calls/s",
            Workload::Populate(_) => "slivers/s",
        }
    }

    /// What `clients` clients do, for the report's first line.
    pub fn describe(self, clients: usize) -> String {
        match self {
            Workload::Lifecycles(count) | Workload::GetVersion(count) => {
                format!("{clients} clients x {count} {}", self.unit())
            }
            Workload::Populate(count) => format!("{clients} clients making {count} slivers"),
        }
    }
}

/// A slice to run lifecycles or allocate in, with a credential for it.
#[derive(Debug, Clone)]
pub struct SliceCredential {
    /// The slice URN.
    pub urn: String,
    /// The slice credential (XML).
    pub credential: String,
}

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
    /// The slice the lifecycles run in unless `slices` spreads them; its
    /// credential is also the one a run lists the advertisement with.
    pub slice: SliceCredential,
    /// The sliver type requested.
    pub sliver_type: String,
    /// Concurrent clients.
    pub clients: usize,
    /// The number of the first client; a client's number names its node
    /// (`bench{n}`) and picks its slice among `slices`: the client
    /// processes of one run number their clients apart.
    pub first_client: usize,
    /// What each client does.
    pub workload: Workload,
    /// A new TLS connection for every call instead of one kept alive.
    pub new_connection: bool,
    /// Longest wait for `geni_ready`, and for room while Allocate is refused.
    pub ready_timeout: Duration,
    /// Pause between Status polls.
    pub poll_interval: Duration,
    /// Lifecycles per second offered by all the clients together, when
    /// the load is open ([`session`] paces each client's starts).
    pub rate: Option<f64>,
    /// The slices a populate run spreads its slivers over, or a lifecycle
    /// run its clients (client i in slice i mod their number); none: every
    /// client's lifecycles run in `slice`.
    pub slices: Vec<SliceCredential>,
    /// Nodes per Allocate of a populate run.
    pub nodes_per_request: usize,
}

/// What a run measured.
#[derive(Debug, Default)]
pub struct Report {
    /// Latencies per AM API method; Allocates refused for no room apart,
    /// under [`ALLOCATE_NO_ROOM`].
    pub methods: BTreeMap<String, Latencies>,
    /// Lifecycles that completed, or GetVersion calls that succeeded.
    pub completed: usize,
    /// Why the others failed (one line each).
    pub failures: Vec<String>,
    /// Allocates refused for no room and sent again.
    pub no_room_retries: usize,
    /// How late each lifecycle of an open load (`--rate`) started after
    /// its slot in the schedule: near zero while the aggregate keeps up,
    /// growing while it is behind (empty without a rate, which a run over
    /// several client processes does not take).
    pub lags: Latencies,
    /// TLS connections the clients opened.
    pub connections: u64,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// When the clients started and when the last one ended, by the
    /// system clock: the client processes of a `--processes` run are
    /// timed from the first one's start to the last one's end, their own
    /// start-up left out.
    pub window: Option<(SystemTime, SystemTime)>,
    /// CPU time the client side used during the run, when known.
    pub client_cpu: Option<Duration>,
    /// Client processes (1 when the clients ran as threads of this one).
    pub processes: usize,
}

impl Report {
    /// Completed units of work per second of wall time.
    pub fn rate(&self) -> f64 {
        self.completed as f64 / self.elapsed.as_secs_f64().max(f64::EPSILON)
    }

    /// Calls made, refused and failed ones included.
    pub fn calls(&self) -> usize {
        self.methods.values().map(Latencies::count).sum()
    }

    fn merge(&mut self, other: Report) {
        for (method, latencies) in other.methods {
            self.methods.entry(method).or_default().extend(latencies);
        }
        self.completed += other.completed;
        self.failures.extend(other.failures);
        self.no_room_retries += other.no_room_retries;
        self.lags.extend(other.lags);
        self.connections += other.connections;
        self.window = match (self.window, other.window) {
            (Some((start, end)), Some((other_start, other_end))) => {
                Some((start.min(other_start), end.max(other_end)))
            }
            (window, None) | (None, window) => window,
        };
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
    /// A client process could not be started or did not report.
    #[error("client process: {0}")]
    Process(String),
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
        .map_err(|failure| BenchError::Advertisement(failure.into()))?;
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

/// The calls of client number `index`, on `client`, in a run that
/// started at `started`; the clients of a populate run take its requests
/// from `next`.
fn run_client(
    index: usize,
    client: &mut Client,
    options: &BenchOptions,
    next: &AtomicUsize,
    started: Instant,
) -> Report {
    let mut session = Session::new(index, client, options);
    match options.workload {
        Workload::Lifecycles(count) => session.lifecycles(index, count, started),
        Workload::GetVersion(count) => session.getversion(count),
        Workload::Populate(slivers) => populate::fill(&mut session, slivers, next),
    }
    session.into_report()
}

/// Runs `options.clients` clients as threads of this process and gathers
/// what they measured, with the CPU time this process used meanwhile.
pub fn run(options: &BenchOptions) -> Result<Report, BenchError> {
    let clients = (0..options.clients)
        .map(|_| {
            let ca = options.ca.as_deref();
            Client::new(&options.url, &options.cert, &options.key, ca)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let cpu_before = cpu::used();
    let started = Instant::now();
    let started_at = SystemTime::now();
    let next = AtomicUsize::new(0);
    let mut report = std::thread::scope(|scope| {
        let handles: Vec<_> = clients
            .into_iter()
            .enumerate()
            .map(|(i, mut client)| {
                let index = options.first_client + i;
                let next = &next;
                scope.spawn(move || run_client(index, &mut client, options, next, started))
            })
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
    report.window = Some((started_at, started_at + report.elapsed));
    report.client_cpu = cpu::since(cpu_before);
    report.processes = 1;
    Ok(report)
}
