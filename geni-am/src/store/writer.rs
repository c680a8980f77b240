//! This process's SQLite writer: the turn its write transactions take one
//! at a time, and the one connection they all run on.
//!
//! SQLite lets one writer in at a time, and one that finds the file locked
//! sleeps in its busy handler (1, 2, 5, 10, … up to 100 ms) before it looks
//! again; waiting for the turn instead wakes the next writer as soon as the
//! last one is done (the busy timeout still covers writers of other
//! processes).
//!
//! A connection keeps the pages it read for its next transaction only
//! while no other connection has written to the file; every commit of
//! another one empties its cache. When each write took a connection of the
//! pool, every write transaction found its cache emptied by the writes
//! before it and read its pages again from the file (a system call each).
//! All of this process's writes are serialised anyway, so they now share
//! one connection, whose cache stays valid from one write to the next
//! (docs/PERFORMANCE.md, "One connection for the writes, and only the
//! columns that changed"). It is held in a pool of one, so that it is
//! closed, with its cache, after a while unused like the pool's others,
//! and replaced if a transaction left it broken.

use super::{IDLE_TIMEOUT, Manager, StoreResult};
use diesel::r2d2::{Pool, PooledConnection};
use scheduled_thread_pool::ScheduledThreadPool;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

/// The turn and the connection of one SQLite file's writers, shared by
/// every pool of a store (see `Store::with_own_pool`).
#[derive(Default)]
pub(super) struct Writer {
    /// Held by a write transaction (or a checkpoint that must not run
    /// beside one) until it has ended.
    turn: Mutex<()>,
    /// The writers' connection, made at the first write.
    pool: OnceLock<Pool<Manager>>,
}

impl Writer {
    /// Waits for this process's turn to write.
    pub(super) fn turn(&self) -> MutexGuard<'_, ()> {
        self.turn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The writers' connection to `url`, opened if there is none (the
    /// first write, or after it was closed unused or broken). Only to be
    /// taken in the [`Writer::turn`].
    pub(super) fn connection(&self, url: &str) -> StoreResult<PooledConnection<Manager>> {
        let pool = self.pool.get_or_init(|| {
            Pool::builder()
                .max_size(1)
                .min_idle(Some(0))
                .idle_timeout(Some(IDLE_TIMEOUT))
                .connection_timeout(Duration::from_secs(30))
                // As the store's pools on SQLite: the check (`SELECT 1`)
                // would cost a statement per write, and a file does not go
                // away.
                .test_on_check_out(false)
                .thread_pool(Arc::new(
                    ScheduledThreadPool::builder()
                        .num_threads(1)
                        .thread_name_pattern("store-writer-{}")
                        .build(),
                ))
                .build_unchecked(Manager::new(url))
        });
        Ok(pool.get()?)
    }

    /// The writers' connection: `(in use, idle)`, `(0, 0)` while it is
    /// closed.
    pub(super) fn state(&self) -> (u32, u32) {
        self.pool.get().map_or((0, 0), |pool| {
            let state = pool.state();
            (
                state.connections.saturating_sub(state.idle_connections),
                state.idle_connections,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::store::{Conn, Store, StoreError};
    use diesel::RunQueryDsl;
    use diesel::connection::SimpleConnection;

    /// A row of `temp.seen` (a temporary table: only the connection that
    /// made it sees it).
    #[derive(diesel::QueryableByName)]
    struct Seen {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }

    /// The rows the writers' connection has put in `temp.seen`.
    fn seen(store: &Store) -> Vec<i64> {
        store
            .write(|conn: &mut Conn| {
                let rows: Vec<Seen> =
                    diesel::sql_query("SELECT n FROM temp.seen ORDER BY n").load(conn)?;
                Ok::<_, StoreError>(rows.into_iter().map(|r| r.n).collect())
            })
            .expect("read in a write")
    }

    #[test]
    fn every_write_of_a_process_runs_on_one_connection_whichever_pool_asks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.sqlite");
        let store = Store::open(&path.to_string_lossy(), 4).expect("store");
        let jobs = store.with_own_pool(4).expect("second pool");
        // Readers hold the pool's connections, so a write taking one of
        // them would get another connection than the first write's.
        let _held: Vec<_> = (0..3).map(|_| store.conn().expect("conn")).collect();
        store
            .write(|conn: &mut Conn| {
                conn.batch_execute(
                    "CREATE TEMP TABLE seen (n BIGINT); INSERT INTO seen VALUES (1)",
                )?;
                Ok::<_, StoreError>(())
            })
            .expect("first write");
        jobs.write(|conn: &mut Conn| {
            conn.batch_execute("INSERT INTO temp.seen VALUES (2)")?;
            Ok::<_, StoreError>(())
        })
        .expect("the other pool's write");
        assert_eq!(seen(&store), [1, 2]);
        // A pooled connection does not see the writers' temporary table.
        let other = diesel::sql_query("SELECT n FROM temp.seen")
            .load::<Seen>(&mut *store.conn().expect("conn"));
        assert!(other.is_err(), "a reader saw the writers' table");
    }

    #[test]
    fn the_pools_use_counts_the_writers_connection() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("s.sqlite").to_string_lossy(), 2).expect("store");
        let (before, _) = store.pool_use();
        let during = store
            .write(|_: &mut Conn| Ok::<_, StoreError>(store.pool_use()))
            .expect("write");
        let after = store.pool_use();
        assert_eq!((before, during.0, after.0), (0, 1, 0), "in use");
        // The migrations' write opened it, and it stays open unused.
        assert_eq!(after.1, during.1 + 1, "idle once the write ended");
    }

    #[test]
    fn a_write_that_fails_or_panics_leaves_no_transaction_open_for_the_next() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("s.sqlite").to_string_lossy(), 2).expect("store");
        store
            .write(|conn: &mut Conn| {
                conn.batch_execute("CREATE TABLE kept (n BIGINT)")?;
                Ok::<_, StoreError>(())
            })
            .expect("table");
        let failed = store.write(|conn: &mut Conn| {
            conn.batch_execute("INSERT INTO kept VALUES (1)")?;
            Err::<(), _>(StoreError::Migration("refused".into()))
        });
        assert!(failed.is_err());
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            store.write(|conn: &mut Conn| {
                conn.batch_execute("INSERT INTO kept VALUES (2)")
                    .map_err(StoreError::from)?;
                panic!("a bug inside a write transaction");
                #[allow(unreachable_code)]
                Ok::<(), StoreError>(())
            })
        }));
        assert!(panicked.is_err());
        store
            .write(|conn: &mut Conn| {
                conn.batch_execute("INSERT INTO kept VALUES (3)")?;
                Ok::<_, StoreError>(())
            })
            .expect("the next write");
        let rows: Vec<Seen> = diesel::sql_query("SELECT n FROM kept")
            .load(&mut *store.conn().expect("conn"))
            .expect("rows");
        assert_eq!(rows.iter().map(|r| r.n).collect::<Vec<_>>(), [3]);
    }
}
