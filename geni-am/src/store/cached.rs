//! Statements kept prepared although diesel would not keep them.
//!
//! diesel 2.3 prepares an `UPDATE`, a statement with an `sql()` literal
//! and a SQLite insert of a row with optional columns anew on every
//! execution: their types do not determine their text (a changeset may
//! skip `None` fields), so it marks them unsafe to cache. [`Cached`] keeps
//! them in the connection's statement cache keyed by their SQL text and
//! bind types instead of their type (diesel's `StatementCacheKey::Sql`),
//! which is right whatever the text: two executions share a prepared
//! statement only when their SQL and bind types are identical. Only
//! statements with a bounded number of texts may be wrapped (not an
//! `IN (…)` list of any length), since the cache keeps every text it sees
//! for the life of the connection.

use diesel::backend::Backend;
use diesel::internal::derives::multiconnection::AstPassHelper;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::{QueryResult, RunQueryDsl};
use std::cell::Cell;

/// A statement kept prepared by its SQL text (see the module doc).
#[derive(Debug, Clone, Copy)]
pub struct Cached<Q>(Q);

/// Wraps a diesel statement in [`Cached`].
pub trait CachedDsl: Sized {
    /// This statement, kept prepared by its SQL text.
    fn cached(self) -> Cached<Self> {
        Cached(self)
    }
}

impl<Q> CachedDsl for Q {}

impl<Q> QueryId for Cached<Q> {
    type QueryId = ();
    // Keyed by its SQL text, never by its type.
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: QueryFragment<DB>, DB: Backend> QueryFragment<DB> for Cached<Q> {
    /// The statement's own text and binds, except in the pass that asks
    /// whether it may be kept prepared, where the statement is not walked
    /// (an `UPDATE` would answer no). That pass is told apart by
    /// elimination, since diesel hands it on through references (`&T`
    /// walks its target) and not through `is_safe_to_cache_prepared`.
    fn walk_ast<'b>(&'b self, mut pass: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        if pass.bind_collector().is_some() || pass.debug_binds().is_some() {
            return self.0.walk_ast(pass);
        }
        let to_sql = Cell::new(false);
        let mut pass = pass.cast_database::<DB>(
            |collector| collector,
            higher_ranked(|builder| {
                to_sql.set(true);
                builder
            }),
            |backend| backend,
            |lookup| lookup,
        );
        if to_sql.get() {
            return self.0.walk_ast(pass);
        }
        // Left: whether it may be kept prepared (yes), and whether it does
        // nothing (no).
        pass.push_sql("");
        Ok(())
    }
}

/// `convert` with the signature `cast_database` asks for (the lifetime
/// of the result that of the argument, for any lifetime).
fn higher_ranked<T, F: Fn(&mut T) -> &mut T>(convert: F) -> F {
    convert
}

impl<Q: Query> Query for Cached<Q> {
    type SqlType = Q::SqlType;
}

impl<Q, C> RunQueryDsl<C> for Cached<Q> {}

#[cfg(test)]
mod tests {
    use super::CachedDsl;
    use crate::store::schema::slices;
    use crate::store::{Conn, Store, StoreError};
    use diesel::connection::{Instrumentation, InstrumentationEvent};
    use diesel::prelude::*;
    use std::sync::{Arc, Mutex};

    /// Counts the statements a connection prepares and keeps.
    #[derive(Clone, Default)]
    struct Prepared(Arc<Mutex<Vec<String>>>);

    impl Instrumentation for Prepared {
        fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
            if let InstrumentationEvent::CacheQuery { sql, .. } = event
                && let Ok(mut kept) = self.0.lock()
            {
                kept.push(sql.to_owned());
            }
        }
    }

    #[test]
    fn an_update_wrapped_in_cached_is_prepared_once_however_often_it_runs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("s.sqlite").to_string_lossy(), 1).expect("store");
        let kept = Prepared::default();
        let counted = kept.clone();
        store
            .write(|conn: &mut Conn| {
                conn.set_instrumentation(counted);
                for n in 0..3i64 {
                    diesel::update(slices::table.find("urn:x"))
                        .set(slices::credential_expires.eq(n))
                        .cached()
                        .execute(conn)
                        .map_err(StoreError::from)?;
                }
                Ok::<_, StoreError>(())
            })
            .expect("updated");
        let kept = kept.0.lock().expect("kept").clone();
        let updates: Vec<_> = kept.iter().filter(|s| s.starts_with("UPDATE")).collect();
        assert_eq!(updates.len(), 1, "{kept:?}");
    }
}
