//! The operator's reads of the store (`core::overview`, behind
//! `geni-am admin` and the operator dashboard): slices, slivers, jobs and
//! the audit log as lists, each reading only the columns it shows. None of
//! them locks anything: on SQLite a read runs beside the one writer (WAL),
//! on PostgreSQL it reads a snapshot.

use super::events::EventRow;
use super::schema::{events, jobs, slices, slivers};
use super::slices::SliceRow;
use super::{Conn, Json, MultiBackend, StoreResult, UnixTime};
use crate::model::{AllocationState, JobKind, JobState, OperationalState, SliverAnnotations};
use chrono::{DateTime, Utc};
use diesel::dsl::{count_star, min};
use diesel::prelude::*;

/// Which slivers a listing shows, by state: an allocation state (also
/// `geni_unallocated`, the deleted slivers the retention still keeps) or
/// the operational state of live slivers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateFilter {
    /// Slivers in this allocation state.
    Allocation(AllocationState),
    /// Live slivers in this operational state.
    Operational(OperationalState),
}

impl StateFilter {
    /// The state named `text`: a GENI allocation or operational state
    /// name, with or without its `geni_` prefix (`ready`, `geni_failed`,
    /// `provisioned`).
    pub fn parse(text: &str) -> Option<StateFilter> {
        let text = text.trim().to_ascii_lowercase();
        let full = if text.starts_with("geni_") {
            text
        } else {
            format!("geni_{text}")
        };
        AllocationState::parse(&full)
            .map(StateFilter::Allocation)
            .or_else(|| OperationalState::parse(&full).map(StateFilter::Operational))
    }
}

/// How many live slivers of one slice are in one pair of states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SliverCount {
    /// The slice.
    pub slice_urn: String,
    /// Their allocation state.
    pub allocation_state: AllocationState,
    /// Their operational state.
    pub operational_state: OperationalState,
    /// How many.
    pub count: i64,
    /// The earliest expiry among them.
    pub first_expiry: Option<UnixTime>,
}

/// Every slice known here, by URN.
pub fn all_slices(conn: &mut Conn) -> StoreResult<Vec<SliceRow>> {
    Ok(slices::table.order(slices::urn).load(conn)?)
}

/// The live slivers counted by slice and states.
pub fn live_counts(conn: &mut Conn) -> StoreResult<Vec<SliverCount>> {
    let rows: Vec<(
        String,
        AllocationState,
        OperationalState,
        i64,
        Option<UnixTime>,
    )> = slivers::table
        .filter(super::filters::live_sliver())
        .group_by((
            slivers::slice_urn,
            slivers::allocation_state,
            slivers::operational_state,
        ))
        .select((
            slivers::slice_urn,
            slivers::allocation_state,
            slivers::operational_state,
            count_star(),
            min(slivers::expires_at),
        ))
        .load(conn)?;
    Ok(rows
        .into_iter()
        .map(
            |(slice_urn, allocation_state, operational_state, count, first_expiry)| SliverCount {
                slice_urn,
                allocation_state,
                operational_state,
                count,
                first_expiry,
            },
        )
        .collect())
}

/// A sliver as the operator sees it.
#[derive(Debug, Clone, PartialEq, Eq, Queryable)]
pub struct SliverListing {
    /// Its URN.
    pub urn: String,
    /// Its slice.
    pub slice_urn: String,
    /// The node's `client_id` in the request.
    pub client_id: String,
    /// The component it is placed on.
    pub component_id: String,
    /// Allocation state.
    pub allocation_state: AllocationState,
    /// Operational state.
    pub operational_state: OperationalState,
    /// Expiry of the current allocation state.
    pub expires_at: UnixTime,
    /// Last error, empty if none.
    pub error: String,
    /// What the backend reported (its VM id, addresses).
    pub annotations: Json<SliverAnnotations>,
    /// When it was deleted, `None` while it is live.
    pub deleted_at: Option<UnixTime>,
}

