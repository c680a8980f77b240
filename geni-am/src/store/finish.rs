//! A job's finish: the job marked done and what it did to its sliver
//! recorded in one write transaction, and with it, for a busy worker, the
//! claim of its next job. A job's state changes and the observation it
//! made after its action are written with its end instead of in
//! transactions of their own: SQLite has one writer, and the API's calls
//! wait behind every transaction the jobs make.

use super::jobs::{JobRow, claim, release};
use super::slivers::{SliverSteps, record_steps};
use super::{Conn, Store, StoreResult};
use crate::model::JobState;
use chrono::{DateTime, TimeDelta, Utc};

impl Store {
    /// Marks job `id` done as [`Store::finish_job`] does, records `steps`,
    /// what it did to its sliver (even when the lease was lost: the
    /// backend did it), and claims up to `limit` due jobs as
    /// [`Store::claim_jobs`] does, all in one transaction (one write
    /// transaction instead of two or more per job a busy worker runs;
    /// the next job of the same sliver is claimable at once). Returns
    /// whether `owner` still held the job, and the jobs claimed.
    pub fn finish_and_claim(
        &self,
        id: &str,
        owner: &str,
        steps: &SliverSteps,
        now: DateTime<Utc>,
        lease: TimeDelta,
        limit: i64,
    ) -> StoreResult<(bool, Vec<JobRow>)> {
        self.write(|conn| {
            let finished = finish(conn, id, owner, steps, now)?;
            Ok((finished, claim(conn, owner, now, lease, limit)?))
        })
    }
}

/// Records `steps` and marks job `id` done if `owner` holds it, in the
/// caller's transaction; true when it was held.
fn finish(
    conn: &mut Conn,
    id: &str,
    owner: &str,
    steps: &SliverSteps,
    now: DateTime<Utc>,
) -> StoreResult<bool> {
    record_steps(conn, steps, now)?;
    release(conn, id, owner, JobState::Done, "", None, now)
}
