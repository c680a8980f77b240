//! Describe and Status (GENI AM API v3, "Describe", "Status"): read-only, from the store
//! alone (never waiting on the backend). While the backend does not
//! answer, the slivers whose work that holds up say so in `geni_error`.

use super::select;
use super::{Aggregate, CoreError, SliceReport, StatusReport, manifest};
use crate::model::{OperationalState, Selector, SliverInfo};
use crate::store::slivers::SliverRow;
use crate::store::{Conn, outage, upkeep};

impl Aggregate {
    /// The manifest and sliver reports of the selected slivers. A slice
    /// with no slivers here gets the empty manifest and no slivers; an
    /// unknown sliver URN is an unknown sliver.
    pub fn describe(&self, selector: &Selector) -> Result<SliceReport, CoreError> {
        let now = self.now();
        let slice_urn = selector.slice_urn();
        let (slivers, sources) = self.store.read(|conn| {
            let selection = select::resolve(conn, selector, now)?;
            let slivers = held_up(conn, infos(&selection.slivers))?;
            let sources = manifest::read(conn, &self.requests, slice_urn, selection.slivers, None)?;
            Ok::<_, CoreError>((slivers, sources))
        })?;
        Ok(SliceReport {
            slice_urn: slice_urn.to_owned(),
            manifest: manifest::render(&self.config, &self.requests, &sources, None)?,
            slivers,
        })
    }

    /// The states of the selected slivers; an unknown slice when it has
    /// none here.
    pub fn status(&self, selector: &Selector) -> Result<StatusReport, CoreError> {
        let now = self.now();
        self.store.read(|conn| {
            let selection = select::resolve(conn, selector, now)?;
            selection.require_slivers(selector.slice_urn())?;
            Ok(StatusReport {
                slice_urn: selector.slice_urn().to_owned(),
                slivers: held_up(conn, infos(&selection.slivers))?,
            })
        })
    }
}

/// The sliver reports of `rows`.
pub(super) fn infos(rows: &[SliverRow]) -> Vec<SliverInfo> {
    rows.iter().map(SliverRow::info).collect()
}

/// `infos` with the backend's outage in progress, if any, named in the
/// `geni_error` of the slivers whose work it holds up: a job queued or
/// running, or a state the backend has to finish. A sliver with an error
/// of its own keeps it.
fn held_up(conn: &mut Conn, mut infos: Vec<SliverInfo>) -> Result<Vec<SliverInfo>, CoreError> {
    let Some(outage) = outage::current(conn)? else {
        return Ok(infos);
    };
    let pending = upkeep::pending_job_slivers(conn)?;
    for info in &mut infos {
        let waits = pending.contains(&info.urn) || info.operational.awaits_backend();
        if waits && info.error.is_empty() && info.operational != OperationalState::Failed {
            // The outage's detail (the backend's endpoint, its reply)
            // is for the operators' log, not for every experimenter.
            info.error = format!(
                "held up: the cloud has not answered since {}; \
                 this sliver's work resumes when it answers",
                crate::time::format(&outage.since),
            );
        }
    }
    Ok(infos)
}
