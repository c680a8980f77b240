//! Provisioning workers: claim due jobs with a lease, run them, and finish,
//! defer (a job that cannot run yet waits a poll interval, not counted as
//! an attempt), retry or fail them. Transient errors (the cloud
//! unreachable, an object locked) never fail work for good: a job is
//! retried with doubling backoff, capped at `retry_max_secs`, until its
//! sliver's own deadline (its expiry, when the reaper deletes it); the
//! destruction of a VM or a link network is never given up, since what
//! is left behind would hold capacity and addresses for good. Refusals
//! (quota, capacity, a bad request) fail the job and its sliver at once
//! with the backend's message — a quota or capacity refusal waits only
//! while this aggregate's own destructions are pending; a sliver whose
//! VM was never created releases its capacity.

use super::error::JobError;
use super::execute;
use super::pace::Pace;
use super::{Context, StopSignal};
use crate::model::JobKind;
use crate::store::Finished;
use crate::store::jobs::JobRow;
use crate::store::slivers::SliverStep;
use chrono::{DateTime, TimeDelta, Utc};
use std::time::{Duration, Instant};

/// Claims and runs jobs as `owner` until stopped. Between claims that
/// find nothing it waits on the store's bell (rung when jobs are queued)
/// until the next queued job is due, `idle_poll_ms` at most, ready to be
/// handed a job by the transaction that queues it. The jobs
/// are claimed in batches as large as [`Pace`] says, and those that
/// succeed are finished together in the transaction that claims the next
/// batch.
pub fn run(cx: &Context, owner: &str, signal: &StopSignal) {
    let idle = Duration::from_millis(cx.config.idle_poll_ms);
    let lease = TimeDelta::seconds(i64::try_from(cx.config.lease_secs).unwrap_or(i64::MAX / 2));
    let bell = cx.store.bell();
    let mut seen = bell.rings();
    let mut pace = Pace::default();
    let mut next: Vec<JobRow> = Vec::new();
    // Whether the last look for work (a claim, or the claim made with a
    // batch's finish) may have left due jobs unclaimed.
    let mut look = true;
    while !signal.is_stopped() {
        let jobs = if !next.is_empty() {
            std::mem::take(&mut next)
        } else if look {
            match cx.store.claim_jobs(owner, Utc::now(), lease, pace.batch()) {
                Ok(jobs) => jobs,
                Err(err) => {
                    tracing::warn!(%err, "cannot claim jobs");
                    Vec::new()
                }
            }
        } else {
            Vec::new()
        };
        if jobs.is_empty() {
            // A ring since `seen` (jobs queued after the last look) ends
            // the wait at once; a job handed to this worker meanwhile
            // rings too.
            cx.store.hand_off().idle(owner, lease);
            seen = bell.wait(seen, until_due(cx, idle));
            next = take_handed(cx, owner);
            look = true;
            continue;
        }
        // Read before the claim's snapshot: a job committed after it
        // rings after this count.
        let rings = bell.rings();
        let finished = run_batch(cx, owner, jobs, signal, &mut pace);
        let looked = match finish(cx, owner, &finished, lease, signal, &pace) {
            Some(claimed) => {
                next = claimed;
                true
            }
            None => false,
        };
        look = !looked;
        if looked {
            seen = rings;
        }
        cx.followers.ring();
    }
    next.extend(take_handed(cx, owner));
    put_back(cx, owner, &next);
}

/// Runs claimed `jobs` in turn, timing each for `pace`; returns those
/// that succeeded, with what they did to their slivers. Failures are
/// recorded at once; jobs left when the worker is stopped are returned
/// to the queue.
fn run_batch(
    cx: &Context,
    owner: &str,
    jobs: Vec<JobRow>,
    signal: &StopSignal,
    pace: &mut Pace,
) -> Vec<(JobRow, Finished)> {
    let mut finished = Vec::with_capacity(jobs.len());
    let mut jobs = jobs.into_iter();
    while let Some(job) = jobs.next() {
        if signal.is_stopped() {
            let left: Vec<JobRow> = std::iter::once(job).chain(jobs).collect();
            put_back(cx, owner, &left);
            break;
        }
        let started = Instant::now();
        if let Some(steps) = handle(cx, owner, &job) {
            let done = Finished {
                id: job.id.clone(),
                sliver: sliver_of(&job).to_owned(),
                steps,
            };
            finished.push((job, done));
        }
        pace.ran(started.elapsed());
    }
    finished
}

