//! Describe and Status (AMAPI.md §2.4, §2.8): read-only, from the store
//! alone (never waiting on the backend).

use super::select;
use super::{Aggregate, SliceReport, StatusReport, manifest};
use crate::core::types::{Selector, SliverInfo};
use crate::geni::AmError;
use crate::store::slivers::SliverRow;

impl Aggregate {
    /// The manifest and sliver reports of the selected slivers. A slice
    /// with no slivers here gets the empty manifest and no slivers; an
    /// unknown sliver URN is SEARCHFAILED.
    pub fn describe(&self, selector: &Selector) -> Result<SliceReport, AmError> {
        let now = self.now();
        self.store.read(|conn| {
            let selection = select::resolve(conn, selector, now)?;
            let slice_urn = selector.slice_urn();
            Ok(SliceReport {
                slice_urn: slice_urn.to_owned(),
                manifest: manifest::render(conn, &self.config, slice_urn, &selection.slivers)?,
                slivers: infos(&selection.slivers)?,
            })
        })
    }

    /// The states of the selected slivers; SEARCHFAILED when the slice has
    /// none here.
    pub fn status(&self, selector: &Selector) -> Result<StatusReport, AmError> {
        let now = self.now();
        self.store.read(|conn| {
            let selection = select::resolve(conn, selector, now)?;
            selection.require_slivers(selector.slice_urn())?;
            Ok(StatusReport {
                slice_urn: selector.slice_urn().to_owned(),
                slivers: infos(&selection.slivers)?,
            })
        })
    }
}

/// The sliver reports of `rows`.
pub(super) fn infos(rows: &[SliverRow]) -> Result<Vec<SliverInfo>, AmError> {
    Ok(rows
        .iter()
        .map(|r| r.info())
        .collect::<Result<Vec<_>, _>>()?)
}
