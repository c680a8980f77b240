//! The composition root: everything the running aggregate is made of,
//! built from one [`Config`] — the store (migrations applied), the
//! backend and background jobs ([`launch`]), the aggregate with its
//! identity and policy, and the request [`Handler`] over the AM API with
//! the configured body limit. [`backend`] builds the compute backend the
//! `[backend]` section names. `serve` runs what [`build`] returns; the
//! tests and benches assemble their aggregates with the same functions.
//! This is where config's plain data becomes the types of the layers.

pub mod backend;
mod launch;
pub mod memory;

pub use launch::{LaunchError, Running, launch, retention};

use crate::api::{Api, Endpoints};
use crate::config::{Config, ServerConfig, StoreConfig};
use crate::core::{self, Aggregate, Policy, SshAccess};
use crate::operator;
use crate::server::Handler;
use crate::store::Store;
use anyhow::Context;
use chrono::TimeDelta;
use geni_credentials::TrustStore;
use std::sync::Arc;

/// Everything the running aggregate is made of, built from the configuration.
pub struct Service {
    /// The validated configuration.
    pub config: Config,
    /// The trust roots, shared by TLS and credential checks.
    pub trust: Arc<TrustStore>,
    /// What answers the requests.
    pub handler: Handler,
    /// The backend and background jobs (stopped when dropped).
    pub background: Running,
    /// The aggregate the requests reach (its store's pool is the one
    /// `/metrics` shows).
    pub aggregate: Aggregate,
}

/// Builds the service from its configuration: opens the store (applying
/// migrations), starts the backend and jobs, and the AM API over them,
/// checking credentials against `trust` (the roots the server's TLS
/// verifies clients with, so that a reload of them reaches both).
pub fn build(config: Config, trust: Arc<TrustStore>) -> anyhow::Result<Service> {
    let store = open_store(&config.store)?;
    let background = launch(&config, store.clone())?;
    let aggregate = Aggregate::new(store, aggregate_config(&config))?;
    let handler = handler(aggregate.clone(), Arc::clone(&trust), &config.server);
    Ok(Service {
        config,
        trust,
        handler,
        background,
        aggregate,
    })
}

impl Service {
    /// What the operator's endpoint reads.
    pub fn sources(&self) -> operator::Sources {
        operator::Sources {
            aggregate: self.aggregate.clone(),
        }
    }
}

/// Opens the configured store with its pool, applying migrations; an
/// error names `store.url`.
pub fn open_store(config: &StoreConfig) -> anyhow::Result<Store> {
    Store::open(&config.url, config.pool_size).with_context(|| format!("store.url {}", config.url))
}

/// The request handler of the server configured as `server`: the AM API
/// over `aggregate`, checking credentials against `trust`, advertising
/// the endpoints of `server.public_url`, refusing bodies over
/// `server.body_limit`.
pub fn handler(aggregate: Aggregate, trust: Arc<TrustStore>, server: &ServerConfig) -> Handler {
    let endpoints = Endpoints {
        v2: server.api_url(2),
        v3: server.api_url(3),
    };
    let api = Api::new(aggregate, trust, endpoints);
    Handler::new(Arc::new(api), server.body_limit)
}

/// The identity, lease policy and SSH access of `[aggregate]` and
/// `[logins]`, in the form the core takes.
pub fn aggregate_config(config: &Config) -> core::AggregateConfig {
    let aggregate = &config.aggregate;
    let logins = &config.logins;
    let seconds = |secs: u64| {
        i64::try_from(secs)
            .ok()
            .and_then(TimeDelta::try_seconds)
            .unwrap_or(TimeDelta::MAX)
    };
    core::AggregateConfig {
        authority: aggregate.authority.clone(),
        am_urn: aggregate.urn.clone(),
        cm_urn: aggregate.cm_urn.clone(),
        policy: Policy {
            allocation_timeout: seconds(aggregate.allocation_timeout_secs),
            default_lease: seconds(aggregate.default_lease_secs),
            max_lease: seconds(aggregate.max_lease_secs),
            max_slivers_per_slice: aggregate.max_slivers_per_slice as usize,
            public_advertisement: aggregate.public_advertisement,
            default_sliver_type: aggregate.default_sliver_type.clone(),
        },
        ssh: SshAccess {
            port: logins.port,
            gateway: logins
                .gateway
                .as_ref()
                .map(|host| (host.trim().to_owned(), logins.gateway_port)),
        },
    }
}
