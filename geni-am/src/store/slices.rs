//! Slices, the request RSpec documents they were allocated from, and the
//! users (with SSH keys) given at Provision or `geni_update_users`.

use super::cached::CachedDsl;
use super::native::natively;
use super::schema::{requests, slice_users, slices};
use super::{Conn, Json, StoreResult, UnixTime};
use crate::model::UserKeys;
use chrono::{DateTime, Utc};
use diesel::prelude::*;

/// A slice known here.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Insertable)]
#[diesel(table_name = slices)]
pub struct SliceRow {
    /// Slice URN.
    pub urn: String,
    /// When the AM first saw it.
    pub created_at: UnixTime,
    /// Expiry of the latest slice credential presented.
    pub credential_expires: UnixTime,
    /// Set by Shutdown: experimenter actions are refused afterwards.
    pub shut_down: bool,
    /// Who shut the slice down (the URN of Shutdown's caller, or the
    /// operator), when known.
    pub shut_down_by: Option<String>,
    /// Why, when an operator said so (`geni-am admin shutdown --reason`).
    pub shut_down_reason: Option<String>,
}

/// A stored request RSpec.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Insertable)]
#[diesel(table_name = requests)]
pub struct RequestRow {
    /// Its id (a UUID).
    pub id: String,
    /// The slice it was allocated into.
    pub slice_urn: String,
    /// When.
    pub created_at: UnixTime,
    /// The document as received.
    pub document: String,
}

/// The slice `urn`, if known.
pub fn find(conn: &mut Conn, urn: &str) -> StoreResult<Option<SliceRow>> {
    Ok(natively!(conn, |c| slices::table
        .find(urn)
        .first(c)
        .optional())?)
}

/// The slice `urn`, created when new; its credential expiry is updated to
/// `credential_expires`.
pub fn find_or_create(
    conn: &mut Conn,
    urn: &str,
    credential_expires: DateTime<Utc>,
    now: DateTime<Utc>,
) -> StoreResult<SliceRow> {
    if let Some(mut row) = find(conn, urn)? {
        row.credential_expires = credential_expires.into();
        diesel::update(slices::table.find(urn))
            .set(slices::credential_expires.eq(row.credential_expires))
            .cached()
            .execute(conn)?;
        return Ok(row);
    }
    let row = SliceRow {
        urn: urn.to_owned(),
        created_at: now.into(),
        credential_expires: credential_expires.into(),
        shut_down: false,
        shut_down_by: None,
        shut_down_reason: None,
    };
    diesel::insert_into(slices::table)
        .values(&row)
        .cached()
        .execute(conn)?;
    Ok(row)
}

/// Locks the slice's row until the transaction ends, so that changes to
/// one slice from several processes on PostgreSQL happen one after the
/// other (on SQLite the write transaction already holds the only write
/// lock). An unknown slice locks nothing.
pub fn lock(conn: &mut Conn, urn: &str) -> StoreResult<()> {
    if let Conn::Postgres(pg) = conn {
        diesel::sql_query("SELECT urn FROM slices WHERE urn = $1 FOR UPDATE")
            .bind::<diesel::sql_types::Text, _>(urn)
            .cached()
            .execute(pg)?;
    }
    Ok(())
}

/// Marks the slice shut down by `by` (who asked for it), for `reason`
/// when one was given.
pub fn shut_down(conn: &mut Conn, urn: &str, by: &str, reason: Option<&str>) -> StoreResult<()> {
    diesel::update(slices::table.find(urn))
        .set((
            slices::shut_down.eq(true),
            slices::shut_down_by.eq(by),
            slices::shut_down_reason.eq(reason),
        ))
        .execute(conn)?;
    Ok(())
}

/// Stores a request document for `slice_urn`; returns its id.
pub fn insert_request(
    conn: &mut Conn,
    slice_urn: &str,
    document: &str,
    now: DateTime<Utc>,
) -> StoreResult<String> {
    let row = RequestRow {
        id: uuid::Uuid::new_v4().simple().to_string(),
        slice_urn: slice_urn.to_owned(),
        created_at: now.into(),
        document: document.to_owned(),
    };
    diesel::insert_into(requests::table)
        .values(&row)
        .cached()
        .execute(conn)?;
    Ok(row.id)
}

/// The request documents with the given ids, oldest first.
pub fn requests_by_id(conn: &mut Conn, ids: &[String]) -> StoreResult<Vec<RequestRow>> {
    Ok(requests::table
        .filter(requests::id.eq_any(ids))
        .order((requests::created_at, requests::id))
        .load(conn)?)
}

/// Stores `users` for the slice: listed users' key sets are replaced,
/// others are kept.
pub fn upsert_users(
    conn: &mut Conn,
    slice_urn: &str,
    users: &[UserKeys],
    now: DateTime<Utc>,
) -> StoreResult<()> {
    for user in users {
        let keys: Vec<String> = user.keys.iter().map(|k| k.trim_end().to_owned()).collect();
        let keys = Json::new(keys);
        let target = slice_users::table.find((slice_urn, user.urn.as_str()));
        let updated = diesel::update(target)
            .set((
                slice_users::keys.eq(&keys),
                slice_users::updated_at.eq(UnixTime::from(now)),
            ))
            .cached()
            .execute(conn)?;
        if updated == 0 {
            diesel::insert_into(slice_users::table)
                .values((
                    slice_users::slice_urn.eq(slice_urn),
                    slice_users::user_urn.eq(&user.urn),
                    slice_users::keys.eq(&keys),
                    slice_users::updated_at.eq(UnixTime::from(now)),
                ))
                .cached()
                .execute(conn)?;
        }
    }
    Ok(())
}

/// The slice's users and their keys, by URN.
pub fn users(conn: &mut Conn, slice_urn: &str) -> StoreResult<Vec<UserKeys>> {
    let rows: Vec<(String, Json<Vec<String>>)> = slice_users::table
        .filter(slice_users::slice_urn.eq(slice_urn))
        .select((slice_users::user_urn, slice_users::keys))
        .order(slice_users::user_urn)
        .load(conn)?;
    Ok(rows
        .into_iter()
        .map(|(urn, keys)| UserKeys {
            urn,
            keys: keys.into_value(),
        })
        .collect())
}
