//! What a write changes of a sliver: the columns whose value differs from
//! the row as it was read, and only those, for the `UPDATE`.
//!
//! SQLite rewrites the entry of every index that holds a column an
//! `UPDATE` sets, whether its value changed or not, and each index page so
//! touched is another page in the write-ahead log at the commit. The
//! slivers table has six indexes besides its key; a job that records a
//! sliver's operational state wrote all of them (seven pages) where the
//! state's one index and the row (two) are what changed (docs/PERFORMANCE.md,
//! "One connection for the writes, and only the columns that changed").

use super::SliverRow;
use crate::model::plan::NodePlan;
use crate::model::{AllocationState, OperationalState, SliverAnnotations};
use crate::store::schema::slivers;
use crate::store::{Json, UnixTime};
use diesel::AsChangeset;

/// The columns of a sliver that a write changes; `None` leaves a column
/// out of the `UPDATE` (the key and the version are not among them).
#[derive(Debug, AsChangeset)]
#[diesel(table_name = slivers)]
pub(super) struct Changes {
    slice_urn: Option<String>,
    request_id: Option<String>,
    client_id: Option<String>,
    component_id: Option<String>,
    sliver_type: Option<String>,
    disk_image: Option<Option<String>>,
    cpus: Option<i64>,
    memory_mb: Option<i64>,
    exclusive: Option<bool>,
    allocation_state: Option<AllocationState>,
    operational_state: Option<OperationalState>,
    expires_at: Option<UnixTime>,
    error: Option<String>,
    annotations: Option<Json<SliverAnnotations>>,
    created_at: Option<UnixTime>,
    deleted_at: Option<Option<UnixTime>>,
    disk_gb: Option<Option<i64>>,
    cores: Option<Option<i64>>,
    ram_mb: Option<Option<i64>>,
    plan: Option<Option<Json<NodePlan>>>,
}

/// `row`'s value of each field that differs from `read`'s; nullable
/// fields as `Some(None)` when they became NULL. Every field of the row is
/// named (a field added to [`SliverRow`] and not here does not compile).
macro_rules! differing {
    ($read:ident, $row:ident; $($field:ident),*; $($nullable:ident),*) => {{
        let SliverRow { urn: _, version: _, $($field: _,)* $($nullable: _,)* } = $read;
        Changes {
            $($field: ($read.$field != $row.$field).then(|| $row.$field.clone()),)*
            $($nullable: ($read.$nullable != $row.$nullable).then(|| $row.$nullable.clone()),)*
        }
    }};
}

impl Changes {
    /// What `row` changes of the sliver `read` (the same sliver as read).
    pub(super) fn between(read: &SliverRow, row: &SliverRow) -> Changes {
        differing!(read, row;
            slice_urn, request_id, client_id, component_id, sliver_type, cpus, memory_mb,
            exclusive, allocation_state, operational_state, expires_at, error, annotations,
            created_at;
            disk_image, deleted_at, disk_gb, cores, ram_mb, plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::slivers::{find, insert, save};
    use crate::store::{Conn, Store, StoreError, slices};
    use chrono::{TimeDelta, Utc};
    use diesel::QueryDsl;
    use diesel::sqlite::Sqlite;

    /// A new allocated sliver of slice `urn:slice` and request `request`.
    fn allocated(request: &str) -> SliverRow {
        let now = Utc::now();
        SliverRow {
            urn: "urn:publicid:IDN+am+sliver+1".into(),
            slice_urn: "urn:slice".into(),
            request_id: request.into(),
            client_id: "node-0".into(),
            component_id: "urn:publicid:IDN+am+node+host1".into(),
            sliver_type: "vm".into(),
            disk_image: Some("urn:image".into()),
            cpus: 1,
            memory_mb: 1024,
            exclusive: false,
            allocation_state: AllocationState::Allocated,
            operational_state: OperationalState::PendingAllocation,
            expires_at: (now + TimeDelta::hours(1)).into(),
            error: String::new(),
            annotations: Json::default(),
            created_at: now.into(),
            version: 0,
            deleted_at: None,
            disk_gb: Some(10),
            cores: Some(1),
            ram_mb: Some(1024),
            plan: None,
        }
    }

    /// The `SET` list of the `UPDATE` that saves `row` over `read`.
    fn set_list(read: &SliverRow, row: &SliverRow) -> String {
        let update = diesel::update(slivers::table.find(&row.urn)).set(Changes::between(read, row));
        let sql = diesel::debug_query::<Sqlite, _>(&update).to_string();
        let set = sql.split(" SET ").nth(1).unwrap_or_default();
        set.split(" WHERE ").next().unwrap_or_default().to_owned()
    }

    #[test]
    fn an_update_sets_only_the_columns_that_changed() {
        let read = allocated("r1");
        let mut row = read.clone();
        row.operational_state = OperationalState::Ready;
        assert_eq!(set_list(&read, &row), "`operational_state` = ?");
        row.annotations = Json::new(SliverAnnotations {
            hostname: Some("vm1.example.org".into()),
            ..SliverAnnotations::default()
        });
        row.deleted_at = Some(Utc::now().into());
        assert_eq!(
            set_list(&read, &row),
            "`operational_state` = ?, `annotations` = ?, `deleted_at` = ?"
        );
    }

    /// `row` saved over `read`, as read back.
    fn save_and_find(store: &Store, read: &SliverRow, row: &SliverRow) -> SliverRow {
        store
            .write(|conn: &mut Conn| {
                save(conn, read, row)?;
                find(conn, &row.urn)
            })
            .expect("saved")
            .expect("found")
    }

    #[test]
    fn a_save_writes_every_change_and_a_column_set_back_to_null() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("s.sqlite").to_string_lossy(), 1).expect("store");
        let now = Utc::now();
        let read = store
            .write(|conn: &mut Conn| {
                slices::find_or_create(conn, "urn:slice", now + TimeDelta::days(1), now)?;
                let request = slices::insert_request(conn, "urn:slice", "<rspec/>", now)?;
                let row = allocated(&request);
                insert(conn, &row)?;
                Ok::<_, StoreError>(row)
            })
            .expect("inserted");
        let mut row = read.clone();
        row.allocation_state = AllocationState::Unallocated;
        row.deleted_at = Some(now.into());
        row.disk_image = None;
        row.error = "gone".into();
        let first = save_and_find(&store, &read, &row);
        assert_eq!(
            first,
            SliverRow {
                version: 1,
                ..row.clone()
            }
        );
        let mut row = first.clone();
        row.deleted_at = None;
        let second = save_and_find(&store, &first, &row);
        assert_eq!(second, SliverRow { version: 2, ..row });
    }
}
