//! `geni-am serve --config FILE`: loads and validates the configuration,
//! binds the listening port (so a second process on a taken port stops
//! before it touches the store), builds the service ([`build`]: store with
//! migrations, backend, background jobs, the aggregate and the AM API
//! handlers) and runs the HTTPS server in the foreground until SIGTERM or
//! SIGINT. Logs go to standard error (filter with `RUST_LOG`, default `info`).

use crate::api::{Api, Endpoints};
use crate::config::Config;
use crate::core::Aggregate;
use crate::jobs;
use crate::server::{self, Dispatch};
use crate::service;
use crate::store::Store;
use anyhow::Context;
use clap::Args;
use geni_credentials::TrustStore;
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

/// Everything the running aggregate is made of, built from the configuration.
pub struct Service {
    /// The validated configuration.
    pub config: Config,
    /// The trust roots, shared by TLS and credential checks.
    pub trust: Arc<TrustStore>,
    /// What answers the calls.
    pub dispatch: Arc<dyn Dispatch>,
    /// The backend and background jobs (stopped when dropped).
    pub background: jobs::Running,
}

/// Builds the service from its configuration: opens the store (applying
/// migrations), starts the backend and jobs, and the AM API over them.
pub fn build(config: Config) -> anyhow::Result<Service> {
    let trust = server::load_trust(&config.server)?;
    let store = Store::open(&config.store.url, config.store.pool_size)
        .with_context(|| format!("store.url {}", config.store.url))?;
    let backend = service::backend::from_config(&config.backend, &config.aggregate.authority)
        .context("cannot build the backend")?;
    let background = jobs::launch(&config, store.clone(), backend)?;
    let mut identity = config.aggregate.to_core();
    identity.ssh = config.logins.to_core();
    let aggregate = Aggregate::new(store, identity)?;
    let endpoints = Endpoints {
        v2: config.server.api_url(2),
        v3: config.server.api_url(3),
    };
    let dispatch = Arc::new(Api::new(aggregate, Arc::clone(&trust), endpoints));
    Ok(Service {
        config,
        trust,
        dispatch,
        background,
    })
}

fn serve(args: &ServeArgs) -> anyhow::Result<()> {
    let config = Config::load(&args.config)?;
    let bound = server::bind(&config.server, server::load_trust(&config.server)?)?;
    let service = build(config)?;
    tracing::info!(
        listen = %service.config.server.listen,
        url = %service.config.server.api_url(3),
        "geni-am serving"
    );
    bound.run(service.dispatch).context("the server stopped")?;
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
