//! The gauges of `/metrics`, read from the store when scraped.

use super::Sources;
use crate::store::StoreError;
use crate::telemetry::Gauges;

/// Reads the gauges.
pub(super) fn read(sources: &Sources) -> Result<Gauges, StoreError> {
    let store = &sources.store;
    let (in_use, idle) = store.pool_use();
    Ok(Gauges {
        backend_up: store.outage()?.is_none(),
        store_in_use: i64::from(in_use),
        store_idle: i64::from(idle),
        ..Gauges::default()
    })
}
