//! The fixed sets of states the store filters on (live slivers, pending
//! and finished jobs), written as `=` terms joined by `OR` instead of
//! `IN (…)`. Diesel prepares a statement holding `IN (…)` anew on every
//! call on SQLite, because the list could change its length; with `OR`
//! the statement is prepared once per connection and reused, and SQLite's
//! planner still reads it as one lookup per value in the index on the
//! column (measured in docs/PERFORMANCE.md, "Prepared once").

use super::schema::{jobs, slivers};
use crate::model::{AllocationState, JobState, OperationalState};
use diesel::dsl::{Eq, Or};
use diesel::prelude::*;

type AllocationIs = Eq<slivers::allocation_state, AllocationState>;
type JobStateIs = Eq<jobs::state, JobState>;
type OperationalIs = Eq<slivers::operational_state, OperationalState>;

/// A sliver that holds resources: [`AllocationState::LIVE`].
pub(super) type LiveSliver = Or<AllocationIs, AllocationIs>;

/// A job still to run or running: [`JobState::PENDING`].
pub(super) type PendingJob = Or<JobStateIs, JobStateIs>;

/// A job that ended: [`JobState::FINISHED`].
pub(super) type FinishedJob = Or<JobStateIs, JobStateIs>;

/// A sliver waiting for the backend: [`OperationalState::AWAITING_BACKEND`].
pub(super) type AwaitingBackend =
    Or<Or<Or<OperationalIs, OperationalIs>, OperationalIs>, OperationalIs>;

/// Slivers in one of [`OperationalState::AWAITING_BACKEND`].
pub(super) fn awaiting_backend() -> AwaitingBackend {
    let [a, b, c, d] = OperationalState::AWAITING_BACKEND;
    let state = slivers::operational_state;
    state.eq(a).or(state.eq(b)).or(state.eq(c)).or(state.eq(d))
}

/// Slivers in one of [`AllocationState::LIVE`].
pub(super) fn live_sliver() -> LiveSliver {
    let [first, second] = AllocationState::LIVE;
    slivers::allocation_state
        .eq(first)
        .or(slivers::allocation_state.eq(second))
}

/// The same slivers as [`live_sliver`], for a walk of every live sliver in
/// the order of their URNs: written as "not unallocated", a term no index
/// serves, so that SQLite walks the URNs' index in order and stops at the
/// page's end. With [`live_sliver`] it read every live sliver through the
/// index on the state and sorted them all, for every page: a reconciler
/// round over 100,000 slivers took 8 s of CPU (docs/PERFORMANCE.md, "The
/// reconciler's round at a hundred thousand").
pub(super) fn live_sliver_by_urn() -> diesel::dsl::NotEq<slivers::allocation_state, AllocationState>
{
    slivers::allocation_state.ne(AllocationState::Unallocated)
}

/// Jobs in one of [`JobState::PENDING`].
pub(super) fn pending_job() -> PendingJob {
    job_state_in(JobState::PENDING)
}

/// Jobs in one of [`JobState::FINISHED`].
pub(super) fn finished_job() -> FinishedJob {
    job_state_in(JobState::FINISHED)
}

