//! Slivers: one row per node the AM handed out, from Allocate until the
//! retention period after Delete (URNs are
//! UUIDs, so they are never reused).
//!
//! The core reads and writes them inside its transactions; the backend
//! workers report what they do and observe through the `impl Store`
//! methods here. Every write raises the sliver's version, and an
//! observation of the backend is recorded only over the version it was
//! taken against ([`Store::record_observation`]): an observation older
//! than another writer's transition never moves the sliver back.

mod changes;

use super::cached::CachedDsl;
use super::native::natively;
use super::schema::slivers;
use super::{Conn, Json, Store, StoreResult, UnixTime, events, jobs};
use crate::model::plan::NodePlan;
use crate::model::{
    AllocationState, EventKind, JobKind, OperationalState, SliverAnnotations, SliverInfo,
};
use changes::Changes;
use chrono::{DateTime, Utc};
use diesel::prelude::*;

/// A sliver as stored.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Insertable)]
#[diesel(table_name = slivers)]
pub struct SliverRow {
    /// `urn:publicid:IDN+<authority>+sliver+<uuid>`.
    pub urn: String,
    /// Its slice.
    pub slice_urn: String,
    /// The request document it came from.
    pub request_id: String,
    /// The node's `client_id` in that request.
    pub client_id: String,
    /// The component it is placed on.
    pub component_id: String,
    /// Sliver type name.
    pub sliver_type: String,
    /// Disk image URN, when the request named one.
    pub disk_image: Option<String>,
    /// CPUs reserved.
    pub cpus: i64,
    /// Memory reserved (MiB).
    pub memory_mb: i64,
    /// Whether it holds its component exclusively.
    pub exclusive: bool,
    /// Allocation state.
    pub allocation_state: AllocationState,
    /// Operational state.
    pub operational_state: OperationalState,
    /// Expiry of the current allocation state.
    pub expires_at: UnixTime,
    /// Last error, empty if none.
    pub error: String,
    /// What the backend reported.
    pub annotations: Json<SliverAnnotations>,
    /// Created.
    pub created_at: UnixTime,
    /// Raised by every write ([`save`]); compared by the writes that must
    /// not overwrite a change made since the row was read.
    pub version: i64,
    /// When it was deleted, `None` while it is live.
    pub deleted_at: Option<UnixTime>,
    /// Disk size granted (GB), when the request sized the disk.
    pub disk_gb: Option<i64>,
    /// Cores (VCPUs) granted; `None` on rows of earlier releases, whose
    /// `cpus` counted cores.
    pub cores: Option<i64>,
    /// Memory granted (MiB); `None` on rows of earlier releases, whose
    /// `memory_mb` held it.
    pub ram_mb: Option<i64>,
    /// The node plan (`model::plan::NodePlan`) as JSON, written at
    /// Allocate; `None` on rows of earlier releases.
    pub plan: Option<Json<NodePlan>>,
}

impl SliverRow {
    /// The size granted at Allocate (cores, memory, disk when sized), as
    /// the VM is created and the manifest shows it (also after a failure
    /// released its capacity).
    pub fn granted_size(&self) -> Option<geni_rspec::VmSize> {
        Some(geni_rspec::VmSize {
            cores: u32::try_from(self.cores.unwrap_or(self.cpus)).ok()?,
            ram_mb: u64::try_from(self.ram_mb.unwrap_or(self.memory_mb)).ok()?,
            disk_gb: self.disk_gb.and_then(|gb| u64::try_from(gb).ok()),
        })
    }

    /// The sliver-info report of this sliver.
    pub fn info(&self) -> SliverInfo {
        SliverInfo {
            urn: self.urn.clone(),
            client_id: self.client_id.clone(),
            allocation: self.allocation_state,
            operational: self.operational_state,
            expires: self.expires_at.get(),
            error: self.error.clone(),
        }
    }

