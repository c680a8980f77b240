//! The aggregate's configuration: one TOML file (every key documented in
//! `deploy/geni-am.example.toml`), read with serde refusing unknown keys and
//! validated at start, so a mistake stops the service with a message naming
//! the file and the key. Relative paths in the file are relative to the
//! file's directory.
//!
//! Sections: `[server]` (listening, TLS files, trust roots, limits),
//! `[aggregate]` (identity, lease policy, the default sliver type, whether
//! the advertisement is public), `[store]` (SQLite file or PostgreSQL URL,
//! retention), `[backend]` (`kind`, the `[backend.sim]` simulated
//! cloud and the `[backend.opennebula]` driver), `[jobs]` (background
//! workers, see [`jobs`]), `[logins]` (the SSH port of the VMs and an
//! optional SSH gateway), `[operator]` (the operator's HTTP endpoint) and
//! `[log]` (see [`operator`]).
//!
//! Plain data: the layers that use a section take its type, or are given
//! what they need by the composition root (`service`); nothing here
//! imports them.

mod jobs;
pub mod operator;
mod syntax;
mod tls;
mod validate;

pub use jobs::{JobsConfig, JobsConfigError};
pub use operator::{LogConfig, LogFormat, OperatorConfig};
pub use tls::{TlsFileError, TlsIdentity};

use geni_am_backend::sim::config::SimConfig;
use geni_am_opennebula::config::OneConfig;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Largest configuration file read.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// The whole configuration file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `[server]`: how clients reach the aggregate.
    pub server: ServerConfig,
    /// `[aggregate]`: who the aggregate is and its lease policy.
    pub aggregate: AggregateConfig,
    /// `[store]`: where state lives.
    #[serde(default)]
    pub store: StoreConfig,
    /// `[backend]`: the cloud behind the aggregate.
    pub backend: BackendConfig,
    /// `[jobs]`: the background workers (every key has a default).
    #[serde(default)]
    pub jobs: JobsConfig,
    /// `[logins]`: how experimenters reach their nodes (every key has a
    /// default).
    #[serde(default)]
    pub logins: LoginsConfig,
    /// `[operator]`: the operator's endpoint (every key has a default).
    #[serde(default)]
    pub operator: OperatorConfig,
    /// `[log]`: how the log is written (every key has a default).
    #[serde(default)]
    pub log: LogConfig,
}

/// The `[logins]` section.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LoginsConfig {
    /// The SSH port of the VMs.
    pub port: u16,
    /// Host name of an SSH gateway logins go through; none by default.
    pub gateway: Option<String>,
    /// The gateway's SSH port.
    pub gateway_port: u16,
}

impl Default for LoginsConfig {
    fn default() -> Self {
        Self {
            port: 22,
            gateway: None,
            gateway_port: 22,
        }
    }
}

/// The `[server]` section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// Socket address to listen on, e.g. `0.0.0.0:443` or `[::]:8443`.
    pub listen: String,
    /// Absolute base URL clients use (`https://am.example.org:8443`); the
    /// endpoints advertised by GetVersion are `<public_url>/am/3` and `/am/2`.
    pub public_url: String,
    /// PEM file with the server certificate, followed by its issuers.
    pub cert: PathBuf,
    /// PEM file with the server's private key.
    pub key: PathBuf,
    /// Directory of trusted root certificates (`*.pem`, `*.crt`, `*.cert`,
    /// `*.gid`), for client certificates and credentials alike.
    pub trust_roots: PathBuf,
    /// Largest request body accepted, in bytes.
    #[serde(default = "default_body_limit")]
    pub body_limit: usize,
    /// HTTP worker threads; 0 means one per CPU.
    #[serde(default)]
    pub workers: usize,
    /// Threads each HTTP worker runs calls on (decoding, credentials, the
    /// store); a call waits for one when all are busy.
    #[serde(default = "default_call_threads")]
    pub call_threads: usize,
    /// Seconds an idle keep-alive connection stays open.
    #[serde(default = "default_keep_alive_secs")]
    pub keep_alive_secs: u64,
    /// Seconds calls in progress get to finish after SIGTERM/SIGINT.
    #[serde(default = "default_shutdown_timeout_secs")]
    pub shutdown_timeout_secs: u64,
    /// Seconds a client has to send a whole request, headers and body.
    #[serde(default = "default_request_timeout_secs")]
    pub request_timeout_secs: u64,
    /// Most client connections open at once; beyond it new ones are refused.
    #[serde(default = "default_max_connections")]
    pub max_connections: usize,
    /// Most connections open at once with one client certificate.
    #[serde(default = "default_max_connections_per_client")]
    pub max_connections_per_client: usize,
}

