//! Queued backend work. The core enqueues jobs in the transaction that
//! changes the slivers; workers claim them with a lease (an owner and an
//! expiry, so a crashed worker's jobs are claimed again), then finish,
//! retry, defer or fail them. The jobs of one sliver run one at a time in
//! queue order: a job is not claimed while an earlier job of its sliver
//! is queued or running, and a destroy supersedes the queued jobs of its
//! sliver. On PostgreSQL claiming uses `FOR UPDATE SKIP LOCKED` so
//! several processes share the queue.
//!
//! A lease owner reads `<instance>/<run>-w<n>`: the instance names the
//! installation's process across restarts, the run one start of it. A
//! process starting again ends the leases its instance still holds from
//! an earlier run at once ([`Store::reclaim_leases`]); the leases of
//! other instances keep running until they expire.

use super::cached::CachedDsl;
use super::hand_off;
use super::native::natively;
use super::schema::jobs;
use super::{Conn, Json, Store, StoreResult, UnixTime};
use crate::model::{JobKind, JobState};
use chrono::{DateTime, TimeDelta, Utc};
use diesel::dsl::max;
use diesel::prelude::*;

/// A job as stored. A missing sliver or lease is inserted as NULL rather
/// than left to the column's default, so that the insert's text is the
/// same for every job and it is found prepared by its type.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Insertable)]
#[diesel(table_name = jobs, treat_none_as_default_value = false)]
pub struct JobRow {
    /// Its id (a UUID).
    pub id: String,
    /// Order of creation (ties possible only across processes).
    pub seq: i64,
    /// What it does.
    pub kind: JobKind,
    /// Slice concerned.
    pub slice_urn: String,
    /// Sliver concerned.
    pub sliver_urn: Option<String>,
    /// Kind-specific JSON (e.g. the VM tag for a destroy).
    pub payload: Json<serde_json::Value>,
    /// Where it is.
    pub state: JobState,
    /// How many times it was claimed.
    pub attempts: i64,
    /// Not before.
    pub run_after: UnixTime,
    /// Worker holding it.
    pub lease_owner: Option<String>,
    /// Until when.
    pub lease_expires: Option<UnixTime>,
    /// Why the last attempt failed.
    pub last_error: String,
    /// Created.
    pub created_at: UnixTime,
    /// Last changed.
    pub updated_at: UnixTime,
}

/// Queues a job of `kind` for `sliver_urn`, runnable from `now`; returns
/// its id. Once the transaction commits, waiting workers wake (see
/// [`super::bell`]). When a worker of this process is idle and the
/// sliver has no other job queued or running, the job is stored claimed
/// by that worker and handed to it at the commit ([`super::hand_off`]).
pub fn enqueue(
    conn: &mut Conn,
    kind: JobKind,
    slice_urn: &str,
    sliver_urn: Option<&str>,
    payload: &serde_json::Value,
    now: DateTime<Utc>,
) -> StoreResult<String> {
    if let Some(sliver) = sliver_urn {
        queue_of(conn, sliver)?;
    }
    if kind == JobKind::Destroy
        && let Some(sliver) = sliver_urn
    {
        supersede_queued(conn, sliver, now)?;
    }
    // On the database's own connection (see `natively!`), as the reads
    // and the insert below: every write call queues jobs in the writers'
    // turn.
    let last: Option<i64> = natively!(conn, |c| jobs::table.select(max(jobs::seq)).first(c))?;
    let mut row = JobRow {
        id: uuid::Uuid::new_v4().simple().to_string(),
        seq: last.unwrap_or(0) + 1,
        kind,
        slice_urn: slice_urn.to_owned(),
        sliver_urn: sliver_urn.map(str::to_owned),
        payload: Json::new(payload.clone()),
        state: JobState::Queued,
        attempts: 0,
        run_after: now.into(),
        lease_owner: None,
        lease_expires: None,
        last_error: String::new(),
        created_at: now.into(),
        updated_at: now.into(),
    };
    let handed = hand_off::any_idle() && !pending_for(conn, sliver_urn)? && {
        if let Some((owner, lease)) = hand_off::reserve() {
            row.state = JobState::Running;
            row.attempts = 1;
            row.lease_owner = Some(owner);
            row.lease_expires = Some((now + lease).into());
        }
        row.lease_owner.is_some()
    };
    natively!(conn, |c| diesel::insert_into(jobs::table)
        .values(&row)
        .execute(c))?;
    if handed {
        hand_off::reserved_for(row.id.clone());
    }
    super::bell::note_queued(conn)?;
    Ok(row.id)
}

