//! `geni-am bench --config FILE --clients N --lifecycles M`: runs the load
//! generator ([`crate::bench`]) against the running aggregate of a
//! configuration and prints per-method latency percentiles and
//! lifecycles per second. The client files default to the ones
//! `geni-am dev init` writes beside the configuration.

use crate::bench::{BenchOptions, Report, advertised_sliver_type, run};
use crate::cli::dev::pki::{AUTHORITY, SLICE};
use crate::config::Config;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
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
    #[arg(long, value_name = "M", default_value_t = 10)]
    pub lifecycles: usize,
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
    /// Seconds a sliver gets to become ready.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub ready_timeout: u64,
    /// Milliseconds between Status polls.
    #[arg(long, value_name = "MS", default_value_t = 20)]
    pub poll_ms: u64,
}

impl BenchArgs {
    /// Runs the load and prints the report; exit status 1 when any
    /// lifecycle failed, 2 when the run could not start.
    pub fn run(self) -> ExitCode {
        let options = match self.options() {
            Ok(options) => options,
            Err(error) => {
                eprintln!("geni-am bench: {error:#}");
                return ExitCode::from(2);
            }
        };
        match run(&options) {
            Ok(report) => {
                print!("{}", render(&options, &report));
                if report.failures.is_empty() {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                }
            }
            Err(error) => {
                eprintln!("geni-am bench: {error}");
                ExitCode::from(2)
            }
        }
    }

    fn options(&self) -> anyhow::Result<BenchOptions> {
        let config = Config::load(&self.config)?;
        let dir = self.config.parent().unwrap_or(Path::new("."));
        let or_beside =
            |given: &Option<PathBuf>, name: &str| given.clone().unwrap_or_else(|| dir.join(name));
        let credential_file = or_beside(&self.credential, "demo-slice-cred.xml");
        let credential = std::fs::read_to_string(&credential_file).map_err(|e| {
            anyhow::anyhow!("cannot read credential {}: {e}", credential_file.display())
        })?;
        anyhow::ensure!(self.clients > 0, "--clients must be at least 1");
        let url = config.server.api_url(3);
        let cert = or_beside(&self.cert, "alice-cert.pem");
        let key = or_beside(&self.key, "alice-key.pem");
        let ca = or_beside(&self.ca, "ca-cert.pem");
        let sliver_type = match &self.sliver_type {
            Some(name) => name.clone(),
            None => advertised_sliver_type(&url, &cert, &key, Some(&ca), &credential)?,
        };
        Ok(BenchOptions {
            url,
            cert,
            key,
            ca: Some(ca),
            slice_urn: self
                .slice
                .clone()
                .unwrap_or_else(|| format!("urn:publicid:IDN+{AUTHORITY}+slice+{SLICE}")),
            credential,
            sliver_type,
            clients: self.clients,
            lifecycles: self.lifecycles,
            ready_timeout: Duration::from_secs(self.ready_timeout),
            poll_interval: Duration::from_millis(self.poll_ms),
        })
    }
}

/// The report as text: one line per method, then the totals and failures.
pub fn render(options: &BenchOptions, report: &Report) -> String {
    let mut out = format!(
        "{} clients x {} lifecycles against {}\n{:<26} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
        options.clients,
        options.lifecycles,
        options.url,
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
        "{} lifecycles completed, {} failed in {:.2} s: {:.2} lifecycles/s\n",
        report.completed,
        report.failures.len(),
        report.elapsed.as_secs_f64(),
        report.lifecycles_per_second()
    );
    for failure in &report.failures {
        out += &format!("failed: {failure}\n");
    }
    out
}
