//! Link networks: the backend handle of the network each link sliver got,
//! keyed by the link's sliver URN (the tag the network was created with).
//! A row is written once the backend has created the network and removed
//! once it is destroyed; creation is idempotent by tag, so a crash between
//! the two leaves no second network behind.

use super::schema::link_networks;
use super::{Conn, Store, StoreError, StoreResult, UnixTime};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error};

/// A link network as stored.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Insertable)]
#[diesel(table_name = link_networks)]
pub struct LinkNetworkRow {
    /// The link's sliver URN, the network's tag in the backend.
    pub tag: String,
    /// The slice the link belongs to.
    pub slice_urn: String,
    /// The link's `client_id`.
    pub name: String,
    /// The backend's handle on the network.
    pub handle: String,
    /// When it was recorded.
    pub created_at: UnixTime,
    /// The VLAN tag carrying it, as the backend reported it; `None`:
    /// untagged.
    pub vlan_tag: Option<i64>,
}

impl LinkNetworkRow {
    /// The row for network `handle`, carried by VLAN `vlan_tag`, of link
    /// `tag` named `name` in `slice_urn`.
    pub fn new(
        tag: &str,
        slice_urn: &str,
        name: &str,
        handle: &str,
        vlan_tag: Option<u32>,
        now: DateTime<Utc>,
    ) -> Self {
        LinkNetworkRow {
            tag: tag.to_owned(),
            slice_urn: slice_urn.to_owned(),
            name: name.to_owned(),
            handle: handle.to_owned(),
            created_at: now.into(),
            vlan_tag: vlan_tag.map(i64::from),
        }
    }
}

impl Store {
    /// The recorded network of link `tag`, if any.
    pub fn link_network(&self, tag: &str) -> StoreResult<Option<LinkNetworkRow>> {
        self.read(|conn| Ok(link_networks::table.find(tag).first(conn).optional()?))
    }

    /// Records `row`, replacing the handle and tag of an earlier row of its
    /// tag.
    /// Two workers may record one link at once (its two nodes provisioned
    /// together): the one whose insert meets the other's row updates it.
    pub fn record_link_network(&self, row: &LinkNetworkRow) -> StoreResult<()> {
        let update = |conn: &mut Conn| {
            diesel::update(link_networks::table.find(&row.tag))
                .set((
                    link_networks::handle.eq(&row.handle),
                    link_networks::vlan_tag.eq(row.vlan_tag),
                ))
                .execute(conn)
        };
        let inserted = self.write(|conn| {
            if update(conn)? == 0 {
                diesel::insert_into(link_networks::table)
                    .values(row)
                    .execute(conn)?;
            }
            Ok::<_, StoreError>(())
        });
        match inserted {
            Err(StoreError::Query(Error::DatabaseError(DatabaseErrorKind::UniqueViolation, _))) => {
                self.write(|conn| Ok::<_, StoreError>(update(conn).map(|_| ())?))
            }
            other => other,
        }
    }

    /// Forgets the network of link `tag` (once it is destroyed).
    pub fn forget_link_network(&self, tag: &str) -> StoreResult<()> {
        self.write(|conn| {
            diesel::delete(link_networks::table.find(tag)).execute(conn)?;
            Ok(())
        })
    }

    /// Every recorded link network of `slice_urn`.
    pub fn link_networks_of(&self, slice_urn: &str) -> StoreResult<Vec<LinkNetworkRow>> {
        self.read(|conn| of_slice(conn, slice_urn))
    }
}

/// Every recorded link network of `slice_urn`, by tag.
pub fn of_slice(conn: &mut Conn, slice_urn: &str) -> StoreResult<Vec<LinkNetworkRow>> {
    Ok(link_networks::table
        .filter(link_networks::slice_urn.eq(slice_urn))
        .order(link_networks::tag)
        .load(conn)?)
}
