//! Components: the capacity rows of the inventory (seeded by `serve` from
//! the backend through [`Store::sync_components`]) and what live slivers
//! use of them.

use super::jobs::{JobKind, JobState};
use super::schema::{components, jobs, slivers};
use super::{Conn, Store, StoreError, StoreResult, to_unix};
use crate::core::types::AllocationState;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One allocatable component and what it offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComponentRow {
    /// Its URN, unique and stable under the AM's authority.
    pub id: String,
    /// Its short name.
    pub name: String,
    /// CPUs it can give to slivers.
    pub cpus: i64,
    /// Memory it can give to slivers (MiB).
    pub memory_mb: i64,
    /// Most slivers it hosts at once.
    pub max_vms: i64,
    /// Handed out whole (one sliver) rather than shared.
    pub exclusive: bool,
    /// Whether the backend reports it usable.
    pub available: bool,
    /// Hardware types, sliver types and location.
    pub details: ComponentDetails,
}

/// The descriptive part of a component.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComponentDetails {
    /// Hardware type names, e.g. `kvm-host`.
    #[serde(default)]
    pub hardware_types: Vec<String>,
    /// What can run on it.
    #[serde(default)]
    pub sliver_types: Vec<SliverTypeSpec>,
    /// Where it is.
    #[serde(default)]
    pub location: Option<LocationSpec>,
}

/// A sliver type with the resources each sliver of it takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SliverTypeSpec {
    /// Name, e.g. `default-vm`.
    pub name: String,
    /// CPUs per sliver.
    pub cpus: i64,
    /// Memory per sliver (MiB).
    pub memory_mb: i64,
    /// Bootable images.
    #[serde(default)]
    pub disk_images: Vec<DiskImageSpec>,
}

/// A bootable disk image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskImageSpec {
    /// Image URN.
    pub name: String,
    /// Operating system.
    #[serde(default)]
    pub os: Option<String>,
    /// Operating system version.
    #[serde(default)]
    pub version: Option<String>,
    /// One line for people.
    #[serde(default)]
    pub description: Option<String>,
    /// Boots when the request names no image.
    #[serde(default)]
    pub default: bool,
}

/// Where a component is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocationSpec {
    /// ISO 3166 country code.
    pub country: String,
    /// Decimal degrees.
    #[serde(default)]
    pub latitude: Option<String>,
    /// Decimal degrees.
    #[serde(default)]
    pub longitude: Option<String>,
}

/// What the live slivers on one component take.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// CPUs reserved.
    pub cpus: i64,
    /// Memory reserved (MiB).
    pub memory_mb: i64,
    /// Slivers on it.
    pub slivers: i64,
    /// Whether one of them holds it exclusively.
    pub exclusive: bool,
}

impl ComponentRow {
    /// Whether a sliver of `cpus`/`memory_mb` (exclusive or not) fits next
    /// to `used`.
    pub fn fits(&self, used: &Usage, cpus: i64, memory_mb: i64, exclusive: bool) -> bool {
        let whole = exclusive || self.exclusive;
        self.available
            && !used.exclusive
            && (!whole || used.slivers == 0)
            && used.slivers < self.max_vms
            && used.cpus + cpus <= self.cpus
            && used.memory_mb + memory_mb <= self.memory_mb
    }

    /// The sliver type `name`, if offered here.
    pub fn sliver_type(&self, name: &str) -> Option<&SliverTypeSpec> {
        self.details.sliver_types.iter().find(|s| s.name == name)
    }
}

/// The stored columns of a component.
type Columns = (String, String, i64, i64, i64, bool, bool, String);

fn from_columns(c: Columns) -> StoreResult<ComponentRow> {
    let (id, name, cpus, memory_mb, max_vms, exclusive, available, details) = c;
    let details = serde_json::from_str(&details).map_err(|_| StoreError::Corrupt {
        what: "components.details",
        value: details.clone(),
    })?;
    Ok(ComponentRow {
        id,
        name,
        cpus,
        memory_mb,
        max_vms,
        exclusive,
        available,
        details,
    })
}

/// Every component, ordered by id.
pub fn all(conn: &mut Conn) -> StoreResult<Vec<ComponentRow>> {
    let rows: Vec<Columns> = components::table
        .select((
            components::id,
            components::name,
            components::cpus,
            components::memory_mb,
            components::max_vms,
            components::exclusive,
            components::available,
            components::details,
        ))
        .order(components::id)
        .load(conn)?;
    rows.into_iter().map(from_columns).collect()
}

/// Locks every component row until the transaction ends, so that
/// concurrent allocations (also from other processes) are serialised. On
/// PostgreSQL this is `SELECT … FOR UPDATE` in id order (no deadlocks); on
/// SQLite the write transaction's `BEGIN IMMEDIATE` already holds the
/// database's single write lock.
pub fn lock_all(conn: &mut Conn) -> StoreResult<()> {
    if let Conn::Postgres(pg) = conn {
        diesel::sql_query("SELECT id FROM components ORDER BY id FOR UPDATE").execute(pg)?;
    }
    Ok(())
}

