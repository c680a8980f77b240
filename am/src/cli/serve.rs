//! `geni-am serve --config FILE`: loads and validates the configuration,
//! builds the service from it ([`build`]) and runs the HTTPS server in the
//! foreground until SIGTERM or SIGINT. Logs go to standard error (filter
//! with `RUST_LOG`, default `info`).

use crate::config::Config;
use crate::server::{self, ApiVersion, Dispatch, ReplyFuture};
use crate::xmlrpc::{Call, Fault, Value, fault_code};
use anyhow::Context;
use clap::Args;
use credentials::trust::{TrustStore, VerifiedChain};
use std::collections::BTreeMap;
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
}

/// Builds the service from its configuration.
pub fn build(config: Config) -> anyhow::Result<Service> {
    let trust = server::load_trust(&config.server)?;
    let dispatch = Arc::new(VersionOnly::new(&config));
    Ok(Service {
        config,
        trust,
        dispatch,
    })
}

fn serve(args: &ServeArgs) -> anyhow::Result<()> {
    let config = Config::load(&args.config)?;
    let service = build(config)?;
    tracing::info!(
        listen = %service.config.server.listen,
        url = %service.config.server.api_url(3),
        "geni-am serving"
    );
    server::run(&service.config.server, service.trust, service.dispatch)
        .context("the server stopped")?;
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

/// Answers GetVersion (with the configured endpoint URLs) and nothing
/// else; the AM API handlers take its place.
struct VersionOnly {
    versions: Value,
}

impl VersionOnly {
    fn new(config: &Config) -> VersionOnly {
        let urls = [ApiVersion::V2, ApiVersion::V3].map(|v| {
            (
                v.number().to_string(),
                Value::String(config.server.api_url(v.number())),
            )
        });
        VersionOnly {
            versions: Value::Struct(BTreeMap::from(urls)),
        }
    }
}

impl Dispatch for VersionOnly {
    fn dispatch(
        &self,
        version: ApiVersion,
        _caller: Arc<VerifiedChain>,
        call: Call,
    ) -> ReplyFuture {
        let reply = if call.method == "GetVersion" {
            let api = Value::Integer(version.number() as i32);
            let value = BTreeMap::from([
                ("geni_api".to_owned(), api.clone()),
                ("geni_api_versions".to_owned(), self.versions.clone()),
            ]);
            let code = BTreeMap::from([("geni_code".to_owned(), Value::Integer(0))]);
            Ok(Value::Struct(BTreeMap::from([
                ("geni_api".to_owned(), api),
                ("code".to_owned(), Value::Struct(code)),
                ("value".to_owned(), Value::Struct(value)),
                ("output".to_owned(), Value::String(String::new())),
            ])))
        } else {
            Err(Fault::new(
                fault_code::METHOD_NOT_FOUND,
                format!("method {} is not served by this aggregate", call.method),
            ))
        };
        Box::pin(std::future::ready(reply))
    }
}
