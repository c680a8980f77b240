//! This process's SQLite writer: the turn its write transactions take one
//! at a time, the one connection they all run on, and the groups in which
//! they commit.
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
//!
//! A commit writes every page the transaction changed to the WAL, and
//! consecutive transactions change many of the same pages (the last page
//! of each index of events and jobs, the slivers' pages). So each
//! writer's work runs in a savepoint of the transaction (one that fails
//! is rolled back to it alone), and a writer that finds others waiting
//! for the turn leaves the transaction open for them instead of
//! committing it; the last of the group, the one that finds nobody
//! waiting or the group full ([`MOST_IN_GROUP`]), commits all of them at
//! once. Every member returns only after that commit, so what a caller
//! is told was written has been committed; a commit that fails, or a
//! transaction that can no longer be trusted (see [`run`]), fails every
//! member's write. One writer alone commits at once, as before.
//!
//! Waking a thread can hand it the CPU at once, so the turn is freed
//! before anyone is woken: a writer that lost the CPU while it still held
//! the turn held up every writer behind it (docs/PERFORMANCE.md, "The
//! writers' turn under a hundred clients").

use super::{Conn, IDLE_TIMEOUT, Manager, StoreError, StoreResult};
use diesel::connection::{AnsiTransactionManager, SimpleConnection, TransactionManager};
use diesel::r2d2::{CustomizeConnection, Pool, PooledConnection};
use scheduled_thread_pool::ScheduledThreadPool;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

/// Most write transactions committed together: the last member of a full
/// group waits for the others' work before its answer, a fraction of a
/// millisecond each.
const MOST_IN_GROUP: usize = 16;

/// The turn and the connection of one SQLite file's writers, shared by
/// every pool of a store (see `Store::with_own_pool`).
#[derive(Default)]
pub(super) struct Writer {
    /// Who has the turn, who waits for it, and the group left open.
    turn: Mutex<Turn>,
    /// Told when the turn is free again.
    freed: Condvar,
    /// The writers' connection, made at the first write.
    pool: OnceLock<Pool<Manager>>,
}

/// The state of the writers' turn.
#[derive(Default)]
struct Turn {
    /// Held by a write transaction running its work (or a checkpoint that
    /// must not run beside one).
    held: bool,
    /// Writers waiting for the turn.
    waiting: usize,
    /// The transaction left open for the writers waiting, between two
    /// members of its group.
    open: Option<Group>,
}

/// A write transaction holding the work of one or more writers.
struct Group {
    /// The writers' connection, the transaction open on it.
    conn: PooledConnection<Manager>,
    /// Writers whose work it holds, each waiting for its end.
    members: usize,
    /// Writers that ran in it, their work kept or undone.
    ran: usize,
    /// How it ended, told to its members.
    end: Arc<Ending>,
}

/// How a group ended: committed, or why not. Its members wait for it on
/// a lock of its own, not the turn's, so that the writer holding the turn
/// never waits for a member woken by the end of an earlier group.
#[derive(Default)]
struct Ending {
    /// Set once, when the group has ended.
    how: Mutex<Option<Result<(), String>>>,
    /// Told when `how` is set.
    told: Condvar,
}

impl Ending {
    /// Sets how the group ended; tells its members, if any wait (`tell`).
    fn set(&self, how: Result<(), String>, tell: bool) {
        *self.how.lock().unwrap_or_else(PoisonError::into_inner) = Some(how);
        if tell {
            self.told.notify_all();
        }
    }

    /// Waits until the group has ended; how it ended.
    fn wait(&self) -> Result<(), String> {
        let mut how = self.how.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if let Some(ended) = how.as_ref() {
                return ended.clone();
            }
            how = self.told.wait(how).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// What became of one writer's work in its group.
enum Member {
    /// It is in the group's transaction, to be committed with it.
    Kept,
    /// It was undone: its savepoint rolled back.
    Undone,
    /// The group's transaction can no longer be trusted and is abandoned.
    Broken(String),
}

/// A writer's work: what it returned, or the panic it raised.
type Outcome<T, E> = std::thread::Result<Result<T, E>>;

impl Writer {
    fn state(&self) -> MutexGuard<'_, Turn> {
        self.turn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits, with the turn's lock `turn` taken, until nobody holds the
    /// turn; the lock, taken again.
    fn wait_for_turn<'a>(&self, mut turn: MutexGuard<'a, Turn>) -> MutexGuard<'a, Turn> {
        while turn.held {
            turn = self
                .freed
                .wait(turn)
                .unwrap_or_else(PoisonError::into_inner);
        }
        turn
    }

