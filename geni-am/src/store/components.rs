//! Components: the capacity rows of the inventory (seeded by `serve` from
//! the backend and kept in line with it by the jobs' inventory refresh,
//! both through [`Store::sync_components`]) and what live slivers use of
//! them.

mod from_backend;

pub use from_backend::component_rows;

use super::cached::CachedDsl;
use super::schema::{components, jobs, slivers};
use super::{Conn, Json, Store, StoreResult, UnixTime};
use crate::model::{AllocationState, JobKind};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

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
    /// CPU capacity one sliver takes, in the unit of the component's
    /// `cpus` (cores for the simulated cloud, hundredths of a CPU share
    /// for OpenNebula).
    pub cpus: i64,
    /// Cores (VCPUs) one sliver has unless its request sizes it; unset
    /// (types stored by earlier releases): `cpus`.
    #[serde(default)]
    pub cores: Option<i64>,
    /// Memory per sliver (MiB).
    pub memory_mb: i64,
    /// The most cores a request may ask for; unset: the type's cores.
    #[serde(default)]
    pub max_cores: Option<i64>,
    /// The most memory a request may ask for (MiB); unset: `memory_mb`.
    #[serde(default)]
    pub max_ram_mb: Option<i64>,
    /// The largest disk a request may ask for (GB); unset: none.
    #[serde(default)]
    pub max_disk_gb: Option<i64>,
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
type Columns = (
    String,
    String,
    i64,
    i64,
    i64,
    bool,
    bool,
    Json<ComponentDetails>,
);

fn from_columns(c: Columns) -> ComponentRow {
    let (id, name, cpus, memory_mb, max_vms, exclusive, available, details) = c;
    ComponentRow {
        id,
        name,
        cpus,
        memory_mb,
        max_vms,
        exclusive,
        available,
        details: details.into_value(),
    }
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
    Ok(rows.into_iter().map(from_columns).collect())
}

/// Every component's name, by id (what manifests name components by),
/// without reading their descriptions.
pub fn names(conn: &mut Conn) -> StoreResult<HashMap<String, String>> {
    let rows: Vec<(String, String)> = components::table
        .select((components::id, components::name))
        .load(conn)?;
    Ok(rows.into_iter().collect())
}

/// Locks every component row until the transaction ends, so that
/// concurrent allocations (also from other processes) are serialised. On
/// PostgreSQL this is `SELECT … FOR UPDATE` in id order (no deadlocks); on
/// SQLite the write transaction's `BEGIN IMMEDIATE` already holds the
/// database's single write lock.
pub fn lock_all(conn: &mut Conn) -> StoreResult<()> {
    if let Conn::Postgres(pg) = conn {
        // Row locks lock nothing while the table is empty: two processes
        // starting on a new database would both insert the inventory. The
        // transaction's advisory lock covers that case too.
        diesel::sql_query(format!("SELECT pg_advisory_xact_lock({COMPONENTS_LOCK})"))
            .execute(pg)?;
        diesel::sql_query("SELECT id FROM components ORDER BY id FOR UPDATE").execute(pg)?;
    }
    Ok(())
}

/// Advisory lock key of the components table on PostgreSQL ("comps").
const COMPONENTS_LOCK: i64 = 0x0063_6f6d_7073;

