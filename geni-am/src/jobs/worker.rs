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
use super::{Context, StopSignal};
use crate::model::JobKind;
use crate::store::jobs::JobRow;
use chrono::{DateTime, TimeDelta, Utc};
use std::time::Duration;

/// Claims and runs jobs as `owner` until stopped. Between claims that
/// find nothing it waits on the store's bell (rung when jobs are queued)
/// until the next queued job is due, `idle_poll_ms` at most.
pub fn run(cx: &Context, owner: &str, signal: &StopSignal) {
    let idle = Duration::from_millis(cx.config.idle_poll_ms);
    let lease = TimeDelta::seconds(i64::try_from(cx.config.lease_secs).unwrap_or(i64::MAX / 2));
    let bell = cx.store.bell();
    let mut seen = bell.rings();
    while !signal.is_stopped() {
        match cx.store.claim_jobs(owner, Utc::now(), lease, 1) {
            Ok(jobs) if !jobs.is_empty() => {
                for job in jobs {
                    handle(cx, owner, &job);
                    cx.followers.ring();
                }
                continue;
            }
            Ok(_) => {}
            Err(err) => tracing::warn!(%err, "cannot claim jobs"),
        }
        seen = bell.wait(seen, until_due(cx, idle));
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

/// Runs one claimed job and records the outcome; a job whose sliver
/// another worker of this process is driving (claimed by two processes
/// at once) is deferred instead.
fn handle(cx: &Context, owner: &str, job: &JobRow) {
    let sliver = job.sliver_urn.clone().unwrap_or_default();
    let recorded = if lock_in_flight(cx).insert(sliver.clone()) {
        let outcome = execute::run(cx, job);
        lock_in_flight(cx).remove(&sliver);
        record(cx, owner, job, outcome)
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

fn record(
    cx: &Context,
    owner: &str,
    job: &JobRow,
    outcome: Result<(), JobError>,
) -> Result<(), crate::store::StoreError> {
    let now = Utc::now();
    let attempts = u32::try_from(job.attempts).unwrap_or(u32::MAX);
    match outcome {
        Ok(()) => {
            cx.store.finish_job(&job.id, owner, now)?;
            tracing::info!(
                job = %job.id,
                kind = %job.kind,
                sliver = sliver_of(job),
                attempts,
                "job done"
            );
        }
        Err(JobError::Waiting(reason)) => defer(cx, owner, job, &reason)?,
        Err(err) => {
            let retryable = worth_retrying(cx, &err)?;
            if retryable && keeps_trying(cx, job, now)? {
                retry(cx, owner, job, &err, attempts, now)?;
            } else {
                give_up(cx, owner, job, &err, retryable, now)?;
            }
        }
    }
    Ok(())
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
