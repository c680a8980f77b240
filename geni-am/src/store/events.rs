//! The audit log: one row per thing that happened to a slice or sliver.

use super::cached::CachedDsl;
use super::schema::events;
use super::{Conn, Store, StoreResult, UnixTime};
use crate::model::EventKind;
use chrono::{DateTime, Utc};
use diesel::dsl::max;
use diesel::prelude::*;

/// A logged event.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Insertable)]
#[diesel(table_name = events)]
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

/// Appends an event.
pub fn append(
    conn: &mut Conn,
    now: DateTime<Utc>,
    slice_urn: Option<&str>,
    sliver_urn: Option<&str>,
    kind: EventKind,
    detail: &str,
) -> StoreResult<()> {
    let last: Option<i64> = events::table.select(max(events::seq)).first(conn)?;
    let row = EventRow {
        id: uuid::Uuid::new_v4().simple().to_string(),
        seq: last.unwrap_or(0) + 1,
        at: now.into(),
        slice_urn: slice_urn.map(str::to_owned),
        sliver_urn: sliver_urn.map(str::to_owned),
        kind,
        detail: detail.to_owned(),
    };
    diesel::insert_into(events::table)
        .values(&row)
        .cached()
        .execute(conn)?;
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