    /// Sets both states.
    pub fn set_states(&mut self, allocation: AllocationState, operational: OperationalState) {
        self.allocation_state = allocation;
        self.operational_state = operational;
    }
}

/// Stores a new sliver.
pub fn insert(conn: &mut Conn, row: &SliverRow) -> StoreResult<()> {
    diesel::insert_into(slivers::table)
        .values(row)
        .cached()
        .execute(conn)?;
    Ok(())
}

/// Writes back the columns in which `row` differs from `read` (the same
/// sliver as read in this transaction, see [`changes`]) and raises the
/// version.
pub fn save(conn: &mut Conn, read: &SliverRow, row: &SliverRow) -> StoreResult<()> {
    diesel::update(slivers::table.find(&row.urn))
        .set((
            Changes::between(read, row),
            slivers::version.eq(slivers::version + 1),
        ))
        .cached()
        .execute(conn)?;
    Ok(())
}

/// Writes `row` back as [`save`] does, only if no one wrote the sliver
/// since `read` was read (its version is still `read.version`); true when
/// written.
fn save_if_unchanged(conn: &mut Conn, read: &SliverRow, row: &SliverRow) -> StoreResult<bool> {
    let unchanged = slivers::table
        .find(&row.urn)
        .filter(slivers::version.eq(read.version));
    let written = diesel::update(unchanged)
        .set((
            Changes::between(read, row),
            slivers::version.eq(slivers::version + 1),
        ))
        .cached()
        .execute(conn)?;
    Ok(written == 1)
}

/// The sliver `urn`, in whatever state (also unallocated).
pub fn find(conn: &mut Conn, urn: &str) -> StoreResult<Option<SliverRow>> {
    Ok(natively!(conn, |c| slivers::table
        .find(urn)
        .first(c)
        .optional())?)
}

/// The slice's slivers that hold resources (allocated or provisioned),
/// oldest first.
pub fn live_in_slice(conn: &mut Conn, slice_urn: &str) -> StoreResult<Vec<SliverRow>> {
    Ok(natively!(conn, |c| slivers::table
        .filter(slivers::slice_urn.eq(slice_urn))
        .filter(super::filters::live_sliver())
        .order((slivers::created_at, slivers::client_id))
        .load(c))?)
}

/// The `client_id`s of the slice's live slivers (what Allocate checks a
/// request against: names taken, slivers held), without the rest of the
/// rows.
pub fn live_client_ids(conn: &mut Conn, slice_urn: &str) -> StoreResult<Vec<String>> {
    Ok(natively!(conn, |c| slivers::table
        .filter(slivers::slice_urn.eq(slice_urn))
        .filter(super::filters::live_sliver())
        .select(slivers::client_id)
        .load(c))?)
}

/// Every sliver of `slice_urn`, deleted ones included.
pub fn of_slice(conn: &mut Conn, slice_urn: &str) -> StoreResult<Vec<SliverRow>> {
    Ok(slivers::table
        .filter(slivers::slice_urn.eq(slice_urn))
        .order(slivers::created_at)
        .load(conn)?)
}

/// At most `limit` slivers holding resources, in URN order, those after
/// `after` (from the first when `None`): every live sliver is read a page
/// at a time, so that a reader of all of them never holds them all.
pub fn live_page(conn: &mut Conn, after: Option<&str>, limit: i64) -> StoreResult<Vec<SliverRow>> {
    Ok(slivers::table
        .filter(super::filters::live_sliver_by_urn())
        .filter(slivers::urn.gt(after.unwrap_or_default()))
        .order(slivers::urn)
        .limit(limit)
        .load(conn)?)
}

