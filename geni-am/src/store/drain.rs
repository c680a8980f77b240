//! Draining: whether the aggregate refuses new slivers (Allocate,
//! CreateSliver) while the existing ones keep working, set by an operator
//! (`geni-am admin drain on|off`) in one row that every process sharing
//! the database reads, so one command drains them all.

use super::schema::drain;
use super::{Conn, StoreResult, UnixTime};
use chrono::{DateTime, Utc};
use diesel::prelude::*;

/// The one row of the table.
const ROW: i64 = 1;

/// Draining in progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drain {
    /// When it began.
    pub since: DateTime<Utc>,
    /// The operator who began it.
    pub operator: String,
    /// Why, as the operator gave it (may be empty).
    pub reason: String,
}

/// The draining in progress, if any.
pub fn current(conn: &mut Conn) -> StoreResult<Option<Drain>> {
    let row: Option<(Option<UnixTime>, String, String)> = drain::table
        .filter(drain::id.eq(ROW))
        .select((drain::since, drain::operator, drain::reason))
        .first(conn)
        .optional()?;
    Ok(row.and_then(|(since, operator, reason)| {
        since.map(|since| Drain {
            since: since.get(),
            operator,
            reason,
        })
    }))
}

/// Begins draining at `now` for `operator` and `reason`, or ends it
/// (`on` false); returns whether that changed anything (beginning while
/// draining keeps the first start, operator and reason).
pub fn set(
    conn: &mut Conn,
    on: bool,
    operator: &str,
    reason: &str,
    now: DateTime<Utc>,
) -> StoreResult<bool> {
    let row = drain::table.filter(drain::id.eq(ROW));
    let changed = if on {
        diesel::update(row.filter(drain::since.is_null()))
            .set((
                drain::since.eq(Some(UnixTime::from(now))),
                drain::operator.eq(operator),
                drain::reason.eq(reason),
                drain::updated_at.eq(UnixTime::from(now)),
            ))
            .execute(conn)?
    } else {
        diesel::update(row.filter(drain::since.is_not_null()))
            .set((
                drain::since.eq(None::<UnixTime>),
                drain::operator.eq(""),
                drain::reason.eq(""),
                drain::updated_at.eq(UnixTime::from(now)),
            ))
            .execute(conn)?
    };
    Ok(changed == 1)
}
