//! What the operator sees of the aggregate: read-only views over the store
//! for `geni-am admin` (its tables and `--json`) and the operator's
//! dashboard and metrics — slices with their slivers counted by state,
//! slivers with where they run and why they failed, the job queue, the
//! audit log, capacity per host as the aggregate counts it (the counting
//! the advertisement and Allocate use, `store::components::usage`),
//! slices expiring soon, and whether the aggregate is draining.
//!
//! Every view is a plain struct that serialises (serde) with stable keys;
//! times serialise as the AM writes them (`YYYY-MM-DDTHH:MM:SSZ`). Each
//! function reads in one transaction and changes nothing; it takes the
//! store and, where ages or expiries are judged, the time to judge them
//! at. The API of this module only grows: fields and functions are added,
//! never renamed.

use super::CoreError;
use crate::model::{AllocationState, EventKind, JobKind, JobState, OperationalState};
use crate::store::components::{self, Usage};
pub use crate::store::listing::StateFilter;
use crate::store::listing::{self, SliverListing};
use crate::store::{Store, UnixTime, drain};
use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use std::collections::BTreeMap;

/// How times serialise: as the AM writes them.
mod geni_time {
    use chrono::{DateTime, Utc};
    use serde::Serializer;

    /// `YYYY-MM-DDTHH:MM:SSZ`.
    pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::time::format(t))
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`, or null.
    pub mod option {
        use chrono::{DateTime, Utc};
        use serde::Serializer;

        /// The time or null.
        pub fn serialize<S: Serializer>(
            t: &Option<DateTime<Utc>>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            match t {
                Some(t) => super::serialize(t, s),
                None => s.serialize_none(),
            }
        }
    }
}

/// Who shut a slice down and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShutDown {
    /// The caller of Shutdown (a user URN) or `operator <name>`, when
    /// recorded.
    pub by: Option<String>,
    /// Why, when the operator said so.
    pub reason: Option<String>,
}

/// One slice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SliceSummary {
    /// Slice URN.
    pub urn: String,
    /// When the aggregate first saw it.
    #[serde(with = "geni_time")]
    pub created: DateTime<Utc>,
    /// Expiry of the latest slice credential presented (the slice's own
    /// expiry as its authority stated it).
    #[serde(with = "geni_time")]
    pub credential_expires: DateTime<Utc>,
    /// The earliest expiry of its live slivers (when the first of them is
    /// reclaimed unless renewed); `None` without live slivers.
    #[serde(with = "geni_time::option")]
    pub next_expiry: Option<DateTime<Utc>>,
    /// Live slivers in all.
    pub live_slivers: i64,
    /// Live slivers by state: `geni_allocated` for the allocated ones,
    /// the operational state (`geni_ready`, `geni_failed`, …) for the
    /// provisioned ones.
    pub by_state: BTreeMap<String, i64>,
    /// Set when the slice was shut down.
    pub shut_down: Option<ShutDown>,
}

/// The key a live sliver is counted under in [`SliceSummary::by_state`].
fn state_key(allocation: AllocationState, operational: OperationalState) -> &'static str {
    match allocation {
        AllocationState::Provisioned => operational.as_str(),
        other => other.as_str(),
    }
}

/// Every slice known here, by URN.
pub fn slices(store: &Store) -> Result<Vec<SliceSummary>, CoreError> {
    let (rows, counts) = store.read(|conn| {
        Ok::<_, CoreError>((listing::all_slices(conn)?, listing::live_counts(conn)?))
    })?;
    let mut summaries: BTreeMap<String, SliceSummary> = rows
        .into_iter()
        .map(|row| {
            let shut_down = row.shut_down.then(|| ShutDown {
                by: row.shut_down_by.clone(),
                reason: row.shut_down_reason.clone(),
            });
            let summary = SliceSummary {
                urn: row.urn.clone(),
                created: row.created_at.get(),
                credential_expires: row.credential_expires.get(),
                next_expiry: None,
                live_slivers: 0,
                by_state: BTreeMap::new(),
                shut_down,
            };
            (row.urn, summary)
        })
        .collect();
    for count in counts {
        let Some(summary) = summaries.get_mut(&count.slice_urn) else {
            continue;
        };
        summary.live_slivers += count.count;
        *summary
            .by_state
            .entry(state_key(count.allocation_state, count.operational_state).to_owned())
            .or_default() += count.count;
        let first = count.first_expiry.map(UnixTime::get);
        summary.next_expiry = match (summary.next_expiry, first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    Ok(summaries.into_values().collect())
}

/// The slice `urn`, if known here.
pub fn slice(store: &Store, urn: &str) -> Result<Option<SliceSummary>, CoreError> {
    Ok(slices(store)?.into_iter().find(|s| s.urn == urn))
}

/// The slices with a live sliver expiring before `now + within`, the
/// soonest first.
pub fn expiring(
    store: &Store,
    now: DateTime<Utc>,
    within: TimeDelta,
) -> Result<Vec<SliceSummary>, CoreError> {
    let horizon = now + within;
    let mut soon: Vec<SliceSummary> = slices(store)?
        .into_iter()
        .filter(|s| s.next_expiry.is_some_and(|t| t <= horizon))
        .collect();
    soon.sort_by_key(|s| s.next_expiry);
    Ok(soon)
}

/// One sliver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SliverSummary {
    /// Sliver URN.
    pub urn: String,
    /// Its slice.
    pub slice_urn: String,
    /// The node's `client_id` in the request.
    pub client_id: String,
    /// Allocation state.
    pub allocation_state: AllocationState,
    /// Operational state.
    pub operational_state: OperationalState,
    /// Expiry of its current allocation state.
    #[serde(with = "geni_time")]
    pub expires: DateTime<Utc>,
    /// The component (host) it is placed on, its URN.
    pub component_id: String,
    /// The host's short name (the last part of the component URN).
    pub host: String,
    /// The backend's handle on its VM (OpenNebula VM id), once created.
    pub vm: Option<String>,
    /// The VM's address on the control network, once known.
    pub address: Option<String>,
    /// Its last error, empty if none.
    pub error: String,
    /// When it was deleted (only for `geni_unallocated` slivers).
    #[serde(with = "geni_time::option")]
    pub deleted: Option<DateTime<Utc>>,
}

impl From<SliverListing> for SliverSummary {
    fn from(row: SliverListing) -> Self {
        let host = short_name(&row.component_id).to_owned();
        let annotations = row.annotations.into_value();
        SliverSummary {
            urn: row.urn,
            slice_urn: row.slice_urn,
            client_id: row.client_id,
            allocation_state: row.allocation_state,
            operational_state: row.operational_state,
            expires: row.expires_at.get(),
            component_id: row.component_id,
            host,
            vm: annotations.backend_id,
            address: annotations.address,
            error: row.error,
            deleted: row.deleted_at.map(UnixTime::get),
        }
    }
}

/// The name part of a URN (`…+node+h1` → `h1`).
fn short_name(urn: &str) -> &str {
    urn.splitn(4, '+').nth(3).unwrap_or(urn)
}

/// The slivers of `slice` (all slices when `None`) in `state` (the live
/// ones when `None`; [`StateFilter::Allocation`] of `geni_unallocated`
/// lists the deleted ones the store still keeps), oldest first.
pub fn slivers(
    store: &Store,
    slice: Option<&str>,
    state: Option<StateFilter>,
) -> Result<Vec<SliverSummary>, CoreError> {
    let rows = store.read(|conn| listing::slivers(conn, slice, state))?;
    Ok(rows.into_iter().map(SliverSummary::from).collect())
}

/// One job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobSummary {
    /// Its id.
    pub id: String,
    /// What it does.
    pub kind: JobKind,
    /// Slice concerned.
    pub slice_urn: String,
    /// Sliver concerned (a link's sliver for a network's destruction).
    pub sliver_urn: Option<String>,
    /// Where it is.
    pub state: JobState,
    /// How many times a worker took it.
    pub attempts: i64,
    /// When it was queued.
    #[serde(with = "geni_time")]
    pub created: DateTime<Utc>,
    /// Seconds since it was queued.
    pub age_secs: i64,
    /// Not run before (its retry time).
    #[serde(with = "geni_time")]
    pub run_after: DateTime<Utc>,
    /// Why its last attempt failed (or why it waits), empty if none.
    pub last_error: String,
}

/// The job queue, or its failures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobQueue {
    /// Jobs waiting to run.
    pub queued: i64,
    /// Jobs a worker holds.
    pub running: i64,
    /// Seconds the oldest queued job has waited; `None` when none waits.
    pub oldest_queued_age_secs: Option<i64>,
    /// The jobs listed: queued and running ones, or the failed ones.
    pub jobs: Vec<JobSummary>,
}

/// The queue (queued and running jobs) at `now`, or with `failed_only`
/// the jobs given up (kept until the retention purges them), in queue
/// order (with `limit`, only the first so many), with the queue's depth
/// either way.
pub fn jobs(
    store: &Store,
    now: DateTime<Utc>,
    failed_only: bool,
    limit: Option<usize>,
) -> Result<JobQueue, CoreError> {
    let limit = limit.map(|n| i64::try_from(n).unwrap_or(i64::MAX));
    let ((queued, running, oldest), rows) = store.read(|conn| {
        Ok::<_, CoreError>((
            listing::queue_depth(conn)?,
            listing::jobs(conn, failed_only, limit)?,
        ))
    })?;
    let age = |t: DateTime<Utc>| (now - t).num_seconds().max(0);
    Ok(JobQueue {
        queued,
        running,
        oldest_queued_age_secs: oldest.map(age),
        jobs: rows
            .into_iter()
            .map(|row| JobSummary {
                id: row.id,
                kind: row.kind,
                slice_urn: row.slice_urn,
                sliver_urn: row.sliver_urn,
                state: row.state,
                attempts: row.attempts,
                created: row.created_at.get(),
                age_secs: age(row.created_at.get()),
                run_after: row.run_after.get(),
                last_error: row.last_error,
            })
            .collect(),
    })
}

/// One entry of the audit log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventSummary {
    /// Order of logging.
    pub seq: i64,
    /// When.
    #[serde(with = "geni_time")]
    pub at: DateTime<Utc>,
    /// What happened (`allocate`, `delete`, `shutdown`, `drain`, a job's
    /// kind when one was queued, …).
    pub kind: EventKind,
    /// Slice concerned.
    pub slice_urn: Option<String>,
    /// Sliver concerned.
    pub sliver_urn: Option<String>,
    /// Who and why, for people.
    pub detail: String,
}

/// The audit log of `slice` (all slices when `None`) from `since` on: the
/// last `limit` events, oldest first.
pub fn events(
    store: &Store,
    slice: Option<&str>,
    since: Option<DateTime<Utc>>,
    limit: usize,
) -> Result<Vec<EventSummary>, CoreError> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = store.read(|conn| listing::events(conn, slice, since, limit))?;
    Ok(rows
        .into_iter()
        .map(|row| EventSummary {
            seq: row.seq,
            at: row.at.get(),
            kind: row.kind,
            slice_urn: row.slice_urn,
            sliver_urn: row.sliver_urn,
            detail: row.detail,
        })
        .collect())
}

/// One host's capacity as the aggregate counts it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostCapacity {
    /// Component URN.
    pub component_id: String,
    /// Short name.
    pub name: String,
    /// Whether the backend reports it usable.
    pub available: bool,
    /// Handed out whole (one sliver at a time).
    pub exclusive: bool,
    /// CPU capacity (in the component's unit: cores for the simulated
    /// cloud, hundredths of a CPU share for OpenNebula).
    pub cpus: i64,
    /// CPU capacity reserved by slivers.
    pub cpus_used: i64,
    /// CPU capacity left.
    pub cpus_free: i64,
    /// Memory (MiB).
    pub memory_mb: i64,
    /// Memory reserved (MiB).
    pub memory_mb_used: i64,
    /// Memory left (MiB).
    pub memory_mb_free: i64,
    /// Most VMs at once.
    pub vms: i64,
    /// VMs counted on it (live slivers and VMs still to be destroyed).
    pub vms_used: i64,
    /// VMs it can still take (0 while a sliver holds it exclusively).
    pub vms_free: i64,
}

/// Capacity per host at `now`, by component id: what live, unexpired
/// slivers and VMs awaiting destruction take, as Allocate and
/// ListResources count it.
pub fn capacity(store: &Store, now: DateTime<Utc>) -> Result<Vec<HostCapacity>, CoreError> {
    let (hosts, usage) = store
        .read(|conn| Ok::<_, CoreError>((components::all(conn)?, components::usage(conn, now)?)))?;
    let none = Usage::default();
    Ok(hosts
        .into_iter()
        .map(|c| {
            let used = usage.get(&c.id).unwrap_or(&none);
            let held = used.exclusive || (c.exclusive && used.slivers > 0);
            HostCapacity {
                available: c.available,
                exclusive: c.exclusive,
                cpus: c.cpus,
                cpus_used: used.cpus,
                cpus_free: (c.cpus - used.cpus).max(0),
                memory_mb: c.memory_mb,
                memory_mb_used: used.memory_mb,
                memory_mb_free: (c.memory_mb - used.memory_mb).max(0),
                vms: c.max_vms,
                vms_used: used.slivers,
                vms_free: if held {
                    0
                } else {
                    (c.max_vms - used.slivers).max(0)
                },
                component_id: c.id,
                name: c.name,
            }
        })
        .collect())
}

/// Whether the aggregate is draining.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DrainState {
    /// True while new slivers are refused.
    pub draining: bool,
    /// Since when.
    #[serde(with = "geni_time::option")]
    pub since: Option<DateTime<Utc>>,
    /// The operator who began it.
    pub operator: Option<String>,
    /// Why, as the operator said (may be empty).
    pub reason: Option<String>,
}

impl From<Option<drain::Drain>> for DrainState {
    fn from(drain: Option<drain::Drain>) -> Self {
        match drain {
            Some(d) => DrainState {
                draining: true,
                since: Some(d.since),
                operator: Some(d.operator),
                reason: Some(d.reason),
            },
            None => DrainState {
                draining: false,
                since: None,
                operator: None,
                reason: None,
            },
        }
    }
}

/// Whether the aggregate is draining, since when and why.
pub fn drain(store: &Store) -> Result<DrainState, CoreError> {
    Ok(store.read(drain::current)?.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provisioned_slivers_count_under_their_operational_state() {
        assert_eq!(
            state_key(AllocationState::Provisioned, OperationalState::Ready),
            "geni_ready"
        );
        assert_eq!(
            state_key(
                AllocationState::Allocated,
                OperationalState::PendingAllocation
            ),
            "geni_allocated"
        );
        assert_eq!(short_name("urn:publicid:IDN+am.example+node+h1"), "h1");
        assert_eq!(short_name("h1"), "h1");
    }
}