/// Marks the `finished` jobs done in one transaction with what they did
/// to their slivers, claiming the next batch in it unless stopped: the
/// jobs so claimed, or `None` when no claim was made (nothing finished,
/// stopped, or the store failed).
fn finish(
    cx: &Context,
    owner: &str,
    finished: &[(JobRow, Finished)],
    lease: TimeDelta,
    signal: &StopSignal,
    pace: &Pace,
) -> Option<Vec<JobRow>> {
    if finished.is_empty() {
        return None;
    }
    let limit = if signal.is_stopped() { 0 } else { pace.batch() };
    let done: Vec<Finished> = finished.iter().map(|(_, done)| done.clone()).collect();
    match cx
        .store
        .finish_and_claim(&done, owner, Utc::now(), lease, limit)
    {
        Ok((_, claimed)) => {
            for (job, _) in finished {
                let attempts = job.attempts;
                tracing::info!(job = %job.id, kind = %job.kind, sliver = sliver_of(job), attempts, "job done");
            }
            (limit > 0).then_some(claimed)
        }
        Err(err) => {
            tracing::warn!(%err, jobs = finished.len(), "cannot record that jobs are done; they will run again after their lease");
            None
        }
    }
}

/// The jobs handed to this worker while it waited; none if they cannot
/// be read (they stay handed to it, for its next wait).
fn take_handed(cx: &Context, owner: &str) -> Vec<JobRow> {
    cx.store.take_handed(owner).unwrap_or_else(|err| {
        tracing::warn!(%err, "cannot read the jobs handed to this worker; it looks again after its next wait");
        Vec::new()
    })
}

/// Returns jobs claimed but not run (the worker was stopped after it
/// claimed them) to the queue at once, the attempt not counted.
fn put_back(cx: &Context, owner: &str, jobs: &[JobRow]) {
    let now = Utc::now();
    for job in jobs {
        if let Err(err) = cx
            .store
            .defer_job(&job.id, owner, "the worker stopped", now, now)
        {
            tracing::warn!(job = %job.id, %err, "cannot return an unrun job; it will run again after its lease");
        }
    }
}

/// How long an idle worker waits: until the next queued job is due, at
/// most `idle`. A job due already is waiting for an earlier job of its
/// sliver, whose worker claims it on finishing; `idle` then too.
fn until_due(cx: &Context, idle: Duration) -> Duration {
    match cx.store.next_job_due() {
        Ok(Some(due)) => match (due - Utc::now()).to_std() {
            Ok(wait) if !wait.is_zero() => wait.min(idle),
            _ => idle,
        },
        Ok(None) => idle,
        Err(err) => {
            tracing::warn!(%err, "cannot read when the next job is due");
            idle
        }
    }
}

/// Runs one claimed job: what it did to its sliver when it succeeded, to
/// be recorded with its finish; a failure is recorded here. A job whose
/// sliver another worker of this process is driving (claimed by two
/// processes at once) is deferred instead.
fn handle(cx: &Context, owner: &str, job: &JobRow) -> Option<Vec<SliverStep>> {
    let sliver = job.sliver_urn.clone().unwrap_or_default();
    let recorded = if lock_in_flight(cx).insert(sliver.clone()) {
        let outcome = execute::run(cx, job);
        lock_in_flight(cx).remove(&sliver);
        match outcome {
            Ok(steps) => return Some(steps),
            Err(err) => record_failure(cx, owner, job, err),
        }
    } else {
        defer(
            cx,
            owner,
            job,
            &format!("waiting for another job of {sliver}"),
        )
    };
    if let Err(err) = recorded {
        tracing::warn!(job = %job.id, %err, "cannot record the outcome of a job; it will run again after its lease");
    }
    None
}