/// Takes, until the transaction ends, the queue of `sliver_urn` (a
/// sliver's, or a link's for its network) on PostgreSQL, where processes
/// and their writers run side by side: the jobs of one sliver queued by
/// two transactions at once would otherwise each see no other pending,
/// take the same `seq`, and both be handed over or claimed to run
/// together. Transactions that change a sliver lock its row first, but
/// nothing locks a link's. On SQLite the writer's `BEGIN IMMEDIATE`
/// already serialises every queueing.
fn queue_of(conn: &mut Conn, sliver_urn: &str) -> StoreResult<()> {
    if let Conn::Postgres(pg) = conn {
        diesel::sql_query("SELECT pg_advisory_xact_lock($1, hashtext($2))")
            .bind::<diesel::sql_types::Integer, _>(JOB_QUEUE_LOCKS)
            .bind::<diesel::sql_types::Text, _>(sliver_urn)
            .execute(pg)?;
    }
    Ok(())
}

/// The class of PostgreSQL advisory locks [`queue_of`] takes, one per
/// sliver (or link) by the hash of its name ("jq").
const JOB_QUEUE_LOCKS: i32 = 0x6a71;

/// Whether `sliver_urn` has a job queued or running (a job queued now
/// waits for it); never for a job of no sliver.
fn pending_for(conn: &mut Conn, sliver_urn: Option<&str>) -> StoreResult<bool> {
    let Some(sliver) = sliver_urn else {
        return Ok(false);
    };
    let pending = natively!(conn, |c| jobs::table
        .filter(jobs::sliver_urn.eq(sliver))
        .filter(super::filters::pending_job())
        .select(jobs::id)
        .first::<String>(c)
        .optional())?;
    Ok(pending.is_some())
}

/// Marks the queued jobs of `sliver_urn` done: once its VM is to be
/// destroyed they have nothing left to do, and waiting behind them (some
/// in retry backoff) would only delay the destroy.
fn supersede_queued(conn: &mut Conn, sliver_urn: &str, now: DateTime<Utc>) -> StoreResult<()> {
    let queued = jobs::table
        .filter(jobs::sliver_urn.eq(sliver_urn))
        .filter(jobs::state.eq(JobState::Queued));
    diesel::update(queued)
        .set((
            jobs::state.eq(JobState::Done),
            jobs::last_error.eq("superseded by the destruction of the sliver"),
            jobs::updated_at.eq(UnixTime::from(now)),
        ))
        .cached()
        .execute(conn)?;
    Ok(())
}

/// True for a job with no earlier job of its sliver still queued or
/// running: the jobs of one sliver run in `seq` order.
fn first_of_its_sliver() -> diesel::expression::SqlLiteral<diesel::sql_types::Bool> {
    diesel::dsl::sql(&format!(
        "NOT EXISTS (SELECT 1 FROM jobs AS earlier \
         WHERE earlier.sliver_urn = jobs.sliver_urn AND earlier.seq < jobs.seq \
         AND earlier.state IN ('{}', '{}'))",
        JobState::Queued.as_str(),
        JobState::Running.as_str()
    ))
}

/// 0 for destructions, 1 for other jobs: due destructions are claimed
/// first, so that after an outage the VMs of deleted slivers go before
/// new ones are made, and their capacity is free for them.
fn destructions_first() -> diesel::expression::SqlLiteral<diesel::sql_types::Integer> {
    diesel::dsl::sql(&format!(
        "CASE WHEN jobs.kind IN ('{}', '{}') THEN 0 ELSE 1 END",
        JobKind::Destroy.as_str(),
        JobKind::DestroyNetwork.as_str()
    ))
}