/// The `[aggregate]` section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AggregateConfig {
    /// The aggregate's authority (`am.example.org`); sliver URNs are
    /// `urn:publicid:IDN+<authority>+sliver+<id>`.
    pub authority: String,
    /// The aggregate manager URN, `urn:publicid:IDN+<authority>+authority+am`.
    pub urn: String,
    /// The component manager URN of the advertised resources,
    /// `urn:publicid:IDN+<authority>+authority+cm`.
    pub cm_urn: String,
    /// Seconds an allocated (not yet provisioned) sliver is held.
    #[serde(default = "default_allocation_timeout_secs")]
    pub allocation_timeout_secs: u64,
    /// Lease of a provisioned sliver when the request names no end time, in seconds.
    #[serde(default = "default_lease_secs")]
    pub default_lease_secs: u64,
    /// Longest lease granted from now, in seconds (never beyond the slice credential).
    #[serde(default = "default_max_lease_secs")]
    pub max_lease_secs: u64,
    /// Most slivers one slice may hold at this aggregate.
    #[serde(default = "default_max_slivers_per_slice")]
    pub max_slivers_per_slice: u32,
    /// Whether ListResources answers callers who present no credential
    /// (otherwise they are refused with FORBIDDEN).
    #[serde(default)]
    pub public_advertisement: bool,
    /// The sliver type a requested node without `<sliver_type>` gets; one
    /// of the backend's sliver types. Unset: the first one advertised.
    #[serde(default)]
    pub default_sliver_type: Option<String>,
}

/// The `[store]` section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// A SQLite file path, or a `postgres://` / `postgresql://` URL.
    #[serde(default = "default_store_url")]
    pub url: String,
    /// Most database connections held open.
    #[serde(default = "default_pool_size")]
    pub pool_size: u32,
    /// Days deleted slivers, their request documents and finished jobs
    /// are kept.
    #[serde(default = "default_retention_days")]
    pub retention_days: u32,
    /// Days events (the audit log) are kept.
    #[serde(default = "default_retention_days")]
    pub event_retention_days: u32,
    /// Seconds between two purges of what the retention lets go.
    #[serde(default = "default_purge_interval_secs")]
    pub purge_interval_secs: u64,
}

/// Which cloud the aggregate drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// The in-process simulated cloud (`[backend.sim]`).
    Sim,
    /// An OpenNebula cloud driven over its XML-RPC API (`[backend.opennebula]`).
    OpenNebula,
}

/// The `[backend]` section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackendConfig {
    /// `sim` or `opennebula`.
    pub kind: BackendKind,
    /// The simulated cloud, required when `kind = "sim"`.
    #[serde(default)]
    pub sim: Option<SimConfig>,
    /// The OpenNebula cloud, required when `kind = "opennebula"`.
    #[serde(default)]
    pub opennebula: Option<OneConfig>,
}

/// Why the configuration cannot be used; every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("{file}: cannot read the configuration: {source}")]
    Read {
        /// The configuration file.
        file: String,
        /// The operating system error.
        source: std::io::Error,
    },
    /// The file is larger than any sensible configuration.
    #[error("{file}: the configuration is larger than {MAX_FILE_BYTES} bytes")]
    TooLarge {
        /// The configuration file.
        file: String,
    },
    /// Not TOML, an unknown key, a missing key or a value of the wrong type.
    #[error("{file}: {message}")]
    Syntax {
        /// The configuration file.
        file: String,
        /// The TOML reader's message (line, column and key).
        message: String,
    },
    /// A value that cannot work.
    #[error("{file}: {key}: {problem}")]
    Invalid {
        /// The configuration file.
        file: String,
        /// Dotted path of the key, e.g. `server.listen`.
        key: String,
        /// What is wrong and what is expected.
        problem: String,
    },
}

