//! Retention: what the store forgets once it is old enough, so it stops
//! growing — deleted slivers (with no backend work left), the request
//! documents no sliver refers to any more, finished jobs, and events
//! (the audit log, with a period of its own).
//!
//! Purging goes in bounded batches, each table in its own short write
//! transaction, so API calls and workers wait at most one batch. On
//! SQLite the pages freed are reused by later writes: the file stays at
//! its high-water mark instead of growing with every cycle, and is never
//! rewritten (no `VACUUM`, which would lock the store for its duration).

use super::schema::{events, jobs, requests, slivers};
use super::{Conn, Store, StoreResult, UnixTime};
use crate::model::{AllocationState, JobState};
use chrono::{DateTime, TimeDelta, Utc};
use diesel::prelude::*;

/// How long the store keeps what is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Deleted slivers, their request documents and finished jobs are
    /// kept this long after they ended.
    pub ended: TimeDelta,
    /// Events are kept this long after they were logged.
    pub events: TimeDelta,
    /// Most rows of one table removed in one transaction.
    pub batch: i64,
}

/// Rows removed, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Purged {
    /// Deleted slivers.
    pub slivers: usize,
    /// Request documents.
    pub requests: usize,
    /// Done or failed jobs.
    pub jobs: usize,
    /// Events.
    pub events: usize,
}

impl Purged {
    /// Whether some table had a full batch to remove (more may be left).
    fn full(&self, batch: i64) -> bool {
        let batch = usize::try_from(batch).unwrap_or(usize::MAX);
        [self.slivers, self.requests, self.jobs, self.events]
            .iter()
            .any(|&n| n >= batch)
    }

    fn add(&mut self, other: Purged) {
        self.slivers += other.slivers;
        self.requests += other.requests;
        self.jobs += other.jobs;
        self.events += other.events;
    }
}

/// True for a sliver with no queued or running job (a deleted sliver's
/// destroy still holds its capacity).
fn without_pending_jobs() -> diesel::expression::SqlLiteral<diesel::sql_types::Bool> {
    diesel::dsl::sql(&format!(
        "NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.sliver_urn = slivers.urn \
         AND jobs.state IN ('{}', '{}'))",
        JobState::Queued.as_str(),
        JobState::Running.as_str()
    ))
}

/// True for a request document no sliver refers to.
fn unreferenced() -> diesel::expression::SqlLiteral<diesel::sql_types::Bool> {
    diesel::dsl::sql("NOT EXISTS (SELECT 1 FROM slivers WHERE slivers.request_id = requests.id)")
}

/// Removes up to `batch` slivers deleted at or before `cutoff`.
fn purge_slivers(conn: &mut Conn, cutoff: UnixTime, batch: i64) -> StoreResult<usize> {
    let urns: Vec<String> = slivers::table
        .filter(slivers::allocation_state.eq(AllocationState::Unallocated))
        .filter(slivers::deleted_at.le(Some(cutoff)))
        .filter(without_pending_jobs())
        .select(slivers::urn)
        .limit(batch)
        .load(conn)?;
    Ok(diesel::delete(slivers::table.filter(slivers::urn.eq_any(&urns))).execute(conn)?)
}

/// Removes up to `batch` request documents stored at or before `cutoff`
/// that no sliver refers to.
fn purge_requests(conn: &mut Conn, cutoff: UnixTime, batch: i64) -> StoreResult<usize> {
    let ids: Vec<String> = requests::table
        .filter(requests::created_at.le(cutoff))
        .filter(unreferenced())
        .select(requests::id)
        .limit(batch)
        .load(conn)?;
    Ok(diesel::delete(requests::table.filter(requests::id.eq_any(&ids))).execute(conn)?)
}

/// Removes up to `batch` jobs done or failed at or before `cutoff`.
fn purge_jobs(conn: &mut Conn, cutoff: UnixTime, batch: i64) -> StoreResult<usize> {
    let ids: Vec<String> = jobs::table
        .filter(super::filters::finished_job())
        .filter(jobs::updated_at.le(cutoff))
        .select(jobs::id)
        .limit(batch)
        .load(conn)?;
    Ok(diesel::delete(jobs::table.filter(jobs::id.eq_any(&ids))).execute(conn)?)
}

/// Removes up to `batch` events logged at or before `cutoff`.
fn purge_events(conn: &mut Conn, cutoff: UnixTime, batch: i64) -> StoreResult<usize> {
    let ids: Vec<String> = events::table
        .filter(events::at.le(cutoff))
        .select(events::id)
        .limit(batch)
        .load(conn)?;
    Ok(diesel::delete(events::table.filter(events::id.eq_any(&ids))).execute(conn)?)
}

impl Store {
    /// Removes one batch of each kind of row `retention` lets go at `now`,
    /// each table in its own transaction (jobs first, so a deleted
    /// sliver's finished destroy no longer refers to it; requests after
    /// their slivers).
    fn purge_batch(&self, retention: &Retention, now: DateTime<Utc>) -> StoreResult<Purged> {
        let ended = UnixTime::from(now - retention.ended);
        let logged = UnixTime::from(now - retention.events);
        let batch = retention.batch.max(1);
        Ok(Purged {
            jobs: self.write(|conn| purge_jobs(conn, ended, batch))?,
            slivers: self.write(|conn| purge_slivers(conn, ended, batch))?,
            requests: self.write(|conn| purge_requests(conn, ended, batch))?,
            events: self.write(|conn| purge_events(conn, logged, batch))?,
        })
    }

    /// Removes everything `retention` lets go at `now`, batch after batch
    /// while `more` allows (the background purger stops when asked).
    pub fn purge(
        &self,
        retention: &Retention,
        now: DateTime<Utc>,
        mut more: impl FnMut() -> bool,
    ) -> StoreResult<Purged> {
        let mut total = Purged::default();
        loop {
            let purged = self.purge_batch(retention, now)?;
            total.add(purged);
            if !purged.full(retention.batch.max(1)) || !more() {
                return Ok(total);
            }
        }
    }
}