/// Ids of jobs that may be claimed at `now` (queued and due, or running
/// with an expired lease, and first of their sliver), destructions first
/// then in order of due time and creation; on PostgreSQL the rows are
/// locked and rows locked by other claimers skipped.
fn claimable_ids(conn: &mut Conn, now: DateTime<Utc>, limit: i64) -> StoreResult<Vec<String>> {
    let due = jobs::state
        .eq(JobState::Queued)
        .and(jobs::run_after.le(UnixTime::from(now)));
    let abandoned = jobs::state
        .eq(JobState::Running)
        .and(jobs::lease_expires.le(Some(UnixTime::from(now))));
    let query = jobs::table
        .filter(due.or(abandoned))
        .filter(first_of_its_sliver())
        .order((destructions_first(), jobs::run_after, jobs::seq))
        .select(jobs::id)
        .limit(limit);
    Ok(match conn {
        Conn::Postgres(pg) => query.for_update().skip_locked().cached().load(pg)?,
        Conn::Sqlite(sqlite) => query.cached().load(sqlite)?,
    })
}

/// Sets the state of job `id` if `owner` holds it; true when it did.
pub(super) fn release(
    conn: &mut Conn,
    id: &str,
    owner: &str,
    state: JobState,
    error: &str,
    run_after: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> StoreResult<bool> {
    let target = jobs::table
        .filter(jobs::id.eq(id))
        .filter(jobs::lease_owner.eq(owner));
    let changed = diesel::update(target)
        .set((
            jobs::state.eq(state),
            jobs::last_error.eq(error),
            jobs::lease_owner.eq(None::<String>),
            jobs::lease_expires.eq(None::<UnixTime>),
            run_after.map(|t| jobs::run_after.eq(UnixTime::from(t))),
            jobs::updated_at.eq(UnixTime::from(now)),
        ))
        .cached()
        .execute(conn)?;
    Ok(changed == 1)
}

/// Claims up to `limit` due jobs for `owner` in the caller's transaction, in
/// the order they are to run.
pub(super) fn claim(
    conn: &mut Conn,
    owner: &str,
    now: DateTime<Utc>,
    lease: TimeDelta,
    limit: i64,
) -> StoreResult<Vec<JobRow>> {
    // One statement per job (there are `limit` at most, usually one):
    // the update and the read by id stay prepared, while an `IN (…)` of
    // any length would be a new statement text (see `super::cached`).
    let mut claimed = Vec::new();
    for id in claimable_ids(conn, now, limit)? {
        diesel::update(jobs::table.filter(jobs::id.eq(&id)))
            .set((
                jobs::state.eq(JobState::Running),
                jobs::lease_owner.eq(owner),
                jobs::lease_expires.eq(Some(UnixTime::from(now + lease))),
                jobs::attempts.eq(jobs::attempts + 1),
                jobs::updated_at.eq(UnixTime::from(now)),
            ))
            .cached()
            .execute(conn)?;
        claimed.push(jobs::table.filter(jobs::id.eq(&id)).first(conn)?);
    }
    Ok(claimed)
}

impl Store {
    /// Claims up to `limit` due jobs for worker `owner` with a lease of
    /// `lease`; each claim counts as an attempt.
    ///
    /// On SQLite a read, beside the writers, looks for a claimable job
    /// first, and only a claim that has one to take writes. A claim is a
    /// write transaction in the turn every API write waits for, and most
    /// claims find nothing: an idle worker looks every `idle_poll_ms`,
    /// which kept the writers' connection ([`Store::write`]) from ever
    /// being closed unused (2 MB resident after a load), and under load
    /// half of the claims of workers woken by the bell found the job taken
    /// by another (7,000 of 14,000 over 3,000 lifecycles). A job committed
    /// after the read's snapshot rings the bell after it, so the worker
    /// looks again at once.
    pub fn claim_jobs(
        &self,
        owner: &str,
        now: DateTime<Utc>,
        lease: TimeDelta,
        limit: i64,
    ) -> StoreResult<Vec<JobRow>> {
        if !self.is_postgres() && self.read(|conn| claimable_ids(conn, now, 1))?.is_empty() {
            return Ok(Vec::new());
        }
        self.write(|conn| claim(conn, owner, now, lease, limit))
    }

    /// Marks job `id` done; false when `owner` no longer holds it.
    pub fn finish_job(&self, id: &str, owner: &str, now: DateTime<Utc>) -> StoreResult<bool> {
        self.write(|conn| release(conn, id, owner, JobState::Done, "", None, now))
    }

    /// Puts job `id` back in the queue until `run_after`, recording `error`.
    pub fn retry_job(
        &self,
        id: &str,
        owner: &str,
        error: &str,
        run_after: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        let after = Some(run_after);
        self.write(|conn| release(conn, id, owner, JobState::Queued, error, after, now))
    }

    /// Puts job `id` back in the queue until `run_after` without counting
    /// the attempt: it could not run yet (`reason`), which is no failure.
    pub fn defer_job(
        &self,
        id: &str,
        owner: &str,
        reason: &str,
        run_after: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        let after = Some(run_after);
        self.write(|conn| {
            let held = release(conn, id, owner, JobState::Queued, reason, after, now)?;
            if held {
                diesel::update(jobs::table.filter(jobs::id.eq(id)))
                    .set(jobs::attempts.eq(jobs::attempts - 1))
                    .cached()
                    .execute(conn)?;
            }
            Ok(held)
        })
    }

    /// Gives up on job `id`, recording `error`.
    pub fn fail_job(
        &self,
        id: &str,
        owner: &str,
        error: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        self.write(|conn| release(conn, id, owner, JobState::Failed, error, None, now))
    }

    /// Ends now the leases of running jobs that `instance` holds from a
    /// run other than `run` (its process was killed mid-job and is
    /// starting again), so they are claimed again at once; returns how
    /// many. Leases of other instances are left to expire.
    pub fn reclaim_leases(
        &self,
        instance: &str,
        run: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<usize> {
        self.write(|conn| {
            let leased: Vec<(String, Option<String>)> = jobs::table
                .filter(jobs::state.eq(JobState::Running))
                .select((jobs::id, jobs::lease_owner))
                .load(conn)?;
            let stale: Vec<String> = leased
                .into_iter()
                .filter(|(_, owner)| {
                    owner
                        .as_deref()
                        .and_then(|owner| owner.rsplit_once('/'))
                        .is_some_and(|(of, by)| of == instance && !by.starts_with(run))
                })
                .map(|(id, _)| id)
                .collect();
            diesel::update(jobs::table.filter(jobs::id.eq_any(&stale)))
                .set((
                    jobs::lease_expires.eq(Some(UnixTime::from(now))),
                    jobs::updated_at.eq(UnixTime::from(now)),
                ))
                .execute(conn)?;
            Ok(stale.len())
        })
    }

    /// Whether a VM's destruction is queued or running: the cloud is
    /// about to have more room than it has now.
    pub fn destructions_pending(&self) -> StoreResult<bool> {
        self.read(|conn| {
            let pending: i64 = jobs::table
                .filter(jobs::kind.eq(JobKind::Destroy))
                .filter(super::filters::pending_job())
                .count()
                .get_result(conn)?;
            Ok(pending > 0)
        })
    }

    /// When the next queued job is due, if any is queued.
    pub fn next_job_due(&self) -> StoreResult<Option<DateTime<Utc>>> {
        self.read(|conn| {
            let due: Option<UnixTime> = jobs::table
                .filter(jobs::state.eq(JobState::Queued))
                .select(diesel::dsl::min(jobs::run_after))
                .first(conn)?;
            Ok(due.map(|t| t.get()))
        })
    }

    /// The jobs handed to worker `owner` since it said it was idle
    /// ([`hand_off::HandOff::take`]), read by the worker: those it still
    /// holds, running under its lease (a job whose lease ran out before it
    /// was taken may have been claimed again by another). When they cannot
    /// be read they stay handed to `owner`, for its next look.
    pub fn take_handed(&self, owner: &str) -> StoreResult<Vec<JobRow>> {
        let ids = self.hand_off().take(owner);
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let read = self.read(|conn| {
            let mut held = Vec::with_capacity(ids.len());
            for id in &ids {
                let row = jobs::table
                    .find(id)
                    .filter(jobs::state.eq(JobState::Running))
                    .filter(jobs::lease_owner.eq(owner))
                    .first(conn)
                    .optional()?;
                match row {
                    Some(row) => held.push(row),
                    None => tracing::warn!(job = %id, owner, "a job handed to this worker is no longer its own; left to whoever holds it"),
                }
            }
            Ok(held)
        });
        if read.is_err() {
            self.hand_off().give_back(owner, ids);
        }
        read
    }

    /// Every job of `sliver_urn`, oldest first (for tests and operators).
    pub fn jobs_of_sliver(&self, sliver_urn: &str) -> StoreResult<Vec<JobRow>> {
        self.read(|conn| {
            Ok(jobs::table
                .filter(jobs::sliver_urn.eq(sliver_urn))
                .order(jobs::seq)
                .load(conn)?)
        })
    }
}
