//! The expiry reaper: sleeps until the next live sliver expires (looking
//! again now and then for a sooner expiry set meanwhile), then deletes
//! every expired sliver in one transaction — the VM's destruction queued,
//! its capacity freed once that is done — so slivers end to the second.

use super::{Context, StopSignal};
use chrono::Utc;
use std::time::Duration;

/// Reaps until stopped.
pub fn run(cx: &Context, signal: &StopSignal) {
    let recheck = Duration::from_millis(cx.config.reaper_recheck_ms);
    loop {
        let wait = match reap_once(cx) {
            Ok(next) => next.map_or(recheck, |next| next.min(recheck)),
            Err(err) => {
                tracing::warn!(%err, "reaping expired slivers failed");
                recheck
            }
        };
        if signal.sleep(wait) {
            return;
        }
    }
}

/// Reaps what has expired and returns how long until the next expiry.
/// The next expiry is read first, so a tick with nothing expired is one
/// read.
fn reap_once(cx: &Context) -> Result<Option<Duration>, crate::store::StoreError> {
    let mut next = cx.store.next_expiry()?;
    let now = Utc::now();
    if next.is_some_and(|at| at <= now) {
        for urn in &cx.store.reap_expired(now)? {
            tracing::info!(sliver = %urn, "sliver expired and was deleted");
        }
        next = cx.store.next_expiry()?;
    }
    Ok(next.map(|at| (at - Utc::now()).to_std().unwrap_or(Duration::ZERO)))
}
