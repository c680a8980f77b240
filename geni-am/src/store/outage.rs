//! The cloud's outage: while the backend does not answer, the jobs record
//! since when and why, in one row every process sharing the database sees,
//! so that Status names the slivers whose work is held up and
//! ListResources advertises nothing available. Ending the outage makes
//! the jobs waiting in retry backoff due at once.

use super::native::natively;
use super::schema::{backend_outage, jobs};
use super::{Conn, Store, StoreResult, UnixTime};
use crate::model::JobState;
use chrono::{DateTime, Utc};
use diesel::prelude::*;

/// The one row of the table.
const ROW: i64 = 1;

/// An outage in progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outage {
    /// When the backend was first seen not answering.
    pub since: DateTime<Utc>,
    /// The error that showed it, for the experimenter and the operator.
    pub detail: String,
}

/// The outage in progress, if any.
pub fn current(conn: &mut Conn) -> StoreResult<Option<Outage>> {
    let row: Option<(Option<UnixTime>, String)> = natively!(conn, |c| backend_outage::table
        .filter(backend_outage::id.eq(ROW))
        .select((backend_outage::since, backend_outage::detail))
        .first(c)
        .optional())?;
    Ok(row.and_then(|(since, detail)| {
        since.map(|since| Outage {
            since: since.get(),
            detail,
        })
    }))
}

impl Store {
    /// Records that the backend stopped answering at `now` with `detail`;
    /// true when this call began the outage (none was in progress).
    pub fn begin_outage(&self, detail: &str, now: DateTime<Utc>) -> StoreResult<bool> {
        self.write(|conn| {
            let quiet = backend_outage::table
                .filter(backend_outage::id.eq(ROW))
                .filter(backend_outage::since.is_null());
            let changed = diesel::update(quiet)
                .set((
                    backend_outage::since.eq(Some(UnixTime::from(now))),
                    backend_outage::detail.eq(detail),
                    backend_outage::updated_at.eq(UnixTime::from(now)),
                ))
                .execute(conn)?;
            Ok(changed == 1)
        })
    }

    /// Records that the backend answers again at `now`, and makes every
    /// job waiting in retry backoff due at once; returns when the outage
    /// this call ended had begun (`None` when none was in progress).
    pub fn end_outage(&self, now: DateTime<Utc>) -> StoreResult<Option<DateTime<Utc>>> {
        self.write(|conn| {
            let Some(outage) = current(conn)? else {
                return Ok(None);
            };
            diesel::update(backend_outage::table.filter(backend_outage::id.eq(ROW)))
                .set((
                    backend_outage::since.eq(None::<UnixTime>),
                    backend_outage::detail.eq(""),
                    backend_outage::updated_at.eq(UnixTime::from(now)),
                ))
                .execute(conn)?;
            let held = jobs::table
                .filter(jobs::state.eq(JobState::Queued))
                .filter(jobs::run_after.gt(UnixTime::from(now)));
            diesel::update(held)
                .set(jobs::run_after.eq(UnixTime::from(now)))
                .execute(conn)?;
            Ok(Some(outage.since))
        })
    }

    /// The outage in progress, if any.
    pub fn outage(&self) -> StoreResult<Option<Outage>> {
        self.read(current)
    }
}
