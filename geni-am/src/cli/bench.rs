//! `geni-am bench --config FILE`: runs the load generator ([`crate::bench`])
//! against the running aggregate of a configuration — lifecycles, or
//! GetVersion calls with `--getversion`; on kept-alive connections or a new
//! one per call with `--new-connection`; the lifecycles in one slice or
//! spread over `--slices` slices of their own; in this process or spread over
//! `--processes` copies of it; or fills it with `--populate` provisioned
//! slivers in slices of its own — and prints per-method latency percentiles,
//! the rate, how late an open load (`--rate`) started its lifecycles, the
//! connections opened and the client's CPU use. The client
//! files default to the ones `geni-am dev init` writes beside the
//! configuration.

use crate::bench::{
    BenchError, BenchOptions, Report, SliceCredential, Workload, advertised_sliver_type, cpu,
    processes, run, wire,
};
use crate::cli::dev::pki::{self, AUTHORITY, SLICE};
use crate::config::Config;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

/// Arguments of `geni-am bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The configuration of the running aggregate (its public URL is called).
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// Concurrent clients, each on its own connection.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub clients: usize,
    /// Lifecycles each client runs.
    #[arg(
        long,
        value_name = "M",
        default_value_t = 10,
        conflicts_with_all = ["getversion", "populate"]
    )]
    pub lifecycles: usize,
    /// Lifecycles per second offered by all the clients together (an open
    /// load): client i starts its k-th lifecycle (k × clients + i) / R
    /// seconds after the run's start, or at once when it is behind that;
    /// without it each client starts its next lifecycle as soon as its last
    /// one ended, so the offered load follows the answers' latency. The
    /// report says how late the lifecycles started after their slots: near
    /// zero while the aggregate keeps up.
    #[arg(long, value_name = "R", conflicts_with_all = ["getversion", "populate", "processes"])]
    pub rate: Option<f64>,
    /// Slices the lifecycles are spread over, as experimenters each work
    /// in slices of their own: client i runs in slice `bench{i mod N}`, its
    /// credential issued by the development authority beside the
    /// configuration. With 1 every client runs in `--slice`, with
    /// `--credential`.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        conflicts_with_all = ["getversion", "populate"]
    )]
    pub slices: usize,
    /// Call GetVersion instead of running lifecycles, `--calls` times per client.
    #[arg(long)]
    pub getversion: bool,
    /// Fill the aggregate with this many provisioned slivers instead:
    /// Allocates of `--nodes-per-request` unbound nodes into slices
    /// `populate0`, `populate1`… of at most `--slivers-per-slice` (their
    /// credentials issued by the development authority beside the
    /// configuration), each Provisioned at once, then Status until no
    /// provision job is pending. The slivers stay.
    #[arg(long, value_name = "N", conflicts_with_all = ["getversion", "processes"])]
    pub populate: Option<usize>,
    /// Nodes per Allocate of `--populate`.
    #[arg(long, value_name = "K", default_value_t = 500, requires = "populate")]
    pub nodes_per_request: usize,
    /// Most slivers per slice of `--populate` (the aggregate's
    /// `max_slivers_per_slice` must allow as many).
    #[arg(long, value_name = "N", default_value_t = 1000, requires = "populate")]
    pub slivers_per_slice: usize,
    /// GetVersion calls each client makes (with `--getversion`).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1000,
        requires = "getversion"
    )]
    pub calls: usize,
    /// Open a new TLS connection for every call (as omni does) instead of
    /// keeping one alive per client.
    #[arg(long)]
    pub new_connection: bool,
    /// Client processes the clients are spread over (this binary run again),
    /// so that the client is not the limit.
    #[arg(long, value_name = "P", default_value_t = 1)]
    pub processes: usize,
    /// Client certificate chain [default: alice-cert.pem beside the configuration].
    #[arg(long, value_name = "FILE")]
    pub cert: Option<PathBuf>,
    /// Client key [default: alice-key.pem beside the configuration].
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// CA file for the server certificate [default: ca-cert.pem beside the configuration].
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,
    /// Slice credential [default: demo-slice-cred.xml beside the configuration].
    #[arg(long, value_name = "FILE")]
    pub credential: Option<PathBuf>,
    /// Slice URN the credential is for [default: the development slice].
    #[arg(long, value_name = "URN")]
    pub slice: Option<String>,
    /// Sliver type requested [default: the first one the aggregate
    /// advertises on an available node].
    #[arg(long, value_name = "NAME")]
    pub sliver_type: Option<String>,
    /// Seconds a sliver gets to become ready, and an Allocate refused for
    /// want of room to be accepted.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub ready_timeout: u64,
    /// Milliseconds between Status polls.
    #[arg(long, value_name = "MS", default_value_t = 20)]
    pub poll_ms: u64,
    /// The number of the first client (a client process of `--processes`).
    #[arg(long, value_name = "N", default_value_t = 0, hide = true)]
    pub first_client: usize,
    /// Print raw latencies as JSON lines for a parent `--processes` run.
    #[arg(long, hide = true)]
    pub emit_samples: bool,
}