fn job_state_in([first, second]: [JobState; 2]) -> Or<JobStateIs, JobStateIs> {
    jobs::state.eq(first).or(jobs::state.eq(second))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Conn, Store};
    use diesel::sql_types::Text;
    use diesel::sqlite::Sqlite;

    #[derive(QueryableByName)]
    struct PlanStep {
        #[diesel(sql_type = Text)]
        detail: String,
    }

    /// SQLite's plan for `query`, whose binds are the given texts.
    fn plan<Q>(conn: &mut Conn, query: &Q, binds: &[&str]) -> String
    where
        Q: diesel::query_builder::QueryFragment<Sqlite>,
    {
        let Conn::Sqlite(sqlite) = conn else {
            panic!("a SQLite store")
        };
        let sql = diesel::debug_query::<Sqlite, _>(query).to_string();
        let sql = sql.split(" -- binds:").next().unwrap_or_default();
        let mut explain = diesel::sql_query(format!("EXPLAIN QUERY PLAN {sql}")).into_boxed();
        for bind in binds {
            explain = explain.bind::<Text, _>(bind.to_string());
        }
        let steps: Vec<PlanStep> = explain.load(sqlite).expect("explained");
        steps
            .into_iter()
            .map(|s| s.detail)
            .collect::<Vec<_>>()
            .join("; ")
    }

    #[test]
    fn the_state_sets_are_written_without_in_so_their_statements_are_cached() {
        let live = diesel::debug_query::<Sqlite, _>(&live_sliver()).to_string();
        let pending = diesel::debug_query::<Sqlite, _>(&pending_job()).to_string();
        assert!(!live.contains(" IN ") && live.contains(" OR "), "{live}");
        assert!(
            !pending.contains(" IN ") && pending.contains(" OR "),
            "{pending}"
        );
    }

    #[test]
    fn live_slivers_by_urn_are_the_live_slivers() {
        let unallocated = [AllocationState::Unallocated];
        let mut all = AllocationState::LIVE.to_vec();
        all.extend(unallocated);
        all.sort_by_key(|s| s.as_str());
        let mut known = AllocationState::ALL.to_vec();
        known.sort_by_key(|s| s.as_str());
        assert_eq!(all, known, "live or unallocated, nothing else");
    }

    #[test]
    fn the_live_slivers_are_walked_in_the_order_of_the_urns_index_without_a_sort_on_sqlite() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("s.sqlite").to_string_lossy(), 1).expect("store");
        let unallocated = AllocationState::Unallocated.as_str();
        let page = store
            .read(|conn| {
                let page = slivers::table
                    .filter(live_sliver_by_urn())
                    .filter(slivers::urn.gt("urn:x"))
                    .order(slivers::urn)
                    .limit(500)
                    .select(slivers::urn);
                Ok::<_, crate::store::StoreError>(plan(conn, &page, &[unallocated, "urn:x", "500"]))
            })
            .expect("read");
        assert!(
            page.contains("USING INDEX sqlite_autoindex_slivers_1 (urn>?)"),
            "{page}"
        );
        assert!(!page.contains("TEMP B-TREE"), "{page}");
    }

    #[test]
    fn a_slices_live_slivers_the_live_usage_and_the_slivers_awaiting_the_backend_are_index_lookups_on_sqlite()
     {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("s.sqlite").to_string_lossy(), 1).expect("store");
        let [allocated, provisioned] = AllocationState::LIVE.map(|s| s.as_str());
        let [a, b, c, d] = OperationalState::AWAITING_BACKEND.map(|s| s.as_str());
        let (of_slice, usage, awaiting) = store
            .read(|conn| {
                let of_slice = slivers::table
                    .filter(slivers::slice_urn.eq("urn:x"))
                    .filter(live_sliver())
                    .select(slivers::urn);
                let usage = slivers::table
                    .filter(live_sliver())
                    .filter(slivers::expires_at.gt(0i64))
                    .select(slivers::component_id);
                let awaiting = slivers::table
                    .filter(awaiting_backend())
                    .filter(slivers::allocation_state.eq(AllocationState::Provisioned))
                    .select(slivers::urn);
                Ok::<_, crate::store::StoreError>((
                    plan(conn, &of_slice, &["urn:x", allocated, provisioned]),
                    plan(conn, &usage, &[allocated, provisioned, "0"]),
                    plan(conn, &awaiting, &[a, b, c, d, provisioned]),
                ))
            })
            .expect("read");
        assert!(
            of_slice.contains("USING INDEX slivers_slice_state"),
            "{of_slice}"
        );
        assert!(usage.contains("USING INDEX slivers_expiry"), "{usage}");
        assert!(
            awaiting.contains("USING INDEX slivers_operational"),
            "{awaiting}"
        );
    }
}