/// What slivers use, per component id: live ones not yet expired at
/// `now`, and deleted ones whose VM a destroy job has not yet destroyed
/// (their capacity is still taken in the cloud).
pub fn usage(conn: &mut Conn, now: DateTime<Utc>) -> StoreResult<HashMap<String, Usage>> {
    let columns = (
        slivers::component_id,
        slivers::cpus,
        slivers::memory_mb,
        slivers::exclusive,
    );
    let mut rows: Vec<(String, i64, i64, bool)> = slivers::table
        .filter(slivers::allocation_state.ne(AllocationState::Unallocated.as_str()))
        .filter(slivers::expires_at.gt(to_unix(&now)))
        .select(columns)
        .load(conn)?;
    let destroying: Vec<Option<String>> = jobs::table
        .filter(jobs::kind.eq(JobKind::Destroy.as_str()))
        .filter(jobs::state.eq_any([JobState::Queued.as_str(), JobState::Running.as_str()]))
        .select(jobs::sliver_urn)
        .load(conn)?;
    let destroying: Vec<String> = destroying.into_iter().flatten().collect();
    if !destroying.is_empty() {
        rows.extend(
            slivers::table
                .filter(slivers::allocation_state.eq(AllocationState::Unallocated.as_str()))
                .filter(slivers::urn.eq_any(&destroying))
                .select(columns)
                .load::<(String, i64, i64, bool)>(conn)?,
        );
    }
    let mut usage: HashMap<String, Usage> = HashMap::new();
    for (component, cpus, memory_mb, exclusive) in rows {
        let u = usage.entry(component).or_default();
        u.cpus += cpus;
        u.memory_mb += memory_mb;
        u.slivers += 1;
        u.exclusive |= exclusive;
    }
    Ok(usage)
}

/// Makes the components table match `rows`: new ones are added, known ones
/// updated, and ones no longer listed marked unavailable (kept, since
/// slivers may still refer to them).
pub fn sync(conn: &mut Conn, rows: &[ComponentRow], now: DateTime<Utc>) -> StoreResult<()> {
    let listed: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    diesel::update(components::table.filter(components::id.ne_all(&listed)))
        .set(components::available.eq(false))
        .execute(conn)?;
    for row in rows {
        let details = serde_json::to_string(&row.details).map_err(|e| StoreError::Corrupt {
            what: "components.details",
            value: e.to_string(),
        })?;
        let values = (
            components::name.eq(&row.name),
            components::cpus.eq(row.cpus),
            components::memory_mb.eq(row.memory_mb),
            components::max_vms.eq(row.max_vms),
            components::exclusive.eq(row.exclusive),
            components::available.eq(row.available),
            components::details.eq(&details),
            components::updated_at.eq(to_unix(&now)),
        );
        let updated = diesel::update(components::table.find(&row.id))
            .set(values)
            .execute(conn)?;
        if updated == 0 {
            diesel::insert_into(components::table)
                .values((components::id.eq(&row.id), values))
                .execute(conn)?;
        }
    }
    Ok(())
}

impl Store {
    /// Replaces the inventory with `rows` (see [`sync`]).
    pub fn sync_components(&self, rows: &[ComponentRow], now: DateTime<Utc>) -> StoreResult<()> {
        self.write(|conn| {
            lock_all(conn)?;
            sync(conn, rows, now)
        })
    }

    /// Every component.
    pub fn components(&self) -> StoreResult<Vec<ComponentRow>> {
        self.read(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(exclusive: bool) -> ComponentRow {
        ComponentRow {
            id: "urn:publicid:IDN+am.example.org+node+h1".into(),
            name: "h1".into(),
            cpus: 4,
            memory_mb: 4096,
            max_vms: 3,
            exclusive,
            available: true,
            details: ComponentDetails::default(),
        }
    }

    #[test]
    fn fits_checks_every_limit() {
        let h = host(false);
        let free = Usage::default();
        assert!(h.fits(&free, 4, 4096, false));
        assert!(!h.fits(&free, 5, 1, false), "cpus");
        assert!(!h.fits(&free, 1, 4097, false), "memory");
        let three = Usage {
            cpus: 3,
            memory_mb: 3,
            slivers: 3,
            exclusive: false,
        };
        assert!(!h.fits(&three, 1, 1, false), "max vms");
        let one = Usage {
            slivers: 1,
            cpus: 1,
            memory_mb: 1,
            exclusive: false,
        };
        assert!(!h.fits(&one, 1, 1, true), "exclusive needs an empty host");
        let taken = Usage {
            exclusive: true,
            ..one
        };
        assert!(!h.fits(&taken, 1, 1, false), "held exclusively");
        assert!(!host(true).fits(&one, 1, 1, false), "exclusive component");
        let mut off = host(false);
        off.available = false;
        assert!(!off.fits(&free, 1, 1, false), "unavailable");
    }
}