/// Provisioned slivers waiting for the backend with no job queued or
/// running (the poller's work: a job will change the VM, so its sliver is
/// not judged before it ran). Read through the index on the operational
/// state and, per candidate, the jobs' index by sliver, so that neither
/// the many slivers that wait for nothing nor the many that wait for their
/// job are loaded: the poller runs after every finished job.
pub fn awaiting_backend(conn: &mut Conn) -> StoreResult<Vec<SliverRow>> {
    use super::schema::jobs as job;
    let pending = job::table
        .filter(job::sliver_urn.eq(slivers::urn.nullable()))
        .filter(super::filters::pending_job());
    Ok(slivers::table
        .filter(super::filters::awaiting_backend())
        .filter(slivers::allocation_state.eq(AllocationState::Provisioned))
        .filter(diesel::dsl::not(diesel::dsl::exists(pending)))
        .order((slivers::created_at, slivers::urn))
        .load(conn)?)
}

/// Live slivers whose current state expired at or before `now`.
pub fn expired(conn: &mut Conn, now: DateTime<Utc>) -> StoreResult<Vec<SliverRow>> {
    Ok(slivers::table
        .filter(super::filters::live_sliver())
        .filter(slivers::expires_at.le(UnixTime::from(now)))
        .order(slivers::expires_at)
        .load(conn)?)
}

/// What a worker reports about a sliver: logged as event `kind` with
/// `detail` at `now`.
struct Report<'a> {
    now: DateTime<Utc>,
    kind: EventKind,
    detail: &'a str,
}

/// Updates one live sliver with `change` and logs `report`; returns false
/// when the sliver is unknown or no longer live (deleted slivers are never
/// changed).
fn update_live(
    store: &Store,
    urn: &str,
    report: Report<'_>,
    change: impl FnOnce(&mut SliverRow),
) -> StoreResult<bool> {
    store.write(|conn| {
        change_live(conn, urn, report.now, |row| {
            change(row);
            vec![(report.kind, report.detail.to_owned())]
        })
    })
}

/// Updates one live sliver in the caller's write transaction with
/// `change`, which returns the events to log at `now` (kind and detail);
/// returns false when the sliver is unknown or no longer live (deleted
/// slivers are never changed).
fn change_live(
    conn: &mut Conn,
    urn: &str,
    now: DateTime<Utc>,
    change: impl FnOnce(&mut SliverRow) -> Vec<(EventKind, String)>,
) -> StoreResult<bool> {
    let Some(mut row) = find(conn, urn)? else {
        return Ok(false);
    };
    if let Conn::Postgres(_) = conn {
        // The core changes a slice's slivers holding the slice's row lock
        // (PostgreSQL); without it, a job's update and an API call's (a
        // `geni_start` racing the provision job that records the VM) each
        // wrote back a copy read before the other's commit, and one was
        // lost. The row is read again under the lock. On SQLite the write
        // transaction already excludes the other.
        super::slices::lock(conn, &row.slice_urn)?;
        let Some(locked) = find(conn, urn)? else {
            return Ok(false);
        };
        row = locked;
    }
    if row.allocation_state == AllocationState::Unallocated {
        return Ok(false);
    }
    let read = row.clone();
    let logged = change(&mut row);
    save(conn, &read, &row)?;
    for (kind, detail) in logged {
        events::append(conn, now, Some(&row.slice_urn), Some(urn), kind, &detail)?;
    }
    Ok(true)
}

/// One thing a job did to its sliver or saw of its VM, recorded in the
/// transaction that finishes the job ([`Store::finish_and_claim`]), each step
/// logged as its own event as when written alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SliverStep {
    /// What the backend made for it (VM id, interfaces): an annotations
    /// event.
    Annotations(SliverAnnotations),
    /// The operational state the job moved it to (its error cleared
    /// unless `geni_failed`).
    State(OperationalState),
    /// What the job saw of the VM after its action, as the poller would
    /// have recorded it.
    Observed(Observation),
}