/// The slivers of `slice` (every slice when `None`) in `state` (live ones
/// when `None`), oldest first (those of one second by slice and
/// `client_id`).
pub fn slivers(
    conn: &mut Conn,
    slice: Option<&str>,
    state: Option<StateFilter>,
) -> StoreResult<Vec<SliverListing>> {
    let mut query = slivers::table
        .select((
            slivers::urn,
            slivers::slice_urn,
            slivers::client_id,
            slivers::component_id,
            slivers::allocation_state,
            slivers::operational_state,
            slivers::expires_at,
            slivers::error,
            slivers::annotations,
            slivers::deleted_at,
        ))
        .order((slivers::created_at, slivers::slice_urn, slivers::client_id))
        .into_boxed::<MultiBackend>();
    if let Some(slice) = slice {
        query = query.filter(slivers::slice_urn.eq(slice.to_owned()));
    }
    query = match state {
        None => query.filter(super::filters::live_sliver()),
        Some(StateFilter::Allocation(s)) => query.filter(slivers::allocation_state.eq(s)),
        Some(StateFilter::Operational(s)) => query
            .filter(super::filters::live_sliver())
            .filter(slivers::operational_state.eq(s)),
    };
    Ok(query.load(conn)?)
}

/// A job as the operator sees it (without its payload or lease).
#[derive(Debug, Clone, PartialEq, Eq, Queryable)]
pub struct JobListing {
    /// Its id.
    pub id: String,
    /// What it does.
    pub kind: JobKind,
    /// Slice concerned.
    pub slice_urn: String,
    /// Sliver concerned.
    pub sliver_urn: Option<String>,
    /// Where it is.
    pub state: JobState,
    /// How many times it was claimed.
    pub attempts: i64,
    /// Not before.
    pub run_after: UnixTime,
    /// Why the last attempt failed.
    pub last_error: String,
    /// Created.
    pub created_at: UnixTime,
    /// Last changed.
    pub updated_at: UnixTime,
}

/// The failed jobs (`failed_only`) or the queue (queued and running
/// jobs), in queue order; with `limit`, only the first so many.
pub fn jobs(
    conn: &mut Conn,
    failed_only: bool,
    limit: Option<i64>,
) -> StoreResult<Vec<JobListing>> {
    let query = jobs::table
        .select((
            jobs::id,
            jobs::kind,
            jobs::slice_urn,
            jobs::sliver_urn,
            jobs::state,
            jobs::attempts,
            jobs::run_after,
            jobs::last_error,
            jobs::created_at,
            jobs::updated_at,
        ))
        .order(jobs::seq)
        .into_boxed::<MultiBackend>();
    let query = if failed_only {
        query.filter(jobs::state.eq(JobState::Failed))
    } else {
        query.filter(super::filters::pending_job())
    };
    let query = match limit {
        Some(limit) => query.limit(limit),
        None => query,
    };
    Ok(query.load(conn)?)
}

/// How many jobs are queued and running, and when the oldest queued one
/// was created.
pub fn queue_depth(conn: &mut Conn) -> StoreResult<(i64, i64, Option<DateTime<Utc>>)> {
    let count = |conn: &mut Conn, state: JobState| -> StoreResult<i64> {
        Ok(jobs::table
            .filter(jobs::state.eq(state))
            .count()
            .get_result(conn)?)
    };
    let queued = count(conn, JobState::Queued)?;
    let running = count(conn, JobState::Running)?;
    let oldest: Option<UnixTime> = jobs::table
        .filter(jobs::state.eq(JobState::Queued))
        .select(min(jobs::created_at))
        .first(conn)?;
    Ok((queued, running, oldest.map(|t| t.get())))
}

/// The audit log of `slice` (every slice when `None`) from `since` on:
/// the last `limit` events, oldest first.
pub fn events(
    conn: &mut Conn,
    slice: Option<&str>,
    since: Option<DateTime<Utc>>,
    limit: i64,
) -> StoreResult<Vec<EventRow>> {
    let mut query = events::table
        .order(events::seq.desc())
        .limit(limit)
        .into_boxed::<MultiBackend>();
    if let Some(slice) = slice {
        query = query.filter(events::slice_urn.eq(slice.to_owned()));
    }
    if let Some(since) = since {
        query = query.filter(events::at.ge(UnixTime::from(since)));
    }
    let mut rows: Vec<EventRow> = query.load(conn)?;
    rows.reverse();
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_are_named_with_or_without_their_prefix() {
        assert_eq!(
            StateFilter::parse("ready"),
            Some(StateFilter::Operational(OperationalState::Ready))
        );
        assert_eq!(
            StateFilter::parse("GENI_PROVISIONED"),
            Some(StateFilter::Allocation(AllocationState::Provisioned))
        );
        assert_eq!(
            StateFilter::parse("geni_unallocated"),
            Some(StateFilter::Allocation(AllocationState::Unallocated))
        );
        assert_eq!(StateFilter::parse("running"), None);
    }
}