    /// Ends `group` as `how` says: gives its connection back to the pool
    /// (for the next group), frees the turn, and only then tells its
    /// members waiting, all of them but the one ending it when that one's
    /// work is in it (`kept`). Waking a thread can hand it the CPU at once,
    /// and a writer that lost the CPU while holding the turn held up every
    /// other writer until it got it back.
    fn end(&self, group: Group, held: Held<'_>, how: Result<(), String>, kept: bool) {
        let Group {
            conn, members, end, ..
        } = group;
        drop(conn);
        drop(held);
        end.set(how, members > usize::from(kept));
    }

    /// Waits for this process's turn to write, without joining a group:
    /// held until the guard is dropped.
    pub(super) fn turn(&self) -> Held<'_> {
        let mut turn = self.wait_for_turn(self.state());
        turn.held = true;
        Held(self)
    }

    /// Runs `f` in a write transaction on the writers' connection to
    /// `url`, committed alone or with others' (see the module's doc);
    /// returns its outcome, and whether this writer committed a group
    /// (so that the caller counts one commit per group). A panic of `f`
    /// is raised again once its work is undone.
    pub(super) fn write<T, E: From<StoreError>>(
        &self,
        url: &str,
        f: impl FnOnce(&mut Conn) -> Result<T, E>,
    ) -> (Result<T, E>, bool) {
        let open = {
            let mut turn = self.state();
            turn.waiting += 1;
            turn = self.wait_for_turn(turn);
            turn.waiting -= 1;
            turn.held = true;
            turn.open.take()
        };
        let held = Held(self);
        let mut group = match open {
            Some(group) => group,
            None => match self.begin(url) {
                Ok(group) => group,
                Err(error) => return (Err(error.into()), false),
            },
        };
        let (outcome, member) = run(&mut group, f);
        group.ran += 1;
        let end = Arc::clone(&group.end);
        // Whose outcome is the group's end: a kept member's, and any
        // member's of a group abandoned.
        let ends_with_group = matches!(member, Member::Kept | Member::Broken(_));
        let committed = match member {
            Member::Kept => {
                group.members += 1;
                self.close_or_leave(group, held, true)
            }
            Member::Undone if group.members > 0 => self.close_or_leave(group, held, false),
            // Its transaction holds nothing: it ends, and the connection
            // is given back.
            Member::Undone => {
                if let Err(rollback) = Conn::rollback_transaction(&mut group.conn) {
                    tracing::warn!(%rollback, "rollback failed");
                }
                drop(group);
                drop(held);
                false
            }
            Member::Broken(why) => {
                self.abandon(group, held, why);
                false
            }
        };
        let outcome = match outcome {
            Ok(Ok(value)) if ends_with_group => match end.wait() {
                Ok(()) => Ok(value),
                Err(why) => Err(E::from(StoreError::Commit(why))),
            },
            Ok(outcome) => outcome,
            Err(panic) => resume_unwind(panic),
        };
        (outcome, committed)
    }

    /// A new group: the writers' connection with `BEGIN IMMEDIATE` run.
    fn begin(&self, url: &str) -> StoreResult<Group> {
        let mut conn = self.connection(url)?;
        match &mut *conn {
            Conn::Sqlite(c) => AnsiTransactionManager::begin_transaction_sql(c, "BEGIN IMMEDIATE")?,
            Conn::Postgres(c) => AnsiTransactionManager::begin_transaction(c)?,
        }
        Ok(Group {
            conn,
            members: 0,
            ran: 0,
            end: Arc::default(),
        })
    }

    /// Commits `group` when nobody waits for the turn or it is full, else
    /// leaves it open for the next writer; frees the turn. `kept` says
    /// whether the caller's work is in it. Returns whether it committed.
    fn close_or_leave(&self, mut group: Group, held: Held<'_>, kept: bool) -> bool {
        let mut turn = self.state();
        if turn.waiting > 0 && group.ran < MOST_IN_GROUP {
            // Left and freed under one lock: the turn is never held by a
            // writer that has nothing left to do in it.
            turn.open = Some(group);
            held.free(turn);
            return false;
        }
        drop(turn);
        let committed = Conn::commit_transaction(&mut group.conn).map_err(|e| e.to_string());
        self.end(group, held, committed, kept);
        true
    }

    /// Ends `group` without its commit, for `why`: its transaction is
    /// rolled back and every member waiting told so. Called in the turn.
    fn abandon(&self, mut group: Group, held: Held<'_>, why: String) {
        tracing::warn!(%why, members = group.members, "a write transaction was abandoned");
        // Whatever diesel believes of the connection, SQLite's transaction
        // ends here; while diesel counts one open, the pool closes the
        // connection when it is given back.
        let _ = group.conn.batch_execute("ROLLBACK");
        self.end(group, held, Err(why), false);
    }

    /// The writers' connection to `url`, opened if there is none (the
    /// first write, or after it was closed unused or broken). Only to be
    /// taken in the writers' turn.
    fn connection(&self, url: &str) -> StoreResult<PooledConnection<Manager>> {
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
                .connection_customizer(Box::new(SavepointsInMemory))
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
    pub(super) fn connections(&self) -> (u32, u32) {
        self.pool.get().map_or((0, 0), |pool| {
            let state = pool.state();
            (
                state.connections.saturating_sub(state.idle_connections),
                state.idle_connections,
            )
        })
    }
}

