//! The purger: every `[store] purge_interval_secs` removes what the
//! retention lets go (deleted slivers, unreferenced request documents,
//! finished jobs, old events), batch after batch, so the store stops
//! growing with every Allocate/Delete cycle.

use super::StopSignal;
use crate::core::Clock;
use crate::store::Store;
use crate::store::retention::Retention;
use std::time::Duration;

/// Purges at start and then every `interval`, on the time `clock` says,
/// until stopped.
pub fn run(
    store: &Store,
    retention: &Retention,
    interval: Duration,
    clock: &Clock,
    signal: &StopSignal,
) {
    loop {
        match store.purge(retention, clock(), || !signal.sleep(Duration::ZERO)) {
            Ok(purged) if purged != Default::default() => {
                tracing::info!(?purged, "purged what the retention lets go");
            }
            Ok(_) => {}
            Err(err) => tracing::warn!(%err, "purging the store failed"),
        }
        if signal.sleep(interval) {
            return;
        }
    }
}