fn lock_in_flight(cx: &Context) -> std::sync::MutexGuard<'_, std::collections::HashSet<String>> {
    cx.in_flight
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Puts `job` back for one poll interval without counting the attempt.
fn defer(
    cx: &Context,
    owner: &str,
    job: &JobRow,
    reason: &str,
) -> Result<(), crate::store::StoreError> {
    let now = Utc::now();
    let wait = Duration::from_millis(cx.config.poll_interval_ms);
    let later = now + TimeDelta::from_std(wait).unwrap_or(TimeDelta::MAX);
    tracing::debug!(job = %job.id, kind = %job.kind, reason, "job deferred");
    cx.store.defer_job(&job.id, owner, reason, later, now)?;
    Ok(())
}

/// Records why `job` did not succeed: deferred, retried later, or failed
/// with its sliver.
fn record_failure(
    cx: &Context,
    owner: &str,
    job: &JobRow,
    err: JobError,
) -> Result<(), crate::store::StoreError> {
    let now = Utc::now();
    let attempts = u32::try_from(job.attempts).unwrap_or(u32::MAX);
    match err {
        JobError::Waiting(reason) => defer(cx, owner, job, &reason),
        err => {
            let retryable = worth_retrying(cx, &err)?;
            if retryable && keeps_trying(cx, job, now)? {
                retry(cx, owner, job, &err, attempts, now)
            } else {
                give_up(cx, owner, job, &err, retryable, now)
            }
        }
    }
}

/// The sliver `job` works on, for the log (empty for jobs of none).
fn sliver_of(job: &JobRow) -> &str {
    job.sliver_urn.as_deref().unwrap_or_default()
}

/// Queues `job` again after the backoff of its `attempts`.
fn retry(
    cx: &Context,
    owner: &str,
    job: &JobRow,
    err: &JobError,
    attempts: u32,
    now: DateTime<Utc>,
) -> Result<(), crate::store::StoreError> {
    let wait = cx.config.backoff(attempts);
    if err.is_unreachable() {
        // The outage is logged once, where it is detected.
        tracing::debug!(job = %job.id, kind = %job.kind, sliver = sliver_of(job), %err, retry_in_secs = wait.as_secs(), "job held up by the outage");
    } else {
        tracing::info!(job = %job.id, kind = %job.kind, sliver = sliver_of(job), %err, retry_in_secs = wait.as_secs(), "job will be retried");
    }
    let run_after = now + TimeDelta::from_std(wait).unwrap_or(TimeDelta::MAX);
    cx.store
        .retry_job(&job.id, owner, &err.to_string(), run_after, now)?;
    Ok(())
}

/// Fails `job` and its sliver for good; `retryable` errors are given up
/// only because the sliver expired, and the message says so.
fn give_up(
    cx: &Context,
    owner: &str,
    job: &JobRow,
    err: &JobError,
    retryable: bool,
    now: DateTime<Utc>,
) -> Result<(), crate::store::StoreError> {
    let message = if retryable {
        format!("given up when the sliver expired: {err}")
    } else {
        err.to_string()
    };
    tracing::warn!(job = %job.id, kind = %job.kind, sliver = sliver_of(job), %message, "job failed");
    cx.store.fail_job(&job.id, owner, &message, now)?;
    match &job.sliver_urn {
        Some(sliver) if job.kind == JobKind::Provision => {
            cx.store.fail_unbuilt_sliver(sliver, &message, now)?;
        }
        Some(sliver) => {
            cx.store.fail_sliver(sliver, &message, now)?;
        }
        None => {}
    }
    Ok(())
}

/// Whether trying `err`'s job again may succeed: a transient error, or a
/// quota or capacity refusal while destructions of this aggregate's VMs
/// are still to run (the room they hold in the cloud is about to be
/// freed; the store already counts it free).
fn worth_retrying(cx: &Context, err: &JobError) -> Result<bool, crate::store::StoreError> {
    Ok(err.is_transient() || (err.is_capacity() && cx.store.destructions_pending()?))
}

/// Whether a job that failed transiently at `now` is tried again:
/// destructions always, other jobs while their sliver has not expired.
fn keeps_trying(
    cx: &Context,
    job: &JobRow,
    now: DateTime<Utc>,
) -> Result<bool, crate::store::StoreError> {
    if job.kind.destroys() {
        return Ok(true);
    }
    let Some(urn) = &job.sliver_urn else {
        return Ok(true);
    };
    Ok(cx
        .store
        .sliver(urn)?
        .is_some_and(|s| s.expires_at.get() > now))
}
