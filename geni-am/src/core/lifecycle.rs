//! Provision, Renew, Delete and Shutdown (GENI AM API v3, "Provision",
//! "Renew", "Delete", "Shutdown"), each in one store transaction; backend
//! work is queued as jobs in that transaction.

use super::select::{self, Selection};
use super::{Aggregate, CoreError, SliceReport, expiry, manifest};
use crate::model::{
    AllocationState, EventKind, JobKind, OperationalState, Principal, Selector, SliverInfo,
    UserKeys,
};
use crate::store::jobs;
use crate::store::slivers::{self, SliverRow};
use crate::store::{Conn, events, slices};
use chrono::{DateTime, Utc};

/// Options of Provision.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProvisionOptions {
    /// `geni_best_effort`: provision what can be, report the rest.
    pub best_effort: bool,
    /// `geni_end_time`: the desired sliver expiry.
    pub end_time: Option<DateTime<Utc>>,
    /// `geni_users`: accounts and keys to install.
    pub users: Vec<UserKeys>,
}

/// Options of Renew.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RenewOptions {
    /// `geni_best_effort`: renew what can be, report the rest.
    pub best_effort: bool,
    /// `geni_extend_alap`: renew as far as allowed instead of failing.
    pub extend_alap: bool,
}

impl Aggregate {
    /// The report of slice `slice_urn` after a write that changed it: the
    /// write's `slivers`, and the manifest of every live sliver of the
    /// slice, read once the write has committed and rendered (the request
    /// of `known` not parsed again). The read is not in the write's
    /// transaction, so that the writers' single turn is not held for the
    /// whole slice (every live sliver, each in Provision's answer); it
    /// shows what other calls committed since, as a Describe would (on
    /// PostgreSQL each of its reads what was committed when it ran). A
    /// failure of this read (the readers' pool timing out, say) is the
    /// call's error although the write has committed, as a failure to
    /// render it already was.
    pub(super) fn slice_report(
        &self,
        slice_urn: &str,
        slivers: Vec<SliverInfo>,
        known: manifest::Known<'_>,
    ) -> Result<SliceReport, CoreError> {
        let sources = self.store.read(|conn| {
            let live = slivers::live_in_slice(conn, slice_urn)?;
            let known_id = known.map(|(id, _)| id);
            manifest::read(conn, &self.requests, slice_urn, live, known_id)
        })?;
        Ok(SliceReport {
            slice_urn: slice_urn.to_owned(),
            manifest: manifest::render(&self.config, &self.requests, &sources, known)?,
            slivers,
        })
    }
}

/// A sliver after a per-sliver step.
pub(super) struct Outcome {
    /// The row, changed by the step if it succeeded.
    pub(super) row: SliverRow,
    /// The row as read, when the step succeeded (its changes are saved
    /// against it), or the error that kept the row unchanged.
    read: Result<SliverRow, CoreError>,
}

impl Outcome {
    /// True when the step succeeded.
    pub(super) fn succeeded(&self) -> bool {
        self.read.is_ok()
    }
}

