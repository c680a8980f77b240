//! Bringing the background work up from the configuration: with the
//! configured backend (built by `service::backend`), seed the store's
//! components from its inventory
//! (the inventory refresh keeps them in line afterwards), and start the
//! jobs under this installation's instance name, with the purger of the
//! store's retention — what `serve` does once the store is open.

use super::JobsHandle;
use crate::config::Config;
use crate::store::{Store, StoreError};
use chrono::Utc;
use geni_am_backend::{BackendError, Compute};
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
    /// The backend did not report its inventory.
    #[error("cannot read the backend's inventory: {0}")]
    Inventory(#[from] BackendError),
    /// The inventory could not be stored.
    #[error("cannot store the backend's inventory: {0}")]
    Store(#[from] StoreError),
    /// A thread could not be started.
    #[error("cannot start the background jobs: {0}")]
    Thread(#[from] std::io::Error),
}

/// Writes the inventory of `backend` (the one `config` names) to the
/// components of `store`, then starts the jobs on a pool of their own to
/// the same database (one connection per thread), so that API calls
/// holding every connection of the shared pool never stall them.
pub fn launch(
    config: &Config,
    store: Store,
    backend: Arc<dyn Compute>,
) -> Result<Running, LaunchError> {
    super::inventory::store(&store, &backend.inventory()?, Utc::now())?;
    let adopted = store.adopt_earlier_sizes()?;
    if adopted > 0 {
        tracing::info!(
            slivers = adopted,
            "slivers of an earlier release now count their capacity in the backend's unit"
        );
    }
    let threads = config.jobs.workers.saturating_add(5);
    let own = Store::open(&config.store.url, threads)?;
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
    let mut jobs = super::start(own.clone(), backend.clone(), jobs_config)?;
    let interval = Duration::from_secs(config.store.purge_interval_secs);
    jobs.purge(own, config.store.retention(), interval, Arc::new(Utc::now))?;
    Ok(Running { backend, jobs })
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
