//! `geni-am serve --config FILE`: loads and validates the configuration,
//! binds the listening port (so a second process on a taken port stops
//! before it touches the store), builds the service
//! ([`crate::service::build`]: store with migrations, backend, background
//! jobs, the aggregate and the request handler) and runs the HTTPS server
//! in the foreground until SIGTERM or SIGINT, with a thread that hands
//! memory freed by bursts of calls back to the system
//! ([`crate::service::memory`]), and the operator's endpoint (metrics,
//! health, dashboard; [`crate::operator`]) on a thread of its own. Logs go
//! to standard error as text or JSON (`[log]`; `RUST_LOG` overrides the
//! configured level).
//!
//! Under systemd (`deploy/geni-am.service`, `Type=notify`) it tells the
//! service manager when it is ready, reloading and stopping, and keeps its
//! watchdog fed while the server answers ([`systemd`]); SIGHUP re-reads
//! the trust roots without a restart ([`reload`]).

mod reload;
mod systemd;

use crate::config::{Config, LogConfig, LogFormat};
use crate::operator;
use crate::server;
use crate::service;
use anyhow::Context;
use clap::Args;
use std::io::IsTerminal;
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
        // First of all, before any thread: returns only when the process
        // already runs without the allocator's thread caches, the
        // environment sets them otherwise, or it cannot.
        if let Err(error) = service::memory::restart_without_thread_caches() {
            eprintln!("geni-am serve: running with glibc's thread caches: {error}");
        }
        // Before any thread: every new connection's handshake reads the
        // client's certificates. Not for the other commands, some of which
        // sign certificates with keys read from files, which OpenSSL 3.0
        // cannot do with the built-in methods (key_methods).
        let builtin_keys = geni_credentials::key_methods::use_builtin_key_methods();
        // Before any thread, and before SQLite is first used.
        if !crate::store::without_sqlite_memory_statistics() {
            eprintln!("geni-am serve: SQLite counts its memory (it was set up already)");
        }
        let config = match Config::load(&self.config) {
            Ok(config) => config,
            Err(error) => {
                eprintln!("geni-am serve: {error}");
                return ExitCode::FAILURE;
            }
        };
        init_logging(&config.log);
        if builtin_keys {
            // Said once, so that an operator reading the log knows how
            // this OpenSSL routes key operations (docs/PERFORMANCE.md,
            // "Handshakes without provider decoders").
            tracing::info!(
                openssl = openssl::version::version(),
                "RSA and EC keys use OpenSSL's built-in methods, not provider decoders"
            );
        }
        match serve(config) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("geni-am serve: {error:#}");
                ExitCode::FAILURE
            }
        }
    }
}

fn serve(config: Config) -> anyhow::Result<()> {
    service::memory::bound_arenas();
    let trust = server::load_trust(&config.server)?;
    let bound = server::bind(&config.server, Arc::clone(&trust))?;
    let addr = bound.local_addr()?;
    let operator = match config.operator.enabled {
        true => Some(operator::bind(&config.operator)?),
        false => None,
    };
    let service = service::build(config, trust)?;
    let _operator = match operator {
        Some(operator) => Some(operator.spawn(service.sources())?),
        None => None,
    };
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
    // The ports are bound and the store open: connections from now on wait
    // at most until the server below starts answering them.
    systemd::ready();
    systemd::start_watchdog(addr).context("cannot start the systemd watchdog")?;
    let outcome = bound.run(service.handler);
    systemd::stopping();
    outcome.context("the server stopped")?;
    tracing::info!("geni-am stopped");
    Ok(())
}

/// Writes the log to standard error in the configured format: one line
/// per event, the fields of the call's span (request id, method, caller,
/// slice) with every event of a call.
fn init_logging(log: &LogConfig) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(&log.level));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    let _ = match log.format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
    };
}
