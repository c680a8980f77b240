//! `geni-am serve --config FILE`: loads and validates the configuration,
//! binds the listening port (so a second process on a taken port stops
//! before it touches the store), builds the service
//! ([`crate::service::build`]: store with migrations, backend, background
//! jobs, the aggregate and the request handler) and runs the HTTPS server
//! in the foreground until SIGTERM or SIGINT, with a thread that hands
//! memory freed by bursts of calls back to the system
//! ([`crate::service::memory`]). Logs go to standard error
//! (filter with `RUST_LOG`, default `info`).

use crate::config::Config;
use crate::server;
use crate::service;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

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
    let bound = server::bind(&config.server, server::load_trust(&config.server)?)?;
    let service = service::build(config)?;
    service::memory::start_trimmer().context("cannot start the memory trimmer")?;
    tracing::info!(
        listen = %service.config.server.listen,
        url = %service.config.server.api_url(3),
        "geni-am serving"
    );
    bound.run(service.handler).context("the server stopped")?;
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
