//! The gauges of `/metrics`, read from the store when scraped: live
//! slivers by state and the job queue's depth through grouped and counting
//! queries, capacity per host as Allocate counts it
//! ([`overview::capacity`]), the recorded outage, the drain state, and
//! the request pool's connections.

use super::Sources;
use crate::core::{CoreError, overview};
use crate::store::listing;
use crate::telemetry::{Gauges, HostUse};
use chrono::Utc;
use std::collections::BTreeMap;

/// Reads the gauges now.
pub(super) fn read(sources: &Sources) -> Result<Gauges, CoreError> {
    let store = sources.store();
    let now = Utc::now();
    let (counts, (queued, _running, oldest)) = store.read(|conn| {
        Ok::<_, CoreError>((listing::live_counts(conn)?, listing::queue_depth(conn)?))
    })?;
    let mut slivers: BTreeMap<(String, String), i64> = BTreeMap::new();
    for count in counts {
        let key = (
            count.allocation_state.as_str().to_owned(),
            count.operational_state.as_str().to_owned(),
        );
        *slivers.entry(key).or_default() += count.count;
    }
    let hosts = overview::capacity(store, now)?
        .into_iter()
        .map(|host| {
            // A host the backend withdrew takes no new sliver.
            let free = |left: i64| if host.available { left } else { 0 };
            HostUse {
                resources: vec![
                    ("cpus", host.cpus_used, free(host.cpus_free)),
                    ("memory_mb", host.memory_mb_used, free(host.memory_mb_free)),
                    ("vms", host.vms_used, free(host.vms_free)),
                ],
                host: host.name,
            }
        })
        .collect();
    let (in_use, idle) = store.pool_use();
    Ok(Gauges {
        slivers: slivers
            .into_iter()
            .map(|((allocation, operational), count)| (allocation, operational, count))
            .collect(),
        hosts,
        jobs_queued: queued,
        jobs_oldest_age_seconds: oldest.map_or(0, |t| (now - t).num_seconds().max(0)),
        backend_up: store.outage()?.is_none(),
        store_in_use: i64::from(in_use),
        store_idle: i64::from(idle),
        draining: overview::drain(store)?.draining,
    })
}
