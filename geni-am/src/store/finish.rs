//! A job's finish: the job marked done and what it did to its sliver
//! recorded in one write transaction — a batch of jobs together — and
//! with it, for a busy worker, the claim of its next jobs. A job's state
//! changes and the observation it made after its action are written with
//! its end instead of in transactions of their own: SQLite has one
//! writer, and the API's calls wait behind every transaction the jobs
//! make.

use super::jobs::{JobRow, claim, release};
use super::slivers::{SliverStep, record_steps};
use super::{Store, StoreResult};
use crate::model::JobState;
use chrono::{DateTime, TimeDelta, Utc};

/// A job that ran to its end, and what it did to its sliver.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Finished {
    /// The job's id.
    pub id: String,
    /// Its sliver (empty for a job of none).
    pub sliver: String,
    /// What it did to the sliver and saw of its VM, in order.
    pub steps: Vec<SliverStep>,
}

impl Finished {
    /// Job `id`, which changed no sliver.
    pub fn job(id: &str) -> Finished {
        Finished {
            id: id.to_owned(),
            ..Finished::default()
        }
    }
}

impl Store {
    /// Marks the `finished` jobs done as [`Store::finish_job`] does,
    /// records what each did to its sliver (even when the lease was lost:
    /// the backend did it), and claims up to `limit` due jobs as
    /// [`Store::claim_jobs`] does, all in one transaction (one write
    /// transaction for a batch instead of two or more per job; the next
    /// job of a finished job's sliver is claimable at once). Returns how
    /// many of the jobs `owner` still held, and the jobs claimed.
    pub fn finish_and_claim(
        &self,
        finished: &[Finished],
        owner: &str,
        now: DateTime<Utc>,
        lease: TimeDelta,
        limit: i64,
    ) -> StoreResult<(usize, Vec<JobRow>)> {
        self.write(|conn| {
            let mut held = 0;
            for job in finished {
                record_steps(conn, &job.sliver, &job.steps, now)?;
                if release(conn, &job.id, owner, JobState::Done, "", None, now)? {
                    held += 1;
                }
            }
            let claimed = if limit > 0 {
                claim(conn, owner, now, lease, limit)?
            } else {
                Vec::new()
            };
            Ok((held, claimed))
        })
    }
}
