//! The address ranges links are reserved from: the inventory refresh
//! stores what the backend last reported ([`Store::sync_link_ranges`]),
//! in one row every process sharing the database reads, and Allocate
//! checks a link's requested addresses against them ([`current`]).

use super::schema::link_ranges;
use super::{Conn, Json, Store, StoreResult, UnixTime};
use crate::model::AddressRange;
use chrono::{DateTime, Utc};
use diesel::prelude::*;

/// The one row of the table.
const ROW: i64 = 1;

/// The stored ranges; `None` when the backend gives a link any address
/// (or none was stored yet).
pub fn current(conn: &mut Conn) -> StoreResult<Option<Vec<AddressRange>>> {
    let stored: Option<Option<Json<Vec<AddressRange>>>> = link_ranges::table
        .filter(link_ranges::id.eq(ROW))
        .select(link_ranges::ranges)
        .first(conn)
        .optional()?;
    Ok(stored.flatten().map(Json::into_value))
}

impl Store {
    /// Stores `ranges` as the ones links are reserved from; true when they
    /// differ from those stored (nothing is written otherwise).
    pub fn sync_link_ranges(
        &self,
        ranges: Option<&[AddressRange]>,
        now: DateTime<Utc>,
    ) -> StoreResult<bool> {
        if self.read(current)?.as_deref() == ranges {
            return Ok(false);
        }
        let text = ranges.map(|ranges| Json::new(ranges.to_vec()));
        self.write(|conn| {
            diesel::update(link_ranges::table.filter(link_ranges::id.eq(ROW)))
                .set((
                    link_ranges::ranges.eq(text),
                    link_ranges::updated_at.eq(UnixTime::from(now)),
                ))
                .execute(conn)?;
            Ok(true)
        })
    }
}