/// Keeps the writers' connection's temporary files in memory: the
/// journal of each member's savepoint among them, which SQLite would
/// otherwise write to a file once it outgrows 64 KiB (a group of a few
/// members' pages).
#[derive(Debug)]
struct SavepointsInMemory;

impl CustomizeConnection<Conn, diesel::r2d2::Error> for SavepointsInMemory {
    fn on_acquire(&self, conn: &mut Conn) -> Result<(), diesel::r2d2::Error> {
        match conn {
            Conn::Sqlite(c) => c
                .batch_execute("PRAGMA temp_store = MEMORY")
                .map_err(diesel::r2d2::Error::QueryError),
            Conn::Postgres(_) => Ok(()),
        }
    }
}

/// The writers' turn, held; freed when dropped (also while a panic
/// unwinds).
pub(super) struct Held<'a>(&'a Writer);

impl Held<'_> {
    /// Frees the turn under the lock `turn` taken already.
    fn free(self, mut turn: MutexGuard<'_, Turn>) {
        turn.held = false;
        drop(turn);
        self.0.freed.notify_one();
        // Freed: the drop would free it again.
        std::mem::forget(self);
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.0.state().held = false;
        self.0.freed.notify_one();
    }
}

/// Runs `f` as a member of `group`, in a savepoint of its transaction:
/// rolled back to it if `f` fails or panics. The group is broken when
/// the savepoint cannot be released or rolled back (SQLite rolled the
/// whole transaction back under `f`, which went on) or `f` left diesel's
/// transactions at another depth than it found them (a panic inside a
/// transaction of its own). A group is left open only at the depth of its
/// `BEGIN`: each member either released or rolled back its savepoint.
fn run<T, E: From<StoreError>>(
    group: &mut Group,
    f: impl FnOnce(&mut Conn) -> Result<T, E>,
) -> (Outcome<T, E>, Member) {
    let conn: &mut Conn = &mut group.conn;
    if let Err(error) = Conn::begin_transaction(conn) {
        let why = format!("no savepoint: {error}");
        return (
            Ok(Err(E::from(StoreError::from(error)))),
            Member::Broken(why),
        );
    }
    let outcome = catch_unwind(AssertUnwindSafe(|| f(conn)));
    if depth(conn) != 2 {
        let why = "the work left the transaction at another depth".to_owned();
        return (outcome, Member::Broken(why));
    }
    let member = if matches!(outcome, Ok(Ok(_))) {
        match Conn::commit_transaction(conn) {
            Ok(()) => Member::Kept,
            Err(error) => Member::Broken(format!("the savepoint was not released: {error}")),
        }
    } else {
        match Conn::rollback_transaction(conn) {
            Ok(()) => Member::Undone,
            Err(error) => Member::Broken(format!("the savepoint was not rolled back: {error}")),
        }
    };
    (outcome, member)
}

