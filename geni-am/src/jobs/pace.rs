//! How many jobs a worker claims at once: as many as it expects to run
//! within [`BATCH_SPAN`], by how long its recent jobs took, and at most
//! [`MAX_BATCH`]. A batch is finished in one write transaction, so with a
//! backend that answers at once (the simulated cloud, jobs of a fraction
//! of a millisecond) the transactions, each waiting for SQLite's single
//! writer behind the API's calls, are shared by several jobs; with a slow
//! one (OpenNebula, jobs of a second or more) a worker claims one job at
//! a time, leaving the next ones to the other workers, and no job's
//! finish waits for others' runs.

use std::time::Duration;

/// How long the jobs of one batch should take together.
pub const BATCH_SPAN: Duration = Duration::from_millis(10);

/// The most jobs claimed at once.
pub const MAX_BATCH: i64 = 8;

/// A worker's recent time per job.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    /// A moving average of the last jobs' run times.
    per_job: Duration,
}

impl Default for Pace {
    /// Until jobs were timed, one at a time.
    fn default() -> Self {
        Pace {
            per_job: BATCH_SPAN,
        }
    }
}

impl Pace {
    /// Notes that a job took `took`.
    pub fn ran(&mut self, took: Duration) {
        self.per_job = (self.per_job * 3 + took) / 4;
    }

    /// How many jobs to claim next.
    pub fn batch(&self) -> i64 {
        let fit = BATCH_SPAN.as_nanos() / self.per_job.as_nanos().max(1);
        i64::try_from(fit).unwrap_or(MAX_BATCH).clamp(1, MAX_BATCH)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_claims_one_job_until_its_jobs_are_seen_to_be_quick() {
        let mut pace = Pace::default();
        assert_eq!(pace.batch(), 1);
        for _ in 0..20 {
            pace.ran(Duration::from_micros(500));
        }
        assert_eq!(pace.batch(), MAX_BATCH);
    }

    #[test]
    fn slow_jobs_are_claimed_one_at_a_time() {
        let mut pace = Pace::default();
        for _ in 0..20 {
            pace.ran(Duration::from_micros(500));
        }
        pace.ran(Duration::from_secs(2));
        assert_eq!(pace.batch(), 1, "one slow job is enough");
        for _ in 0..3 {
            pace.ran(Duration::from_millis(3));
        }
        assert!((1..MAX_BATCH).contains(&pace.batch()));
    }
}