/// Applies `step` to every row. Without `best_effort` the first failure is
/// the result (the transaction then rolls back); with it, failed rows are
/// kept unchanged with their error. `step` must not change a row it fails.
pub(super) fn apply_each(
    rows: Vec<SliverRow>,
    best_effort: bool,
    mut step: impl FnMut(&mut SliverRow) -> Result<(), CoreError>,
) -> Result<Vec<Outcome>, CoreError> {
    let mut out = Vec::with_capacity(rows.len());
    for mut row in rows {
        let read = row.clone();
        match step(&mut row) {
            Ok(()) => out.push(Outcome {
                row,
                read: Ok(read),
            }),
            Err(e) if best_effort => out.push(Outcome { row, read: Err(e) }),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Saves the rows that changed and reports every row, failed ones with
/// their error.
pub(super) fn save_outcomes(
    conn: &mut Conn,
    outcomes: &[Outcome],
) -> Result<Vec<SliverInfo>, CoreError> {
    outcomes
        .iter()
        .map(|outcome| {
            let mut info = outcome.row.info();
            match &outcome.read {
                Ok(read) => slivers::save(conn, read, &outcome.row)?,
                Err(e) => info.error = e.to_string(),
            }
            Ok(info)
        })
        .collect()
}

/// Queues a backend job for `row` and logs the event `kind`.
pub(super) fn queue(
    conn: &mut Conn,
    job: JobKind,
    row: &SliverRow,
    principal: &str,
    now: DateTime<Utc>,
) -> Result<(), CoreError> {
    let payload = serde_json::json!({ "caller": principal });
    jobs::enqueue(conn, job, &row.slice_urn, Some(&row.urn), &payload, now)?;
    events::append(
        conn,
        now,
        Some(&row.slice_urn),
        Some(&row.urn),
        EventKind::from(job),
        &format!("queued by {principal}"),
    )?;
    Ok(())
}

/// Shuts the known slice `slice_urn` down in the caller's transaction:
/// marks it shut down by `by` (for `reason`), logs it, and stops its
/// running slivers through stop jobs (see [`Aggregate::shutdown`]).
pub(super) fn shut_down_in(
    conn: &mut Conn,
    slice_urn: &str,
    by: &str,
    reason: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(), CoreError> {
    slices::lock(conn, slice_urn)?;
    slices::shut_down(conn, slice_urn, by, reason)?;
    let detail = match reason {
        Some(reason) => format!("{by}: {reason}"),
        None => by.to_owned(),
    };
    events::append(
        conn,
        now,
        Some(slice_urn),
        None,
        EventKind::Shutdown,
        &detail,
    )?;
    for mut row in slivers::live_in_slice(conn, slice_urn)? {
        let running = matches!(
            row.operational_state,
            OperationalState::Ready
                | OperationalState::ReadyBusy
                | OperationalState::Configuring
                | OperationalState::UpdatingUsers
        );
        if running {
            let read = row.clone();
            row.operational_state = OperationalState::Stopping;
            slivers::save(conn, &read, &row)?;
            queue(conn, JobKind::Stop, &row, by, now)?;
        }
    }
    Ok(())
}

impl Aggregate {
    /// Provisions the selected `geni_allocated` slivers (a slice URN means
    /// all of them): they become `geni_provisioned` /
    /// `geni_pending_allocation` with the long lease, the users are stored
    /// and provisioning jobs queued. Reports the manifest of the whole
    /// slice.
    pub fn provision(
        &self,
        principal: &Principal,
        selector: &Selector,
        options: &ProvisionOptions,
    ) -> Result<SliceReport, CoreError> {
        let now = self.now();
        let slivers = self
            .store
            .write(|conn| self.provision_in(conn, principal, selector, options, now))?;
        self.slice_report(selector.slice_urn(), slivers, None)
    }

    /// Provision inside the caller's transaction: the reports of the
    /// selected slivers, failed ones with their error.
    pub(super) fn provision_in(
        &self,
        conn: &mut Conn,
        principal: &Principal,
        selector: &Selector,
        options: &ProvisionOptions,
        now: DateTime<Utc>,
    ) -> Result<Vec<SliverInfo>, CoreError> {
        let slice_urn = selector.slice_urn();
        let selection = self.changeable(conn, selector, now)?;
        let rows: Vec<SliverRow> = if selection.whole_slice {
            let allocated: Vec<SliverRow> = selection
                .slivers
                .into_iter()
                .filter(|r| r.allocation_state == AllocationState::Allocated)
                .collect();
            if allocated.is_empty() {
                return Err(CoreError::NothingAllocated {
                    slice: slice_urn.to_owned(),
                });
            }
            allocated
        } else {
            selection.slivers
        };
        let expires = expiry::provision(
            now,
            &self.config.policy,
            principal.credential_expires,
            options.end_time,
        )?;
        slices::upsert_users(conn, slice_urn, &options.users, now)?;
        let outcomes = apply_each(rows, options.best_effort, |row| {
            let state = row.allocation_state;
            if state != AllocationState::Allocated {
                return Err(CoreError::NotAllocated {
                    urn: row.urn.clone(),
                    state: state.to_string(),
                });
            }
            row.set_states(
                AllocationState::Provisioned,
                OperationalState::PendingAllocation,
            );
            row.expires_at = expires.into();
            Ok(())
        })?;
        let slivers = save_outcomes(conn, &outcomes)?;
        for outcome in outcomes.iter().filter(|o| o.succeeded()) {
            queue(
                conn,
                JobKind::Provision,
                &outcome.row,
                &principal.caller_urn,
                now,
            )?;
        }
        Ok(slivers)
    }

    /// Sets the expiry of the selected slivers to `requested` (see
    /// `expiry::renew`: never past the credential or the policy maximum,
    /// never in the past; shortening is allowed; `extend_alap` clamps).
    pub fn renew(
        &self,
        principal: &Principal,
        selector: &Selector,
        requested: DateTime<Utc>,
        options: RenewOptions,
    ) -> Result<Vec<SliverInfo>, CoreError> {
        let now = self.now();
        self.store.write(|conn| {
            let selection = self.changeable(conn, selector, now)?;
            let outcomes = apply_each(selection.slivers, options.best_effort, |row| {
                let target = expiry::renew(
                    now,
                    &self.config.policy,
                    principal.credential_expires,
                    requested,
                    options.extend_alap,
                )?;
                row.expires_at = target.into();
                Ok(())
            })?;
            slices::find_or_create(
                conn,
                selector.slice_urn(),
                principal.credential_expires,
                now,
            )?;
            let infos = save_outcomes(conn, &outcomes)?;
            for info in infos.iter().filter(|i| i.error.is_empty()) {
                let detail = format!(
                    "to {} by {}",
                    crate::time::format(&info.expires),
                    principal.caller_urn
                );
                events::append(
                    conn,
                    now,
                    Some(selector.slice_urn()),
                    Some(&info.urn),
                    EventKind::Renew,
                    &detail,
                )?;
            }
            Ok(infos)
        })
    }

    /// Deletes the selected slivers: each is reported `geni_unallocated`
    /// with its previous expiry, its capacity is freed and, when it was
    /// provisioned, a destroy job queued.
    pub fn delete(
        &self,
        principal: &Principal,
        selector: &Selector,
    ) -> Result<Vec<SliverInfo>, CoreError> {
        let now = self.now();
        let deleted = self.store.write(|conn| {
            let selection = self.changeable(conn, selector, now)?;
            selection
                .slivers
                .into_iter()
                .map(|row| {
                    let detail = format!("by {}", principal.caller_urn);
                    slivers::unallocate(conn, row, EventKind::Delete, &detail, now)
                        .map_err(CoreError::from)
                })
                .collect::<Result<Vec<_>, CoreError>>()
        })?;
        Ok(self.forget_deleted(&deleted))
    }

    /// Forgets what is kept in memory of the slivers `deleted` (their
    /// slices, their requests; a request that other slivers still use is
    /// read again when a manifest needs it) and returns their infos. A call
    /// that read them before the Delete committed may keep them again;
    /// both caches stay bounded.
    pub(super) fn forget_deleted(&self, deleted: &[SliverRow]) -> Vec<SliverInfo> {
        self.owners
            .forget(deleted.iter().map(|row| row.urn.as_str()));
        self.requests
            .forget(deleted.iter().map(|row| row.request_id.as_str()));
        deleted.iter().map(SliverRow::info).collect()
    }

    /// Operator emergency stop: the slice is marked shut down (later
    /// experimenter changes are refused with [`CoreError::ShutDown`]), running slivers
    /// are stopped and kept for forensics. Repeating it is harmless.
    pub fn shutdown(&self, principal: &Principal, slice_urn: &str) -> Result<(), CoreError> {
        let now = self.now();
        self.store.write(|conn| {
            slices::find_or_create(conn, slice_urn, principal.credential_expires, now)?;
            shut_down_in(conn, slice_urn, &principal.caller_urn, None, now)
        })
    }

    /// Locks the slice and resolves `selector` for an operation that
    /// changes slivers: the slice must not be shut down and must have
    /// selected slivers.
    pub(super) fn changeable(
        &self,
        conn: &mut Conn,
        selector: &Selector,
        now: DateTime<Utc>,
    ) -> Result<Selection, CoreError> {
        slices::lock(conn, selector.slice_urn())?;
        let selection = select::resolve(conn, selector, now)?;
        selection.require_not_shut_down()?;
        selection.require_slivers(selector.slice_urn())?;
        Ok(selection)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::AggregateConfig;
    use crate::store::Store;
    use geni_am_backend::Compute;
    use geni_am_backend::sim::SimulatedCloud;
    use geni_am_backend::sim::config::{SAMPLE_SECTION, SimConfig};

    const AUTHORITY: &str = "am.example";
    const SLICE: &str = "urn:publicid:IDN+ch.example+slice+s1";

    /// An aggregate on a fresh SQLite store holding the sample simulated
    /// cloud's hosts.
    fn aggregate(dir: &std::path::Path) -> Aggregate {
        let config: SimConfig = toml::from_str(SAMPLE_SECTION).unwrap();
        let cloud = SimulatedCloud::new(&config, AUTHORITY).unwrap();
        let store = Store::open(&dir.join("am.sqlite").to_string_lossy(), 2).unwrap();
        let rows = crate::store::components::component_rows(&cloud.inventory().unwrap());
        store.sync_components(&rows, Utc::now()).unwrap();
        let config = AggregateConfig {
            authority: AUTHORITY.into(),
            am_urn: format!("urn:publicid:IDN+{AUTHORITY}+authority+am"),
            cm_urn: format!("urn:publicid:IDN+{AUTHORITY}+authority+cm"),
            policy: Default::default(),
            ssh: Default::default(),
        };
        Aggregate::new(store, config).unwrap()
    }

    #[test]
    fn a_delete_forgets_the_slivers_slices_and_requests_kept_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let am = aggregate(dir.path());
        let principal = Principal {
            caller_urn: "urn:publicid:IDN+ch.example+user+alice".into(),
            speaking_for: None,
            slice_urn: Some(SLICE.into()),
            credential_expires: Utc::now() + chrono::TimeDelta::days(1),
        };
        let request = r#"<rspec xmlns="http://www.geni.net/resources/rspec/3" type="request">
  <node client_id="a" exclusive="false"><sliver_type name="small"/></node>
</rspec>"#;
        let urn = am.allocate(&principal, SLICE, request).unwrap().slivers[0]
            .urn
            .clone();
        let request_id = am
            .store
            .read(|conn| slivers::find(conn, &urn))
            .unwrap()
            .unwrap()
            .request_id;
        assert_eq!(am.owners.of(&urn).as_deref(), Some(SLICE));
        assert!(am.requests.get(&request_id).is_some());

        let selector = Selector::Slivers {
            slice_urn: SLICE.into(),
            urns: vec![urn.clone()],
        };
        assert_eq!(am.delete(&principal, &selector).unwrap().len(), 1);
        assert_eq!(am.owners.of(&urn), None, "the sliver's slice is forgotten");
        assert!(
            am.requests.get(&request_id).is_none(),
            "its request is forgotten"
        );
    }
}