/// Records `steps` over the live sliver `urn` in the caller's write
/// transaction (under the slice's lock, like
/// [`Store::set_operational_state`]); false when there were none or the
/// sliver is no longer live.
pub(super) fn record_steps(
    conn: &mut Conn,
    urn: &str,
    steps: &[SliverStep],
    now: DateTime<Utc>,
) -> StoreResult<bool> {
    if steps.is_empty() {
        return Ok(false);
    }
    change_live(conn, urn, now, |row| {
        steps.iter().map(|step| take(row, step)).collect()
    })
}

/// Applies one step to `row`; returns the event that logs it.
fn take(row: &mut SliverRow, step: &SliverStep) -> (EventKind, String) {
    match step {
        SliverStep::Annotations(annotations) => {
            let json = Json::new(annotations.clone());
            let detail = json.text().to_owned();
            row.annotations = json;
            (EventKind::Annotations, detail)
        }
        SliverStep::State(state) => {
            row.operational_state = *state;
            if *state != OperationalState::Failed {
                row.error.clear();
            }
            (EventKind::OperationalState, state.as_str().to_owned())
        }
        SliverStep::Observed(observation) => {
            observation.apply(row);
            observation.event()
        }
    }
}

/// What a worker saw of a sliver's VM, to be recorded over the sliver as
/// it was read before looking ([`Store::record_observation`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// The operational state the sliver moves to.
    pub state: OperationalState,
    /// The error it carries then (empty unless `geni_failed`).
    pub error: String,
    /// Manifest annotations built from what was seen; `None` keeps the
    /// stored ones.
    pub annotations: Option<SliverAnnotations>,
}

impl Observation {
    /// Sets what was observed on `row`.
    fn apply(&self, row: &mut SliverRow) {
        row.operational_state = self.state;
        row.error.clone_from(&self.error);
        if let Some(annotations) = &self.annotations {
            row.annotations = Json::new(annotations.clone());
        }
    }

    /// The event that logs it: the failure with its message, or the state.
    fn event(&self) -> (EventKind, String) {
        match self.state {
            OperationalState::Failed => (EventKind::Failed, self.error.clone()),
            state => (EventKind::OperationalState, state.as_str().to_owned()),
        }
    }
}

impl Store {
    /// Records `observation` of the sliver `read` (the row as read before
    /// the backend was asked) if no one wrote the sliver since: a job's
    /// transition made after the observation was taken (a start moving
    /// it to `geni_configuring`) wins, and the stale observation is
    /// dropped with a log line. Returns true when recorded; false when
    /// stale or the sliver was deleted.
    pub fn record_observation(
        &self,
        read: &SliverRow,
        observation: &Observation,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        let mut row = read.clone();
        observation.apply(&mut row);
        self.write(|conn| {
            if row.allocation_state == AllocationState::Unallocated
                || !save_if_unchanged(conn, read, &row)?
            {
                let current = find(conn, &row.urn)?;
                tracing::info!(
                    sliver = %row.urn,
                    observed = observation.state.as_str(),
                    read_as = %read.operational_state,
                    now = current.as_ref().map_or("deleted", |c| c.operational_state.as_str()),
                    "observation dropped: the sliver changed after it was taken"
                );
                return Ok(false);
            }
            let (kind, detail) = observation.event();
            events::append(
                conn,
                now,
                Some(&row.slice_urn),
                Some(&row.urn),
                kind,
                &detail,
            )?;
            Ok(true)
        })
    }

    /// Records the operational state a job moved a live sliver to (and
    /// clears its error unless the state is `geni_failed`). Returns false
    /// when the sliver is gone.
    pub fn set_operational_state(
        &self,
        urn: &str,
        state: OperationalState,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        let report = Report {
            now,
            kind: EventKind::OperationalState,
            detail: state.as_str(),
        };
        update_live(self, urn, report, |row| {
            row.operational_state = state;
            if state != OperationalState::Failed {
                row.error.clear();
            }
        })
    }

    /// Records what the backend reported about a live sliver's resources
    /// (backend id, hostname, addresses, logins).
    pub fn set_annotations(
        &self,
        urn: &str,
        annotations: &SliverAnnotations,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        let json = Json::new(annotations.clone());
        let report = Report {
            now,
            kind: EventKind::Annotations,
            detail: json.text(),
        };
        update_live(self, urn, report, |row| row.annotations = json.clone())
    }