/// How deep diesel counts the transactions open on `conn` (0: none).
fn depth(conn: &mut Conn) -> u32 {
    let status = match conn {
        Conn::Sqlite(c) => AnsiTransactionManager::transaction_manager_status_mut(c),
        Conn::Postgres(c) => AnsiTransactionManager::transaction_manager_status_mut(c),
    };
    status
        .transaction_depth()
        .ok()
        .flatten()
        .map_or(0, std::num::NonZeroU32::get)
}

#[cfg(test)]
mod tests {
    use super::Writer;
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

    /// A store with an empty table `kept (n)`, rows of which the tests
    /// write.
    fn store_with_kept() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("s.sqlite").to_string_lossy(), 2).expect("store");
        store
            .write(|conn: &mut Conn| {
                conn.batch_execute(
                    "CREATE TABLE parent (id INTEGER PRIMARY KEY); \
                     CREATE TABLE kept (n BIGINT REFERENCES parent (id) \
                     DEFERRABLE INITIALLY DEFERRED); INSERT INTO parent VALUES (1), (2), (3)",
                )?;
                Ok::<_, StoreError>(())
            })
            .expect("table");
        (dir, store)
    }

    fn keep(conn: &mut Conn, n: i64) -> Result<(), StoreError> {
        conn.batch_execute(&format!("INSERT INTO kept VALUES ({n})"))?;
        Ok(())
    }

    /// The rows of `kept` a reader sees (committed ones).
    fn committed(store: &Store) -> Vec<i64> {
        diesel::sql_query("SELECT n FROM kept ORDER BY n")
            .load::<Seen>(&mut *store.conn().expect("conn"))
            .expect("rows")
            .into_iter()
            .map(|r| r.n)
            .collect()
    }

    /// Waits until `n` writers wait for the turn.
    fn until_waiting(writer: &Writer, n: usize) {
        while writer.state().waiting < n {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// What one write of [`three_writers`] returned, whether it committed
    /// its group, and the rows committed when it returned; or its panic.
    type Written = std::thread::Result<(Result<(), StoreError>, bool, Vec<i64>)>;

    /// Runs three writes of `kept` rows 1, 2 and 3 with `work` (given the
    /// row): the first takes the turn and finishes only once the two
    /// others wait for it.
    fn three_writers(
        store: &Store,
        work: impl Fn(&mut Conn, i64) -> Result<(), StoreError> + Sync,
    ) -> Vec<Written> {
        let writer = &store.writer;
        let url = &store.url;
        let work = &work;
        std::thread::scope(|s| {
            let write = move |n: i64| {
                let (outcome, group) = writer.write(url, |conn| {
                    if n == 1 {
                        until_waiting(writer, 2);
                    }
                    work(conn, n)
                });
                (outcome, group, committed(store))
            };
            let first = s.spawn(move || write(1));
            while !writer.state().held {
                std::thread::yield_now();
            }
            let second = s.spawn(move || write(2));
            until_waiting(writer, 1);
            let third = s.spawn(move || write(3));
            [first, second, third].map(|t| t.join()).into()
        })
    }

    /// Runs `test` on a thread of its own and fails if it has not ended
    /// within a minute: a writer left waiting for a group that nobody
    /// ends would otherwise hang the suite.
    fn bounded(test: impl FnOnce() + Send + 'static) {
        let (done, ended) = std::sync::mpsc::channel();
        let runs = std::thread::spawn(move || {
            test();
            let _ = done.send(());
        });
        match ended.recv_timeout(std::time::Duration::from_secs(60)) {
            Ok(()) => runs.join().expect("test"),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                std::panic::resume_unwind(runs.join().expect_err("the test panicked"))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                panic!("a writer still waits after a minute")
            }
        }
    }

    #[test]
    fn writers_waiting_for_the_turn_are_committed_in_one_group_before_any_answers() {
        bounded(|| {
            let (_dir, store) = store_with_kept();
            let writes = three_writers(&store, keep);
            let mut groups = 0;
            for write in writes {
                let (outcome, group, seen) = write.expect("no panic");
                outcome.expect("written");
                groups += usize::from(group);
                // Each returns after the one commit of all three.
                assert_eq!(seen, [1, 2, 3]);
            }
            assert_eq!(groups, 1, "one commit for the three writes");
            // Alone, a write commits at once.
            let (outcome, group) = store.writer.write(&store.url, |conn| keep(conn, 1));
            assert!(outcome.is_ok() && group);
        });
    }

    #[test]
    fn a_member_that_fails_or_panics_is_undone_alone_and_the_others_committed() {
        bounded(|| {
            let (_dir, store) = store_with_kept();
            let writes = three_writers(&store, |conn, n| {
                keep(conn, n)?;
                match n {
                    1 => Ok(()),
                    _ => Err(StoreError::Migration("refused".into())),
                }
            });
            // The last, failed, commits the first's work and tells it so.
            let outcomes: Vec<bool> = writes
                .into_iter()
                .map(|w| w.expect("no panic").0.is_ok())
                .collect();
            assert_eq!(outcomes, [true, false, false]);
            assert_eq!(committed(&store), [1]);

            let (_dir, store) = store_with_kept();
            let writes = three_writers(&store, |conn, n| {
                keep(conn, n)?;
                assert_ne!(n, 3, "a bug inside a write transaction");
                Ok(())
            });
            let panicked: Vec<bool> = writes.iter().map(std::thread::Result::is_err).collect();
            assert_eq!(panicked, [false, false, true]);
            assert_eq!(committed(&store), [1, 2]);
            // The panic left the turn free and no transaction open.
            store.write(|conn| keep(conn, 3)).expect("the next write");
            assert_eq!(committed(&store), [1, 2, 3]);
        });
    }

    #[test]
    fn a_group_whose_commit_fails_fails_every_member_and_keeps_none_of_them() {
        bounded(|| {
            let (_dir, store) = store_with_kept();
            // Row 9 has no parent: the deferred foreign key fails the commit.
            let writes = three_writers(&store, |conn, n| keep(conn, if n == 2 { 9 } else { n }));
            for write in writes {
                let (outcome, _, seen) = write.expect("no panic");
                let error = outcome.expect_err("a failed commit");
                assert!(matches!(error, StoreError::Commit(_)), "{error}");
                assert!(seen.is_empty(), "{seen:?}");
            }
            assert!(committed(&store).is_empty());
            store.write(|conn| keep(conn, 1)).expect("the next write");
            assert_eq!(committed(&store), [1]);
        });
    }

    /// Asserts that each of `writes` was told it was written exactly when
    /// its row was committed.
    fn told_as_committed(store: &Store, writes: Vec<Written>) {
        let rows = committed(store);
        for (n, write) in (1..).zip(writes) {
            let told = write.is_ok_and(|(outcome, _, _)| outcome.is_ok());
            assert_eq!(told, rows.contains(&n), "write {n}, rows {rows:?}");
        }
    }

    #[test]
    fn a_panic_inside_a_members_own_transaction_abandons_the_group_and_tells_every_member() {
        bounded(|| {
            let (_dir, store) = store_with_kept();
            let writes = three_writers(&store, |conn, n| {
                if n != 2 {
                    return keep(conn, n);
                }
                diesel::Connection::transaction::<(), StoreError, _>(conn, |c| {
                    keep(c, 2)?;
                    panic!("a bug inside a transaction of its own");
                })
            });
            assert!(writes[1].is_err(), "the panic is raised again");
            told_as_committed(&store, writes);
        });
    }

    #[test]
    fn a_transaction_sqlite_rolled_back_under_a_member_that_went_on_is_abandoned() {
        bounded(|| {
            let (_dir, store) = store_with_kept();
            let writes = three_writers(&store, |conn, n| {
                keep(conn, n)?;
                if n == 1 {
                    // A failure the work takes for benign, after which
                    // SQLite has rolled the whole transaction back.
                    let _ = diesel::sql_query("INSERT OR ROLLBACK INTO parent VALUES (1)")
                        .execute(conn);
                }
                Ok(())
            });
            // The first is told it failed; the two after it ran in a
            // group of their own.
            told_as_committed(&store, writes);
            assert_eq!(committed(&store), [2, 3]);
        });
    }

    /// The `temp_store` pragma's answer.
    #[derive(diesel::QueryableByName)]
    struct TempStore {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        temp_store: i32,
    }

    #[test]
    fn the_writers_connection_keeps_its_savepoints_journal_in_memory() {
        let (_dir, store) = store_with_kept();
        let setting = store
            .write(|conn: &mut Conn| {
                let rows: Vec<TempStore> = diesel::sql_query("PRAGMA temp_store").load(conn)?;
                Ok::<_, StoreError>(rows[0].temp_store)
            })
            .expect("pragma");
        // 2: MEMORY (SQLite's default, 0, writes past 64 KiB to a file).
        assert_eq!(setting, 2);
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

    #[test]
    fn under_many_writers_every_write_told_kept_is_committed_and_no_other() {
        bounded(|| {
            let dir = tempfile::tempdir().expect("tempdir");
            let store =
                Store::open(&dir.path().join("s.sqlite").to_string_lossy(), 2).expect("store");
            store
                .write(|conn: &mut Conn| {
                    conn.batch_execute("CREATE TABLE many (n BIGINT)")?;
                    Ok::<_, StoreError>(())
                })
                .expect("table");
            // Every seventh write fails, a few panic, and a thread takes
            // the turn over and over as the checkpoints do.
            let fails = |n: i64| n % 7 == 3;
            let panics = |n: i64| n % 97 == 5;
            // Whether write `n` was told it was kept (a panic is not).
            let write = |n: i64| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    store
                        .write(|conn: &mut Conn| {
                            conn.batch_execute(&format!("INSERT INTO many VALUES ({n})"))?;
                            assert!(!panics(n), "a bug in write {n}");
                            if fails(n) {
                                return Err(StoreError::Migration("no".into()));
                            }
                            Ok(())
                        })
                        .is_ok()
                }))
                .unwrap_or(false)
            };
            let stop = std::sync::atomic::AtomicBool::new(false);
            let told: Vec<(i64, bool)> = std::thread::scope(|s| {
                let (store, stop, write) = (&store, &stop, &write);
                let taker = s.spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        let _turn = store.writer.turn();
                        std::thread::yield_now();
                    }
                });
                let writers: Vec<_> = (0..12i64)
                    .map(|t| {
                        s.spawn(move || {
                            (0..200i64)
                                .map(|i| t * 1000 + i)
                                .map(|n| (n, write(n)))
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                let told = writers
                    .into_iter()
                    .flat_map(|w| w.join().expect("writer"))
                    .collect();
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                taker.join().expect("taker");
                told
            });
            let rows: std::collections::BTreeSet<i64> = diesel::sql_query("SELECT n FROM many")
                .load::<Seen>(&mut *store.conn().expect("conn"))
                .expect("rows")
                .into_iter()
                .map(|r| r.n)
                .collect();
            assert_eq!(told.len(), 2400);
            for (n, kept) in told {
                assert_eq!(kept, !fails(n) && !panics(n), "write {n} told");
                assert_eq!(kept, rows.contains(&n), "write {n} committed");
            }
            assert!(!store.writer.state().held, "the turn is free");
            assert!(store.writer.state().open.is_none(), "no group left open");
            assert_eq!(store.writer.connections().0, 0, "the connection is back");
        });
    }
}