impl Config {
    /// Reads, parses and validates the configuration file at `path`.
    /// Relative paths in it are resolved against its directory.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let file = path.display().to_string();
        let read = |source| ConfigError::Read {
            file: file.clone(),
            source,
        };
        if std::fs::metadata(path).map_err(read)?.len() > MAX_FILE_BYTES {
            return Err(ConfigError::TooLarge { file });
        }
        let text = std::fs::read_to_string(path).map_err(read)?;
        let base = path.parent().unwrap_or(Path::new("."));
        Config::from_text(&text, &file, base)
    }

    /// Parses and validates configuration `text` as if read from the file
    /// named `file` in directory `base`: relative paths in it are resolved
    /// against `base`, and validation reads the files they name.
    pub fn from_text(text: &str, file: &str, base: &Path) -> Result<Config, ConfigError> {
        let mut config = Config::parse(text).map_err(|message| ConfigError::Syntax {
            file: file.to_owned(),
            message,
        })?;
        config.resolve_paths(base);
        config
            .validate()
            .map_err(|(key, problem)| ConfigError::Invalid {
                file: file.to_owned(),
                key,
                problem,
            })?;
        Ok(config)
    }

    /// Parses TOML text without validating it (paths stay as written);
    /// an error names the key it is about when the reader gives a position.
    pub fn parse(text: &str) -> Result<Config, String> {
        toml::from_str(text).map_err(|e| {
            let message = e.to_string().trim_end().to_owned();
            match e.span().and_then(|span| syntax::key_at(text, span.start)) {
                Some(key) => format!("{key}: {message}"),
                None => message,
            }
        })
    }

    /// Makes the file paths of the configuration relative to `base`.
    fn resolve_paths(&mut self, base: &Path) {
        let server = &mut self.server;
        for path in [&mut server.cert, &mut server.key, &mut server.trust_roots] {
            if path.is_relative() {
                *path = base.join(&*path);
            }
        }
        let sim_paths = self.backend.sim.as_mut().map(|s| &mut s.state_file);
        let one_paths = self
            .backend
            .opennebula
            .as_mut()
            .map(|o| [&mut o.one_auth, &mut o.ca_file]);
        for path in sim_paths
            .into_iter()
            .chain(one_paths.into_iter().flatten())
            .flatten()
        {
            if path.is_relative() {
                *path = base.join(&*path);
            }
        }
        self.operator.resolve_paths(base);
        if !self.store.is_postgres() && Path::new(&self.store.url).is_relative() {
            self.store.url = base.join(&self.store.url).display().to_string();
        }
    }
}

impl ServerConfig {
    /// The absolute URL of the AM API `version` endpoint (`…/am/3`).
    pub fn api_url(&self, version: u32) -> String {
        format!("{}/am/{version}", self.public_url.trim_end_matches('/'))
    }
}

impl BackendConfig {
    /// The names of the sliver types the configured backend offers, in
    /// the order they are configured (none when its section is missing).
    pub fn sliver_type_names(&self) -> Vec<&str> {
        match self.kind {
            BackendKind::Sim => self
                .sim
                .iter()
                .flat_map(|sim| sim.sliver_types.iter().map(|t| t.name.as_str()))
                .collect(),
            BackendKind::OpenNebula => self
                .opennebula
                .iter()
                .flat_map(|one| one.sliver_types.iter().map(|t| t.name.as_str()))
                .collect(),
        }
    }
}

impl StoreConfig {
    /// Whether the store is a PostgreSQL URL (otherwise a SQLite file).
    pub fn is_postgres(&self) -> bool {
        self.url.starts_with("postgres://") || self.url.starts_with("postgresql://")
    }
}

impl Default for StoreConfig {
    fn default() -> StoreConfig {
        StoreConfig {
            url: default_store_url(),
            pool_size: default_pool_size(),
            retention_days: default_retention_days(),
            event_retention_days: default_retention_days(),
            purge_interval_secs: default_purge_interval_secs(),
        }
    }
}

fn default_body_limit() -> usize {
    16 << 20
}

/// Eight per worker: more than the request pool's connections
/// (`store.pool_size`) across two workers, so calls that need no store run
/// while eight wait for it. actix's own default, 512 divided by the CPUs,
/// started a thread per call in flight: 130 threads under a hundred
/// clients, 17 MB more resident than idle after the load against 11 MB
/// with eight, and more server CPU per lifecycle in an open load
/// (docs/PERFORMANCE.md, "Memory after a load, bounded").
fn default_call_threads() -> usize {
    8
}

fn default_keep_alive_secs() -> u64 {
    75
}

fn default_shutdown_timeout_secs() -> u64 {
    30
}

fn default_request_timeout_secs() -> u64 {
    30
}

fn default_max_connections() -> usize {
    256
}

fn default_max_connections_per_client() -> usize {
    32
}

fn default_allocation_timeout_secs() -> u64 {
    600
}

fn default_lease_secs() -> u64 {
    7 * 86_400
}

fn default_max_lease_secs() -> u64 {
    30 * 86_400
}

fn default_max_slivers_per_slice() -> u32 {
    64
}

fn default_store_url() -> String {
    "geni-am.sqlite".to_owned()
}

fn default_pool_size() -> u32 {
    8
}

fn default_retention_days() -> u32 {
    30
}

fn default_purge_interval_secs() -> u64 {
    3600
}
