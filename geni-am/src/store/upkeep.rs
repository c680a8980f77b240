//! Store functions of the background jobs beyond the core's: which slivers
//! have backend work outstanding (the poller leaves them alone), when the
//! next live sliver expires (the reaper sleeps until then), and reaping
//! expired slivers (deallocate, free capacity, queue the VM's destruction)
//! in one transaction.

use super::schema::{jobs, slivers};
use super::{Conn, Store, StoreResult, UnixTime, slivers as sliver_rows};
use crate::model::EventKind;
use chrono::{DateTime, Utc};
use diesel::dsl::min;
use diesel::prelude::*;
use std::collections::HashSet;

/// The earliest expiry among live slivers.
fn next_expiry(conn: &mut Conn) -> StoreResult<Option<DateTime<Utc>>> {
    let earliest: Option<UnixTime> = slivers::table
        .filter(super::filters::live_sliver())
        .select(min(slivers::expires_at))
        .first(conn)?;
    Ok(earliest.map(UnixTime::get))
}

/// URNs of slivers with a queued or running job.
pub fn pending_job_slivers(conn: &mut Conn) -> StoreResult<HashSet<String>> {
    let urns: Vec<Option<String>> = jobs::table
        .filter(super::filters::pending_job())
        .select(jobs::sliver_urn)
        .distinct()
        .load(conn)?;
    Ok(urns.into_iter().flatten().collect())
}

impl Store {
    /// URNs of slivers with a queued or running job.
    pub fn slivers_with_pending_jobs(&self) -> StoreResult<HashSet<String>> {
        self.read(pending_job_slivers)
    }

    /// When the next live sliver expires, if any is live.
    pub fn next_expiry(&self) -> StoreResult<Option<DateTime<Utc>>> {
        self.read(next_expiry)
    }

    /// Deletes every live sliver expired at or before `now`: it becomes
    /// `geni_unallocated` (freeing its capacity), a destroy job is queued
    /// for provisioned ones, and an `expired` event is logged. Returns the
    /// URNs reaped.
    ///
    /// Whether anything has expired is read first, and only a reaper that
    /// finds something takes a write turn: it looks every
    /// `reaper_recheck_ms` while nothing is live, and on SQLite each empty
    /// write kept the writers' connection, with its page cache, from ever
    /// being closed unused (2 MB resident after a load; docs/PERFORMANCE.md,
    /// "One connection for the writes, and only the columns that changed").
    pub fn reap_expired(&self, now: DateTime<Utc>) -> StoreResult<Vec<String>> {
        if self.read(next_expiry)?.is_none_or(|next| next > now) {
            return Ok(Vec::new());
        }
        self.write(|conn| {
            let expired = sliver_rows::expired(conn, now)?;
            let mut reaped = Vec::with_capacity(expired.len());
            for row in expired {
                let detail = format!("expired at {}", row.expires_at);
                let row = sliver_rows::unallocate(conn, row, EventKind::Expired, &detail, now)?;
                reaped.push(row.urn);
            }
            Ok(reaped)
        })
    }
}
