//! Which slivers a call's `urns` mean (GENI AM API v3, "urns"): a slice
//! URN is every live sliver of the slice; sliver URNs must each name a
//! live, unexpired sliver of that slice (else an unknown sliver); a URN of
//! another type (e.g. `+node+`) is a bad URN.

use super::CoreError;
use crate::model::{AllocationState, Selector, SliverUrn, UrnRefusal};
use crate::store::Conn;
use crate::store::slices::{self, SliceRow};
use crate::store::slivers::{self, SliverRow};
use chrono::{DateTime, Utc};

/// The slice and slivers a selector names.
pub(super) struct Selection {
    /// The slice, if known here.
    pub slice: Option<SliceRow>,
    /// The selected live slivers, oldest first.
    pub slivers: Vec<SliverRow>,
    /// Whether the whole slice was named.
    pub whole_slice: bool,
}

impl Selection {
    /// Fails with an unknown slice when nothing is selected.
    pub fn require_slivers(&self, slice_urn: &str) -> Result<(), CoreError> {
        if self.slivers.is_empty() {
            return Err(CoreError::UnknownSlice {
                slice: slice_urn.to_owned(),
            });
        }
        Ok(())
    }

    /// Fails when the slice was shut down.
    pub fn require_not_shut_down(&self) -> Result<(), CoreError> {
        match &self.slice {
            Some(slice) => require_not_shut_down(slice, "it can no longer be changed"),
            None => Ok(()),
        }
    }
}

/// Fails, naming who shut the slice down and `consequence`, when `slice`
/// was shut down.
pub(super) fn require_not_shut_down(
    slice: &SliceRow,
    consequence: &'static str,
) -> Result<(), CoreError> {
    if !slice.shut_down {
        return Ok(());
    }
    Err(CoreError::ShutDown {
        slice: slice.urn.clone(),
        by: slice.shut_down_by.clone(),
        consequence,
    })
}

/// Resolves `selector` at `now` (expired slivers count as gone).
pub(super) fn resolve(
    conn: &mut Conn,
    selector: &Selector,
    now: DateTime<Utc>,
) -> Result<Selection, CoreError> {
    let slice_urn = selector.slice_urn();
    let slice = slices::find(conn, slice_urn)?;
    let unexpired = |s: &SliverRow| s.expires_at.get() > now;
    match selector {
        Selector::Slice(_) => {
            let slivers = slivers::live_in_slice(conn, slice_urn)?
                .into_iter()
                .filter(unexpired)
                .collect();
            Ok(Selection {
                slice,
                slivers,
                whole_slice: true,
            })
        }
        Selector::Slivers { urns, .. } => {
            let mut found: Vec<SliverRow> = Vec::with_capacity(urns.len());
            for urn in urns {
                check_sliver_urn(urn)?;
                if found.iter().any(|s| s.urn == *urn) {
                    continue;
                }
                let row = slivers::find(conn, urn)?
                    .filter(|s| s.slice_urn == slice_urn)
                    .filter(|s| s.allocation_state != AllocationState::Unallocated)
                    .filter(unexpired)
                    .ok_or_else(|| CoreError::UnknownSliver {
                        urn: urn.clone(),
                        slice: slice_urn.to_owned(),
                    })?;
                found.push(row);
            }
            Ok(Selection {
                slice,
                slivers: found,
                whole_slice: false,
            })
        }
    }
}

/// Fails with a bad URN unless `urn` is a sliver URN.
fn check_sliver_urn(urn: &str) -> Result<(), CoreError> {
    match SliverUrn::parse(urn) {
        Ok(_) => Ok(()),
        Err(UrnRefusal::WrongType { found, .. }) => Err(CoreError::BadUrn(format!(
            "`{urn}` is a {found} URN; name the slice or its slivers (…+sliver+…)"
        ))),
        Err(refusal) => Err(CoreError::BadUrn(refusal.to_string())),
    }
}