    /// Marks a live sliver `geni_failed` with `error` for the experimenter.
    pub fn fail_sliver(&self, urn: &str, error: &str, now: DateTime<Utc>) -> StoreResult<bool> {
        self.fail(urn, error, false, now)
    }

    /// Fails the sliver `urn` whose VM was never created (its creation
    /// was refused): it holds no capacity any more, so what it reserved
    /// is free for other requests at once.
    pub fn fail_unbuilt_sliver(
        &self,
        urn: &str,
        error: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        self.fail(urn, error, true, now)
    }

    /// Marks a live sliver failed, releasing its capacity if `release`.
    fn fail(&self, urn: &str, error: &str, release: bool, now: DateTime<Utc>) -> StoreResult<bool> {
        let report = Report {
            now,
            kind: EventKind::Failed,
            detail: error,
        };
        update_live(self, urn, report, |row| {
            row.operational_state = OperationalState::Failed;
            row.error = error.to_owned();
            if release {
                (row.cpus, row.memory_mb, row.exclusive) = (0, 0, false);
            }
        })
    }

    /// The slice of each sliver of `urns`, `None` for an unknown one.
    /// Reads the slice column alone, in one transaction: a call that
    /// names slivers asks it before its credentials are checked.
    pub fn slices_of_slivers(&self, urns: &[&str]) -> StoreResult<Vec<Option<String>>> {
        self.read(|conn| {
            urns.iter()
                .map(|urn| {
                    Ok(natively!(&mut *conn, |c| slivers::table
                        .find(urn)
                        .select(slivers::slice_urn)
                        .first(c)
                        .optional())?)
                })
                .collect()
        })
    }

    /// The sliver `urn` in any state.
    pub fn sliver(&self, urn: &str) -> StoreResult<Option<SliverRow>> {
        self.read(|conn| find(conn, urn))
    }

    /// A page of the live slivers in URN order (see [`live_page`]; for
    /// the reconciler).
    pub fn live_slivers_page(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<SliverRow>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(|conn| live_page(conn, after, limit))
    }

    /// Provisioned slivers waiting for the backend with no job pending.
    pub fn slivers_awaiting_backend(&self) -> StoreResult<Vec<SliverRow>> {
        self.read(awaiting_backend)
    }

    /// Live slivers expired at or before `now`.
    pub fn expired_slivers(&self, now: DateTime<Utc>) -> StoreResult<Vec<SliverRow>> {
        self.read(|conn| expired(conn, now))
    }
}

/// Deallocates `row` (Delete, expiry): it becomes `geni_unallocated`; a
/// destroy job is queued when it was provisioned (it has a VM), and its
/// capacity stays taken until that job is done (see
/// [`super::components::usage`]), else it is free at once; and the event `kind` is logged with `detail`. Returns
/// the row as saved, still carrying its previous expiry.
pub fn unallocate(
    conn: &mut Conn,
    mut row: SliverRow,
    kind: EventKind,
    detail: &str,
    now: DateTime<Utc>,
) -> StoreResult<SliverRow> {
    let read = row.clone();
    let provisioned = row.allocation_state == AllocationState::Provisioned;
    row.allocation_state = AllocationState::Unallocated;
    row.deleted_at = Some(now.into());
    save(conn, &read, &row)?;
    if provisioned {
        let payload = serde_json::json!({ "reason": kind.as_str() });
        jobs::enqueue(
            conn,
            JobKind::Destroy,
            &row.slice_urn,
            Some(&row.urn),
            &payload,
            now,
        )?;
    }
    events::append(
        conn,
        now,
        Some(&row.slice_urn),
        Some(&row.urn),
        kind,
        detail,
    )?;
    Ok(row)
}
