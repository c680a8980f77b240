//! The audit log: one row per thing that happened to a slice or sliver.

use super::native::natively;
use super::schema::events;
use super::{Conn, Store, StoreResult, UnixTime};
use crate::model::EventKind;
use chrono::{DateTime, Utc};
use diesel::dsl::max;
use diesel::prelude::*;

/// A logged event. A missing slice or sliver is inserted as NULL rather
/// than left to the column's default, so that the insert's text is the
/// same for every event and it is found prepared by its type.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Insertable)]
#[diesel(table_name = events, treat_none_as_default_value = false)]
pub struct EventRow {
    /// Its id (a UUID).
    pub id: String,
    /// Order of logging.
    pub seq: i64,
    /// When.
    pub at: UnixTime,
    /// Slice concerned.
    pub slice_urn: Option<String>,
    /// Sliver concerned.
    pub sliver_urn: Option<String>,
    /// What happened.
    pub kind: EventKind,
    /// Details for operators.
    pub detail: String,
}

/// Appends an event, on the database's own connection (see
/// [`natively!`]): every write call logs one or more in the writers'
/// turn.
pub fn append(
    conn: &mut Conn,
    now: DateTime<Utc>,
    slice_urn: Option<&str>,
    sliver_urn: Option<&str>,
    kind: EventKind,
    detail: &str,
) -> StoreResult<()> {
    let last: Option<i64> = natively!(conn, |c| events::table.select(max(events::seq)).first(c))?;
    let row = EventRow {
        id: uuid::Uuid::new_v4().simple().to_string(),
        seq: last.unwrap_or(0) + 1,
        at: now.into(),
        slice_urn: slice_urn.map(str::to_owned),
        sliver_urn: sliver_urn.map(str::to_owned),
        kind,
        detail: detail.to_owned(),
    };
    natively!(conn, |c| diesel::insert_into(events::table)
        .values(&row)
        .execute(c))?;
    Ok(())
}

impl Store {
    /// The events of a slice, oldest first.
    pub fn slice_events(&self, slice_urn: &str) -> StoreResult<Vec<EventRow>> {
        self.read(|conn| {
            Ok(events::table
                .filter(events::slice_urn.eq(slice_urn))
                .order(events::seq)
                .load(conn)?)
        })
    }
}