/// What slivers use, per component id: live ones not yet expired at
/// `now`, and deleted ones whose VM a destroy job has not yet destroyed
/// (their capacity is still taken in the cloud). The live slivers are
/// summed by the database (one row per component, however many slivers:
/// Allocate, ListResources and the operator's metrics all read it); the
/// deleted ones awaiting destruction are few and read one by one, through
/// their pending destroy jobs.
pub fn usage(conn: &mut Conn, now: DateTime<Utc>) -> StoreResult<HashMap<String, Usage>> {
    use diesel::dsl::{count_star, sql};
    use diesel::sql_types::{BigInt, Bool};
    let totals: Vec<(String, i64, i64, i64, bool)> = slivers::table
        // The live states rather than "not unallocated", so that the
        // (allocation_state, expires_at) index serves it.
        .filter(super::filters::live_sliver())
        .filter(slivers::expires_at.gt(UnixTime::from(now)))
        .group_by(slivers::component_id)
        .select((
            slivers::component_id,
            // SUM of a BIGINT is NUMERIC on PostgreSQL: cast it back.
            sql::<BigInt>("CAST(COALESCE(SUM(cpus), 0) AS BIGINT)"),
            sql::<BigInt>("CAST(COALESCE(SUM(memory_mb), 0) AS BIGINT)"),
            count_star(),
            sql::<Bool>("MAX(CASE WHEN exclusive THEN 1 ELSE 0 END) = 1"),
        ))
        .cached()
        .load(conn)?;
    let mut usage: HashMap<String, Usage> = totals
        .into_iter()
        .map(|(component, cpus, memory_mb, slivers, exclusive)| {
            let used = Usage {
                cpus,
                memory_mb,
                slivers,
                exclusive,
            };
            (component, used)
        })
        .collect();
    // One statement of a fixed text (kept prepared), where a list of the
    // URNs read first was prepared anew for every length. The slivers are
    // found by URN; their state is checked here, since a condition on it
    // would lead SQLite to scan every deleted sliver through its index.
    let destroying = jobs::table
        .filter(jobs::kind.eq(JobKind::Destroy))
        .filter(super::filters::pending_job())
        .select(jobs::sliver_urn);
    let rows: Vec<(String, i64, i64, bool, AllocationState)> = slivers::table
        .filter(slivers::urn.nullable().eq_any(destroying))
        .select((
            slivers::component_id,
            slivers::cpus,
            slivers::memory_mb,
            slivers::exclusive,
            slivers::allocation_state,
        ))
        .cached()
        .load(conn)?;
    let deleted = rows
        .into_iter()
        .filter(|row| row.4 == AllocationState::Unallocated);
    for (component, cpus, memory_mb, exclusive, _) in deleted {
        let u = usage.entry(component).or_default();
        u.cpus += cpus;
        u.memory_mb += memory_mb;
        u.slivers += 1;
        u.exclusive |= exclusive;
    }
    Ok(usage)
}

/// What bringing the components table in line with an inventory changes,
/// by component id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InventoryChanges {
    /// Components the inventory lists and the table lacked.
    pub added: Vec<String>,
    /// Components whose capacity, availability or description changed.
    pub updated: Vec<String>,
    /// Available components the inventory no longer lists, now unavailable.
    pub withdrawn: Vec<String>,
}

impl InventoryChanges {
    /// Whether nothing changes.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.updated.is_empty() && self.withdrawn.is_empty()
    }
}

/// The rows to insert, the rows to update and the ids to withdraw so that
/// `stored` matches `fresh`; of two fresh rows with one id the first counts.
struct Plan<'a> {
    added: Vec<&'a ComponentRow>,
    updated: Vec<&'a ComponentRow>,
    withdrawn: Vec<String>,
}