impl BenchArgs {
    /// Runs the load and prints the report; exit status 1 when any
    /// lifecycle or call failed, 2 when the run could not start.
    pub fn run(self) -> ExitCode {
        let outcome = self.options().and_then(|options| {
            // Every certificate this command issues (the slices of a
            // populate run or of `--slices`) is signed by now, and no
            // client thread has started: from here the clients only
            // handshake and call, and on OpenSSL 3.0 each handshake
            // decodes the aggregate's certificate without building
            // provider decoders, as `serve` does (key_methods), so that
            // the client's own cost weighs less on a new-connection run
            // sharing the aggregate's cores.
            geni_credentials::key_methods::use_builtin_key_methods();
            let report = if self.processes > 1 {
                processes::run(self.children(&options)?)?
            } else {
                run(&options)?
            };
            Ok((options, report))
        });
        let (options, report) = match outcome {
            Ok(done) => done,
            Err(error) => {
                eprintln!("geni-am bench: {error:#}");
                return ExitCode::from(2);
            }
        };
        if self.emit_samples {
            if let Err(error) = wire::write(&report, &mut std::io::stdout().lock()) {
                eprintln!("geni-am bench: cannot write the samples: {error}");
                return ExitCode::from(2);
            }
        } else {
            print!("{}", render(&options, &report));
        }
        if report.failures.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    }

    fn credential_file(&self) -> PathBuf {
        self.beside(&self.credential, "demo-slice-cred.xml")
    }

    /// `given`, or the file `name` beside the configuration.
    fn beside(&self, given: &Option<PathBuf>, name: &str) -> PathBuf {
        let dir = self.config.parent().unwrap_or(Path::new("."));
        given.clone().unwrap_or_else(|| dir.join(name))
    }

    fn options(&self) -> anyhow::Result<BenchOptions> {
        let config = Config::load(&self.config)?;
        let credential_file = self.credential_file();
        let credential = std::fs::read_to_string(&credential_file).map_err(|e| {
            anyhow::anyhow!("cannot read credential {}: {e}", credential_file.display())
        })?;
        anyhow::ensure!(self.clients > 0, "--clients must be at least 1");
        anyhow::ensure!(self.slices > 0, "--slices must be at least 1");
        anyhow::ensure!(
            self.slices == 1 || self.slice.is_none(),
            "--slice names the one slice of every client; --slices {} makes slices of their own",
            self.slices
        );
        anyhow::ensure!(
            (1..=self.clients).contains(&self.processes),
            "--processes must be between 1 and --clients ({})",
            self.clients
        );
        if let Some(rate) = self.rate {
            anyhow::ensure!(
                rate.is_finite() && rate > 0.0,
                "--rate must be a positive number of lifecycles per second"
            );
        }
        let url = config.server.api_url(3);
        let cert = self.beside(&self.cert, "alice-cert.pem");
        let key = self.beside(&self.key, "alice-key.pem");
        let ca = self.beside(&self.ca, "ca-cert.pem");
        let workload = match self.populate {
            _ if self.getversion => Workload::GetVersion(self.calls),
            Some(slivers) => Workload::Populate(slivers),
            None => Workload::Lifecycles(self.lifecycles),
        };
        let sliver_type = match (&self.sliver_type, workload) {
            (Some(name), _) => name.clone(),
            (None, Workload::GetVersion(_)) => String::new(),
            (None, Workload::Lifecycles(_) | Workload::Populate(_)) => {
                advertised_sliver_type(&url, &cert, &key, Some(&ca), &credential)?
            }
        };
        let slices = match workload {
            Workload::Populate(slivers) => self.populate_slices(slivers)?,
            Workload::Lifecycles(_) if self.slices > 1 => {
                self.issue_slices((0..self.slices).map(|n| format!("bench{n}")))?
            }
            Workload::Lifecycles(_) | Workload::GetVersion(_) => Vec::new(),
        };
        Ok(BenchOptions {
            url,
            cert,
            key,
            ca: Some(ca),
            slice: SliceCredential {
                urn: self
                    .slice
                    .clone()
                    .unwrap_or_else(|| format!("urn:publicid:IDN+{AUTHORITY}+slice+{SLICE}")),
                credential,
            },
            sliver_type,
            clients: self.clients,
            first_client: self.first_client,
            workload,
            new_connection: self.new_connection,
            ready_timeout: Duration::from_secs(self.ready_timeout),
            poll_interval: Duration::from_millis(self.poll_ms),
            rate: self.rate,
            slices,
            nodes_per_request: self.nodes_per_request,
        })
    }

    /// The slices a `--populate` run of `slivers` needs, each with a
    /// credential issued by the development authority beside the
    /// configuration: as many as keep every slice within
    /// `--slivers-per-slice` when whole requests go to a slice.
    fn populate_slices(&self, slivers: usize) -> anyhow::Result<Vec<SliceCredential>> {
        anyhow::ensure!(
            (1..=self.slivers_per_slice).contains(&self.nodes_per_request),
            "--nodes-per-request must be between 1 and --slivers-per-slice ({})",
            self.slivers_per_slice
        );
        let requests = slivers.div_ceil(self.nodes_per_request);
        let per_slice = self.slivers_per_slice / self.nodes_per_request;
        self.issue_slices((0..requests.div_ceil(per_slice)).map(|n| format!("populate{n}")))
    }

