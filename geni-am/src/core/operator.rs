//! What an operator does to the aggregate (`geni-am admin`), through the
//! same paths as the AM API: Shutdown of a slice with a reason, removal of
//! slivers through Delete's deallocation (a provisioned sliver's VM is
//! destroyed by the destroy job that queues, run by the workers of
//! `serve`), and draining. Unlike the API calls these need no credential,
//! act also on shut-down slices and on expired slivers not yet reclaimed,
//! and name the operator in the audit log.

use super::lifecycle::shut_down_in;
use super::{Aggregate, CoreError};
use crate::model::{AllocationState, EventKind, SliverInfo};
use crate::store::{drain, events, slices, slivers};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long GetVersion relies on a drain state it read.
const DRAIN_SEEN_FOR: Duration = Duration::from_secs(1);

/// The drain state as last read and when: GetVersion, called often and
/// without credentials, reads the store at most once a second for it.
#[derive(Debug, Default)]
pub(super) struct DrainCache(Mutex<Option<(Instant, Option<drain::Drain>)>>);

impl DrainCache {
    /// The state read less than [`DRAIN_SEEN_FOR`] ago, if any.
    fn fresh(&self) -> Option<Option<drain::Drain>> {
        let seen = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        seen.as_ref()
            .filter(|(at, _)| at.elapsed() < DRAIN_SEEN_FOR)
            .map(|(_, state)| state.clone())
    }

    /// Remembers `state`, read now.
    fn keep(&self, state: Option<drain::Drain>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some((Instant::now(), state));
    }

    /// Forgets what was read (this process changed it).
    fn forget(&self) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

/// The name an operator's changes are recorded under: `operator <name>`.
pub fn operator_label(name: &str) -> String {
    format!("operator {name}")
}

impl Aggregate {
    /// Shuts the slice `slice_urn` down as the operator `operator` for
    /// `reason` (as the API's Shutdown: running slivers are stopped and
    /// kept, experimenter changes refused). An unknown slice is
    /// [`CoreError::NoSuchSlice`].
    pub fn operator_shutdown(
        &self,
        operator: &str,
        slice_urn: &str,
        reason: &str,
    ) -> Result<(), CoreError> {
        let now = self.now();
        self.store.write(|conn| {
            if slices::find(conn, slice_urn)?.is_none() {
                return Err(CoreError::NoSuchSlice {
                    slice: slice_urn.to_owned(),
                });
            }
            shut_down_in(
                conn,
                slice_urn,
                &operator_label(operator),
                Some(reason),
                now,
            )
        })
    }

    /// Deletes the live slivers `urns` as the operator `operator` (for
    /// `reason` when given), all or none: each becomes `geni_unallocated`
    /// and, when provisioned, a destroy job is queued for its VM. A URN
    /// that names no live sliver is [`CoreError::NoSuchSliver`] and
    /// nothing is deleted.
    pub fn operator_delete(
        &self,
        operator: &str,
        urns: &[String],
        reason: Option<&str>,
    ) -> Result<Vec<SliverInfo>, CoreError> {
        let now = self.now();
        let mut detail = format!("by {}", operator_label(operator));
        if let Some(reason) = reason.filter(|r| !r.trim().is_empty()) {
            detail = format!("{detail}: {}", reason.trim());
        }
        let deleted = self.store.write(|conn| {
            let mut deleted = Vec::with_capacity(urns.len());
            for urn in urns {
                let no_such = || CoreError::NoSuchSliver { urn: urn.clone() };
                let row = slivers::find(conn, urn)?.ok_or_else(no_such)?;
                slices::lock(conn, &row.slice_urn)?;
                let row = slivers::find(conn, urn)?
                    .filter(|r| r.allocation_state != AllocationState::Unallocated)
                    .ok_or_else(no_such)?;
                let row = slivers::unallocate(conn, row, EventKind::Delete, &detail, now)?;
                deleted.push(row);
            }
            Ok::<_, CoreError>(deleted)
        })?;
        Ok(self.forget_deleted(&deleted))
    }

    /// Turns draining on or off as the operator `operator` (for `reason`
    /// when turning it on): while on, Allocate and CreateSliver are
    /// refused with [`CoreError::Draining`] and ListResources shows no
    /// node available, in every process sharing the store. Returns whether
    /// that changed the state (turning it on twice keeps the first start).
    pub fn set_draining(&self, operator: &str, on: bool, reason: &str) -> Result<bool, CoreError> {
        let now = self.now();
        let changed = self.store.write(|conn| {
            let changed = drain::set(conn, on, operator, reason.trim(), now)?;
            if changed {
                let mut detail = format!(
                    "{} by {}",
                    if on { "on" } else { "off" },
                    operator_label(operator)
                );
                if on && !reason.trim().is_empty() {
                    detail = format!("{detail}: {}", reason.trim());
                }
                events::append(conn, now, None, None, EventKind::Drain, &detail)?;
            }
            Ok(changed)
        });
        self.drain_seen.forget();
        changed
    }

    /// The draining in progress, if any, as read at most a second ago
    /// (for GetVersion; Allocate and ListResources read the store in
    /// their own transaction, and `core::overview::drain` reads it now).
    pub fn draining(&self) -> Result<Option<drain::Drain>, CoreError> {
        if let Some(state) = self.draining_seen() {
            return Ok(state);
        }
        let state = self.store.read(drain::current)?;
        self.drain_seen.keep(state.clone());
        Ok(state)
    }

    /// The draining in progress as read at most a second ago, or `None`
    /// when it must be read again ([`Aggregate::draining`] reads it): what
    /// GetVersion answers without touching the store.
    pub fn draining_seen(&self) -> Option<Option<drain::Drain>> {
        self.drain_seen.fresh()
    }
}
