//! The inventory refresh: every `inventory_interval_ms` reads the backend's
//! inventory and brings the store's components in line with it in one
//! transaction, and the address ranges of its links after them — capacity and availability of known hosts, new hosts
//! added, hosts gone from the cloud marked unavailable (never deleted,
//! slivers may refer to them). Slivers and what they use are not touched:
//! the core keeps computing free capacity from them. A backend or store
//! error leaves the rows as they were; it is logged when it starts, then
//! at most every [`FAILURE_LOG_INTERVAL`] while it lasts, and when it ends.

use super::error::JobError;
use super::{Context, StopSignal};
use crate::store::components::{InventoryChanges, component_rows};
use crate::store::{Store, StoreError};
use chrono::{DateTime, Utc};
use geni_am_backend::{Compute as _, Inventory};
use std::time::{Duration, Instant};

/// Longest silence about a refresh that keeps failing.
pub const FAILURE_LOG_INTERVAL: Duration = Duration::from_secs(600);

/// Refreshes every `inventory_interval_ms` until stopped (`serve` seeded
/// the components at start).
pub fn run(cx: &Context, signal: &StopSignal) {
    let interval = Duration::from_millis(cx.config.inventory_interval_ms);
    let mut failures = FailureLog::default();
    while !signal.sleep(interval) {
        match refresh_once(cx) {
            Ok(changes) => {
                if let Some(failed) = failures.succeeded() {
                    tracing::info!(failed, "the backend's inventory can be read again");
                }
                if !changes.is_empty() {
                    tracing::info!(
                        added = ?changes.added,
                        updated = ?changes.updated,
                        withdrawn = ?changes.withdrawn,
                        "the components follow the backend's inventory"
                    );
                }
            }
            // The outage is logged once, where it is detected.
            Err(err) if err.is_unreachable() => {}
            Err(err) => {
                if let Some(unlogged) = failures.failed(Instant::now()) {
                    tracing::warn!(
                        %err,
                        unlogged,
                        "refreshing the inventory failed; the components stay as they were"
                    );
                }
            }
        }
    }
}

/// Reads the inventory and writes what changed.
fn refresh_once(cx: &Context) -> Result<InventoryChanges, JobError> {
    Ok(store(&cx.store, &cx.backend.inventory()?, Utc::now())?)
}

/// Writes `inventory` to the store: its hosts as the components (see
/// [`Store::sync_components`]), then the address ranges of its links
/// (a separate transaction: Allocate reads them apart from capacity, and
/// an answer one refresh old is as good as any), logged when they change.
pub fn store(
    store: &Store,
    inventory: &Inventory,
    now: DateTime<Utc>,
) -> Result<InventoryChanges, StoreError> {
    let changes = store.sync_components(&component_rows(inventory), now)?;
    let ranges = inventory.link_ranges.as_deref();
    if store.sync_link_ranges(ranges, now)? {
        match ranges {
            Some(ranges) => tracing::info!(
                ranges = %ranges.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
                "links' requested addresses must lie in the backend's address ranges"
            ),
            None => tracing::info!("the backend gives links any address requested"),
        }
    }
    Ok(changes)
}

/// Which failures of a run of failed refreshes are logged.
#[derive(Debug, Default)]
struct FailureLog {
    /// Failures since the last success.
    failures: u64,
    /// Failures not logged since the last one logged.
    unlogged: u64,
    /// When a failure of this run was last logged.
    logged_at: Option<Instant>,
}

impl FailureLog {
    /// Counts a failure at `now`; when it is to be logged, returns how
    /// many failures before it were not.
    fn failed(&mut self, now: Instant) -> Option<u64> {
        self.failures += 1;
        let due = self
            .logged_at
            .is_none_or(|at| now.saturating_duration_since(at) >= FAILURE_LOG_INTERVAL);
        if !due {
            self.unlogged += 1;
            return None;
        }
        self.logged_at = Some(now);
        Some(std::mem::take(&mut self.unlogged))
    }

    /// Ends a run of failures; returns its length if there was one.
    fn succeeded(&mut self) -> Option<u64> {
        let failures = std::mem::take(self).failures;
        (failures > 0).then_some(failures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lasting_failure_is_logged_at_its_start_then_once_per_interval() {
        let mut log = FailureLog::default();
        let start = Instant::now();
        let at = |secs| start + Duration::from_secs(secs);
        assert_eq!(log.failed(at(0)), Some(0), "the first failure");
        assert_eq!(log.failed(at(60)), None);
        assert_eq!(log.failed(at(599)), None);
        assert_eq!(log.failed(at(600)), Some(2), "two were not logged");
        assert_eq!(log.failed(at(660)), None);
        assert_eq!(log.succeeded(), Some(5));
        assert_eq!(log.succeeded(), None, "no run of failures to end");
        assert_eq!(log.failed(at(700)), Some(0), "a new run is logged at once");
    }
}
