//! `geni-am serve --config FILE`: loads and validates the configuration,
//! binds the listening port (so a second process on a taken port stops
//! before it touches the store), builds the service
//! ([`crate::service::build`]: store with migrations, backend, background
//! jobs, the aggregate and the request handler) and runs the HTTPS server
//! in the foreground until SIGTERM or SIGINT, with a thread that hands
//! memory freed by bursts of calls back to the system
//! ([`crate::service::memory`]). Logs go to standard error
//! (filter with `RUST_LOG`, default `info`).
//!
//! Under systemd (`deploy/geni-am.service`, `Type=notify`) it tells the
//! service manager when it is ready, reloading and stopping, and keeps its
//! watchdog fed while the server answers ([`systemd`]); SIGHUP re-reads
//! the trust roots without a restart ([`reload`]).

mod reload;
mod systemd;

use crate::config::Config;
use crate::server;
use crate::service;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// Arguments of `geni-am serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The configuration file (see deploy/geni-am.example.toml).
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
}

impl ServeArgs {
    /// Runs the aggregate until it is stopped.
    pub fn run(self) -> ExitCode {
        init_logging();
        match serve(&self) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("geni-am serve: {error:#}");
                ExitCode::FAILURE
            }
        }
    }
}

fn serve(args: &ServeArgs) -> anyhow::Result<()> {
    let config = Config::load(&args.config)?;
    let trust = server::load_trust(&config.server)?;
    let bound = server::bind(&config.server, Arc::clone(&trust))?;
    let addr = bound.local_addr()?;
    let service = service::build(config, trust)?;
    service::memory::start_trimmer().context("cannot start the memory trimmer")?;
    reload::start(
        Arc::clone(&service.trust),
        service.config.server.trust_roots.clone(),
    )
    .context("cannot handle SIGHUP")?;
    tracing::info!(
        listen = %service.config.server.listen,
        url = %service.config.server.api_url(3),
        "geni-am serving"
    );
    // The port is bound and the store open: connections from now on wait
    // at most until the server below starts answering them.
    systemd::ready();
    systemd::start_watchdog(addr).context("cannot start the systemd watchdog")?;
    let outcome = bound.run(service.handler);
    systemd::stopping();
    outcome.context("the server stopped")?;
    tracing::info!("geni-am stopped");
    Ok(())
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