    /// Slices `names`, each with a credential issued by the development
    /// authority beside the configuration.
    fn issue_slices(
        &self,
        names: impl Iterator<Item = String>,
    ) -> anyhow::Result<Vec<SliceCredential>> {
        let dir = self.config.parent().unwrap_or(Path::new("."));
        Ok(pki::slice_credentials(dir, names)?
            .into_iter()
            .map(|(urn, credential)| SliceCredential { urn, credential })
            .collect())
    }

    /// The client processes of a `--processes` run: this binary with the
    /// resolved options, the clients shared out and numbered apart.
    fn children(&self, options: &BenchOptions) -> Result<Vec<Command>, BenchError> {
        let exe = std::env::current_exe()
            .map_err(|e| BenchError::Process(format!("cannot find this program: {e}")))?;
        let mut first = options.first_client;
        let commands = (0..self.processes)
            .map(|number| {
                let clients = self.clients / self.processes
                    + usize::from(number < self.clients % self.processes);
                let mut command = Command::new(&exe);
                command
                    .arg("bench")
                    .arg("--config")
                    .arg(&self.config)
                    .arg("--cert")
                    .arg(&options.cert)
                    .arg("--key")
                    .arg(&options.key)
                    .arg("--credential")
                    .arg(self.credential_file())
                    .args(["--clients", &clients.to_string()])
                    .args(["--first-client", &first.to_string()])
                    .args(["--ready-timeout", &self.ready_timeout.to_string()])
                    .args(["--poll-ms", &self.poll_ms.to_string()])
                    .arg("--emit-samples");
                if let Some(ca) = &options.ca {
                    command.arg("--ca").arg(ca);
                }
                match options.workload {
                    Workload::Lifecycles(count) => command
                        .args(["--lifecycles", &count.to_string()])
                        .args(["--sliver-type", &options.sliver_type]),
                    Workload::GetVersion(count) => command
                        .arg("--getversion")
                        .args(["--calls", &count.to_string()]),
                    // Refused with `--processes` by the arguments.
                    Workload::Populate(count) => command.args(["--populate", &count.to_string()]),
                };
                if self.slices > 1 {
                    command.args(["--slices", &self.slices.to_string()]);
                } else {
                    command.args(["--slice", &options.slice.urn]);
                }
                if options.new_connection {
                    command.arg("--new-connection");
                }
                first += clients;
                command
            })
            .collect();
        Ok(commands)
    }
}

/// The report as text: one line per method, then the totals, how late an
/// open load's lifecycles started after their slots, the connections, the
/// client's CPU use and the failures.
pub fn render(options: &BenchOptions, report: &Report) -> String {
    let workload = options.workload;
    let mut out = format!(
        "{}{} against {}{}{}{}\n{:<26} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
        workload.describe(options.clients),
        // As many slices as there are clients at most are used.
        match (workload, options.slices.len().min(options.clients)) {
            (Workload::Lifecycles(_), slices @ 2..) => format!(" in {slices} slices"),
            _ => String::new(),
        },
        options.url,
        match report.processes {
            0 | 1 => String::new(),
            processes => format!(", {processes} client processes"),
        },
        if options.new_connection {
            ", a new connection per call"
        } else {
            ", connections kept alive"
        },
        options
            .rate
            .map(|rate| format!(", {rate} lifecycles/s offered"))
            .unwrap_or_default(),
        "method",
        "calls",
        "mean ms",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "max ms"
    );
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    for (method, l) in &report.methods {
        out += &format!(
            "{method:<26} {:>7} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1}\n",
            l.count(),
            ms(l.mean()),
            ms(l.percentile(50.0)),
            ms(l.percentile(90.0)),
            ms(l.percentile(99.0)),
            ms(l.percentile(100.0)),
        );
    }
    out += &format!(
        "{} {} completed, {} failed in {:.2} s: {:.2} {}\n",
        report.completed,
        workload.unit(),
        report.failures.len(),
        report.elapsed.as_secs_f64(),
        report.rate(),
        workload.rate_unit(),
    );
    if report.lags.count() > 0 {
        let lags = &report.lags;
        out += &format!(
            "lifecycles started behind their slot by p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms\n",
            ms(lags.percentile(50.0)),
            ms(lags.percentile(99.0)),
            ms(lags.percentile(100.0)),
        );
    }
    if let Workload::Lifecycles(_) | Workload::Populate(_) = workload {
        out += &format!(
            "{} Allocate calls refused for no room and sent again\n",
            report.no_room_retries
        );
    }
    out += &format!(
        "{} connections opened for {} calls\n",
        report.connections,
        report.calls()
    );
    out += &match report.client_cpu {
        Some(used) => cpu::verdict(used, report.elapsed, cpu::cores()) + "\n",
        None => "client CPU unknown (no /proc/self/stat)\n".to_owned(),
    };
    for failure in &report.failures {
        out += &format!("failed: {failure}\n");
    }
    out
}