impl<'a> Plan<'a> {
    fn new(stored: &[ComponentRow], fresh: &'a [ComponentRow]) -> Plan<'a> {
        let known: HashMap<&str, &ComponentRow> =
            stored.iter().map(|row| (row.id.as_str(), row)).collect();
        let mut listed = HashSet::new();
        let mut plan = Plan {
            added: Vec::new(),
            updated: Vec::new(),
            withdrawn: Vec::new(),
        };
        for row in fresh.iter().filter(|row| listed.insert(row.id.as_str())) {
            match known.get(row.id.as_str()) {
                None => plan.added.push(row),
                Some(old) if *old != row => plan.updated.push(row),
                Some(_) => {}
            }
        }
        plan.withdrawn = stored
            .iter()
            .filter(|row| row.available && !listed.contains(row.id.as_str()))
            .map(|row| row.id.clone())
            .collect();
        plan
    }

    fn changes(&self) -> InventoryChanges {
        let ids = |rows: &[&ComponentRow]| rows.iter().map(|row| row.id.clone()).collect();
        InventoryChanges {
            added: ids(&self.added),
            updated: ids(&self.updated),
            withdrawn: self.withdrawn.clone(),
        }
    }
}

/// Makes the components table match `rows`: new ones are added, changed
/// ones updated, and available ones no longer listed marked unavailable
/// (kept, since slivers may still refer to them). Rows that already match
/// are not written. What slivers use is not touched: the core computes
/// free capacity from the slivers against these rows.
pub fn sync(
    conn: &mut Conn,
    rows: &[ComponentRow],
    now: DateTime<Utc>,
) -> StoreResult<InventoryChanges> {
    let stored = all(conn)?;
    let plan = Plan::new(&stored, rows);
    let at = UnixTime::from(now);
    if !plan.withdrawn.is_empty() {
        diesel::update(components::table.filter(components::id.eq_any(&plan.withdrawn)))
            .set((
                components::available.eq(false),
                components::updated_at.eq(at),
            ))
            .execute(conn)?;
    }
    for row in plan.added.iter().chain(&plan.updated) {
        let details = Json::new(row.details.clone());
        let values = (
            components::name.eq(&row.name),
            components::cpus.eq(row.cpus),
            components::memory_mb.eq(row.memory_mb),
            components::max_vms.eq(row.max_vms),
            components::exclusive.eq(row.exclusive),
            components::available.eq(row.available),
            components::details.eq(&details),
            components::updated_at.eq(at),
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
    Ok(plan.changes())
}

impl Store {
    /// Brings the inventory in line with `rows` (see [`sync`]) in one
    /// transaction holding the component locks, as allocations do. When a
    /// first read shows nothing to change, no write transaction is opened,
    /// so a periodic refresh of an unchanged cloud does not contend with
    /// allocations for the write lock.
    pub fn sync_components(
        &self,
        rows: &[ComponentRow],
        now: DateTime<Utc>,
    ) -> StoreResult<InventoryChanges> {
        if Plan::new(&self.components()?, rows).changes().is_empty() {
            return Ok(InventoryChanges::default());
        }
        self.write(|conn| {
            lock_all(conn)?;
            sync(conn, rows, now)
        })
    }

    /// Every component.
    pub fn components(&self) -> StoreResult<Vec<ComponentRow>> {
        self.read(all)
    }

    /// Gives the live slivers an earlier release stored (no granted
    /// `cores`) their granted size, and counts their capacity in their
    /// component's unit: earlier releases counted an OpenNebula sliver's CPU
    /// in cores, where hosts are now counted in hundredths of a CPU share.
    /// Run once the components follow the backend (`serve` does it at
    /// start); returns how many slivers changed.
    pub fn adopt_earlier_sizes(&self) -> StoreResult<usize> {
        self.write(|conn| {
            let specs: HashMap<(String, String), SliverTypeSpec> = all(conn)?
                .into_iter()
                .flat_map(|c| {
                    let id = c.id;
                    c.details
                        .sliver_types
                        .into_iter()
                        .map(move |t| ((id.clone(), t.name.clone()), t))
                })
                .collect();
            let earlier: Vec<(String, String, String, i64, i64)> = slivers::table
                .filter(slivers::cores.is_null())
                .filter(slivers::allocation_state.ne(AllocationState::Unallocated))
                .select((
                    slivers::urn,
                    slivers::component_id,
                    slivers::sliver_type,
                    slivers::cpus,
                    slivers::memory_mb,
                ))
                .load(conn)?;
            for (urn, component, kind, cores, memory_mb) in &earlier {
                let cpus = specs
                    .get(&(component.clone(), kind.clone()))
                    .map_or(*cores, |spec| spec.capacity_of(*cores));
                diesel::update(slivers::table.find(urn))
                    .set((
                        slivers::cores.eq(Some(*cores)),
                        slivers::ram_mb.eq(Some(*memory_mb)),
                        slivers::cpus.eq(cpus),
                        slivers::version.eq(slivers::version + 1),
                    ))
                    .execute(conn)?;
            }
            Ok(earlier.len())
        })
    }
}

impl SliverTypeSpec {
    /// Cores (VCPUs) one sliver of this type has unless sized.
    pub fn default_cores(&self) -> i64 {
        self.cores.unwrap_or(self.cpus)
    }

    /// The CPU capacity a sliver of `cores` takes: the type's capacity per
    /// core, rounded up, so a sized VM is counted as the cloud places it.
    pub fn capacity_of(&self, cores: i64) -> i64 {
        let per = self.default_cores().max(1);
        (cores.saturating_mul(self.cpus) + per - 1) / per
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

    fn named(id: &str, available: bool) -> ComponentRow {
        ComponentRow {
            id: id.into(),
            name: id.into(),
            available,
            ..host(false)
        }
    }

    #[test]
    fn a_plan_adds_updates_and_withdraws_only_what_changed() {
        let stored = [named("h1", true), named("h2", true), named("h3", false)];
        let mut bigger = named("h1", true);
        bigger.cpus = 8;
        let fresh = [bigger, named("h4", true), named("h4", false)];
        let changes = Plan::new(&stored, &fresh).changes();
        assert_eq!(changes.added, ["h4"]);
        assert_eq!(changes.updated, ["h1"]);
        assert_eq!(changes.withdrawn, ["h2"], "h3 is already unavailable");
        assert!(Plan::new(&stored, &stored).changes().is_empty());
        let unlisted = Plan::new(&stored, &[]).changes();
        assert_eq!(unlisted.withdrawn, ["h1", "h2"]);
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
