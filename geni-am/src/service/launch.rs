//! Bringing the background work up from the configuration: with the
//! configured backend (built by `service::backend`), seed the store's
//! components from its inventory
//! (the inventory refresh keeps them in line afterwards), and start the
//! jobs under this installation's instance name, with the purger of the
//! store's retention — what `serve` does once the store is open.

use super::backend::from_config;
use crate::config::{Config, StoreConfig};
use crate::jobs::{self, JobsHandle, StartError};
use crate::store::retention::Retention;
use crate::store::{Store, StoreError};
use chrono::{TimeDelta, Utc};
use geni_am_backend::{BackendConfigError, BackendError, Compute};
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;

/// The running backend and background jobs; dropping it stops the jobs.
pub struct Running {
    /// The backend the jobs drive (also what the advertisement describes).
    pub backend: Arc<dyn Compute>,
    /// The background threads.
    pub jobs: JobsHandle,
}

/// Why the background work could not start.
#[derive(Debug, Error)]
pub enum LaunchError {
    /// The `[backend]` section does not build a backend.
    #[error("cannot build the backend: {0}")]
    Backend(#[from] BackendConfigError),
    /// The backend did not report its inventory.
    #[error("cannot read the backend's inventory: {0}")]
    Inventory(#[from] BackendError),
    /// The inventory could not be stored.
    #[error("cannot store the backend's inventory: {0}")]
    Store(#[from] StoreError),
    /// A thread could not be started.
    #[error("cannot start the background jobs: {0}")]
    Thread(#[from] std::io::Error),
    /// The jobs did not start.
    #[error(transparent)]
    Start(#[from] StartError),
}

/// Most rows of one table the purge removes in one transaction.
const PURGE_BATCH: i64 = 500;

/// Builds the backend of `config` and writes its inventory to the
/// components of `store`, then starts the jobs on a pool of their own to
/// the same database (one connection per thread, the same bell), so that
/// API calls holding every connection of the shared pool never stall them.
pub fn launch(config: &Config, store: Store) -> Result<Running, LaunchError> {
    let backend = from_config(&config.backend, &config.aggregate.authority)?;
    jobs::store_inventory(&store, &backend.inventory()?, Utc::now())?;
    let adopted = store.adopt_earlier_sizes()?;
    if adopted > 0 {
        tracing::info!(
            slivers = adopted,
            "slivers of an earlier release now count their capacity in the backend's unit"
        );
    }
    let threads = config.jobs.workers.saturating_add(5);
    // The same bell: jobs queued by API calls wake the workers at once.
    let own = store.with_own_pool(threads)?;
    let mut jobs_config = config.jobs.clone();
    if let Some(attempts) = jobs_config.retired_max_attempts {
        tracing::warn!(
            max_attempts = attempts,
            "jobs.max_attempts no longer has an effect: transient backend errors are retried \
             until the sliver expires; remove the key from the configuration"
        );
    }
    if jobs_config.instance_id.is_empty() {
        jobs_config.instance_id = format!("{}@{}", host_name(), config.server.listen);
    }
    let mut jobs = jobs::start(own.clone(), backend.clone(), jobs_config)?;
    let interval = Duration::from_secs(config.store.purge_interval_secs);
    jobs.purge(own, retention(&config.store), interval, Arc::new(Utc::now))?;
    Ok(Running { backend, jobs })
}

/// What the store keeps, and for how long (`[store]` retention keys).
pub fn retention(store: &StoreConfig) -> Retention {
    Retention {
        ended: TimeDelta::days(i64::from(store.retention_days)),
        events: TimeDelta::days(i64::from(store.event_retention_days)),
        batch: PURGE_BATCH,
    }
}

/// This machine's host name (`localhost` when the system does not say).
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|name| name.trim().to_owned())
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}
