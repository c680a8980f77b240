//! The aggregate's state: diesel over SQLite (a file, the default) or
//! PostgreSQL (a `postgres://` URL), one portable schema (`geni-am/migrations/`,
//! embedded and applied by [`Store::open`]), an r2d2 pool.
//!
//! Query functions take a [`Conn`] so the core can compose several in one
//! transaction ([`Store::write`]); the `impl Store` blocks of the
//! submodules wrap the ones the backend workers call on their own.
//!
//! Queued jobs ring the store's [`Bell`] once committed (see [`bell`]), so
//! workers waiting for work wake at once.
//!
//! Concurrency: on SQLite every write transaction starts with
//! `BEGIN IMMEDIATE` (one writer at a time), and the writers of one
//! process take turns on an in-process lock first, share one
//! connection and commit in groups ([`writer`]); on
//! PostgreSQL an allocation first locks the component rows
//! (`SELECT … FOR UPDATE`, see [`components::lock_all`]) so racing
//! Allocates — also from several processes — see each other's reservations.

pub mod backup;
pub mod bell;
mod cached;
mod checkpoint;
mod columns;
pub mod components;
pub mod drain;
pub mod events;
mod filters;
mod finish;
pub mod hand_off;
pub mod jobs;
pub mod link_ranges;
pub mod listing;
mod native;
pub mod networks;
pub mod outage;
pub mod retention;
mod schema;
pub mod slices;
pub mod slivers;
pub mod upkeep;
mod writer;

pub use bell::Bell;
pub use columns::{CorruptValue, Json, JsonColumn, UnixTime};
pub use finish::Finished;

use diesel::connection::{SimpleConnection, TransactionManager};
use diesel::pg::PgConnection;
use diesel::r2d2::{self, ManageConnection, Pool, PooledConnection, R2D2Connection};
use diesel::sqlite::SqliteConnection;
use diesel::{Connection, RunQueryDsl};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use std::ffi::c_int;
use std::sync::Arc;
use std::time::Duration;

/// The schema, applied at [`Store::open`].
const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations");

/// How long a SQLite writer waits for another one before giving up.
const SQLITE_BUSY_TIMEOUT_MS: u32 = 30_000;

/// The page cache of each SQLite connection, in KiB (`PRAGMA cache_size`
/// takes it negated). Each would otherwise grow to 2 MiB (the default),
/// and with the store larger than that the twenty-odd connections of the
/// pools could hold about 40 MB between them (docs/PERFORMANCE.md, "A
/// hundred thousand slivers reached"); the pages are in the operating
/// system's file cache all the same, and a connection's cache is emptied
/// whenever another connection wrote. Twenty of them hold about what the
/// process-wide `soft_heap_limit` of 8 MiB allowed before, which SQLite
/// enforces only while it counts its memory
/// ([`without_sqlite_memory_statistics`]).
const SQLITE_CACHE_KIB: i64 = 512;

/// How long a pooled connection may stay unused before it is closed.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Advisory lock key that serialises schema migrations of several
/// processes starting on one PostgreSQL database.
const PG_MIGRATION_LOCK: i64 = 0x6765_6e69_616d;

/// A connection to either database.
#[derive(diesel::MultiConnection)]
pub enum Conn {
    /// A SQLite file.
    Sqlite(SqliteConnection),
    /// A PostgreSQL server.
    Postgres(PgConnection),
}

/// What the store could not do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database could not be opened.
    #[error("cannot open the store at {url}: {message}")]
    Open {
        /// The URL or path given (without password).
        url: String,
        /// Why.
        message: String,
    },
    /// No pooled connection became free in time.
    #[error("no database connection available: {0}")]
    Pool(#[from] r2d2::PoolError),
    /// A query failed.
    #[error("database error: {0}")]
    Query(diesel::result::Error),
    /// A write transaction ended without its commit: the commit failed,
    /// or the transaction was abandoned (see [`writer`]).
    #[error("the write was not committed: {0}")]
    Commit(String),
    /// Applying the schema failed.
    #[error("cannot apply the database schema: {0}")]
    Migration(String),
    /// A row holds a value the AM never writes (edited by hand, or from a
    /// newer version).
    #[error("corrupt {what} in the store: `{value}`")]
    Corrupt {
        /// Which column.
        what: &'static str,
        /// The value found.
        value: String,
    },
}

impl From<diesel::result::Error> for StoreError {
    /// A value that does not read back is [`StoreError::Corrupt`], naming
    /// its column; any other failure is [`StoreError::Query`].
    fn from(e: diesel::result::Error) -> Self {
        match &e {
            diesel::result::Error::DeserializationError(inner) => match corrupt_value(&**inner) {
                Some(corrupt) => Self::Corrupt {
                    what: corrupt.what,
                    value: corrupt.value.clone(),
                },
                None => Self::Query(e),
            },
            _ => Self::Query(e),
        }
    }
}

/// The [`CorruptValue`] a deserialisation failed on, also when diesel
/// wrapped it with the name of the field being read.
fn corrupt_value<'a>(
    error: &'a (dyn std::error::Error + Send + Sync + 'static),
) -> Option<&'a CorruptValue> {
    error.downcast_ref::<CorruptValue>().or_else(|| {
        error
            .downcast_ref::<diesel::result::DeserializeFieldError>()
            .and_then(|field| corrupt_value(&*field.error))
    })
}

impl StoreError {
    /// True when the failure is contention (a locked SQLite file, a
    /// PostgreSQL serialisation failure or deadlock): retrying may succeed.
    pub fn is_busy(&self) -> bool {
        use diesel::result::{DatabaseErrorKind, Error};
        match self {
            Self::Pool(_) => true,
            Self::Query(Error::DatabaseError(kind, info)) => {
                matches!(kind, DatabaseErrorKind::SerializationFailure)
                    || info.message().contains("database is locked")
                    || info.message().contains("deadlock")
            }
            _ => false,
        }
    }
}

/// Result of store functions.
pub type StoreResult<T> = Result<T, StoreError>;

/// The pooled store; cheap to clone, shared by every thread.
#[derive(Clone)]
pub struct Store {
    pool: Pool<Manager>,
    postgres: bool,
    /// Rung after each commit that queued jobs.
    bell: Arc<Bell>,
    /// The workers waiting for work, to which a transaction that queues a
    /// job may hand it ([`hand_off`]).
    hand_off: Arc<hand_off::HandOff>,
    /// The turn of this process's SQLite write transactions, one at a
    /// time, and their connection; shared by every pool of the store (see
    /// [`Store::with_own_pool`]).
    writer: Arc<writer::Writer>,
    /// The WAL checkpoints of a SQLite file, off the commit path; shared
    /// like `writer`.
    checkpoints: Arc<checkpoint::Checkpoints>,
    /// Where the pool connects, for the PostgreSQL listener's and the
    /// checkpoints' connections.
    url: Arc<str>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("postgres", &self.postgres)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Opens the store at `url` (a SQLite path, optionally `sqlite://`, or
    /// a `postgres://`/`postgresql://` URL) with a pool of `max_connections`,
    /// and applies the schema. Several processes may open the same store.
    pub fn open(url: &str, max_connections: u32) -> StoreResult<Store> {
        let store = Store::pooled(url, max_connections, Shared::default())?;
        store.migrate()?;
        Ok(store)
    }

    /// Another pool of `max_connections` on the same database, sharing
    /// this store's bell (jobs queued through either wake the waiters of
    /// both), its writers' turn and its checkpoints (`serve` gives the jobs
    /// a pool of their own).
    pub fn with_own_pool(&self, max_connections: u32) -> StoreResult<Store> {
        let shared = Shared {
            bell: self.bell.clone(),
            hand_off: self.hand_off.clone(),
            writer: self.writer.clone(),
            checkpoints: self.checkpoints.clone(),
        };
        Store::pooled(&self.url, max_connections, shared)
    }

    /// A pool on `url` with the `shared` parts of a store, without
    /// migrating.
    fn pooled(url: &str, max_connections: u32, shared: Shared) -> StoreResult<Store> {
        let manager = Manager::new(url);
        let postgres = manager.postgres;
        // One connection up front, so a bad URL fails now with its reason
        // rather than after the pool's timeout.
        manager.connect().map_err(|e| StoreError::Open {
            url: redact(url),
            message: e.to_string(),
        })?;
        let pool = Pool::builder()
            .max_size(max_connections.max(1))
            .min_idle(Some(0))
            // Connections a burst opened close after half a minute unused
            // (r2d2 looks every 30 s, so within a minute), and with them
            // their page and statement caches: 3.6 MB live after a hundred
            // clients (docs/PERFORMANCE.md, "What a load leaves behind").
            .idle_timeout(Some(IDLE_TIMEOUT))
            .connection_timeout(Duration::from_secs(30))
            // A PostgreSQL connection the server dropped is found and
            // replaced when it is handed out; a SQLite file does not go
            // away, and the check (`SELECT 1`) cost a statement per
            // transaction.
            .test_on_check_out(postgres)
            .build_unchecked(manager);
        Ok(Store {
            pool,
            postgres,
            bell: shared.bell,
            hand_off: shared.hand_off,
            writer: shared.writer,
            checkpoints: shared.checkpoints,
            url: url.into(),
        })
    }

    /// The connections of this pool, and on SQLite the writers'
    /// connection it shares with the store's other pools: `(in use,
    /// idle)`.
    pub fn pool_use(&self) -> (u32, u32) {
        let state = self.pool.state();
        let (writing, writer_idle) = self.writer.connections();
        (
            state.connections.saturating_sub(state.idle_connections) + writing,
            state.idle_connections + writer_idle,
        )
    }

    /// True when the store is PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        self.postgres
    }

    /// The workers waiting for work, and the jobs handed to them.
    pub fn hand_off(&self) -> &hand_off::HandOff {
        &self.hand_off
    }

    /// The bell rung after each commit that queued jobs — in this process,
    /// and on PostgreSQL in every process running [`Store::listen`].
    pub fn bell(&self) -> &Bell {
        &self.bell
    }

    /// On PostgreSQL, rings [`Store::bell`] whenever any process commits a
    /// job to the database, until `pause` (given the time to wait before
    /// looking again) returns true; on SQLite (one process) returns at
    /// once. Runs on the caller's thread.
    pub fn listen(&self, pause: &dyn Fn(Duration) -> bool) {
        if self.postgres {
            bell::listen(&Manager::new(&self.url), &self.bell, pause);
        }
    }

    /// A pooled connection, for reads outside a transaction.
    pub fn conn(&self) -> StoreResult<PooledConnection<Manager>> {
        Ok(self.pool.get()?)
    }

    /// Runs `f` as one write transaction, committed when it returns `Ok`
    /// and rolled back otherwise; returns once the commit is done, and a
    /// commit that queued jobs rings [`Store::bell`]. On SQLite `f` runs in
    /// this process's writers' turn, on their connection, in a savepoint
    /// of a `BEGIN IMMEDIATE` transaction that may commit the work of the
    /// writers that waited with it ([`writer`]). `f` must not start
    /// another write transaction.
    pub fn write<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&mut Conn) -> Result<T, E>,
    ) -> Result<T, E> {
        bell::begin();
        let handing = hand_off::begin(&self.hand_off);
        let outcome = if self.postgres {
            self.write_alone(f)
        } else {
            let (outcome, committed) = self.writer.write(&self.url, f);
            if committed {
                self.checkpoints.committed(&self.url, &self.writer);
            }
            outcome
        };
        let queued = bell::queued();
        if outcome.is_ok() {
            handing.commit();
            if queued {
                self.bell.ring();
            }
        }
        outcome
    }

    /// Runs `f` in a PostgreSQL transaction of its own, on a pooled
    /// connection; PostgreSQL writers run side by side.
    fn write_alone<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&mut Conn) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut conn = self.conn()?;
        let conn: &mut Conn = &mut conn;
        Conn::begin_transaction(conn).map_err(StoreError::from)?;
        match f(conn) {
            Ok(value) => {
                Conn::commit_transaction(conn).map_err(StoreError::from)?;
                Ok(value)
            }
            Err(error) => {
                if let Err(rollback) = Conn::rollback_transaction(conn) {
                    tracing::warn!(%rollback, "rollback failed");
                }
                Err(error)
            }
        }
    }

    /// Runs `f` in one read transaction: a consistent snapshot on SQLite;
    /// on PostgreSQL (`READ COMMITTED`) each statement sees what was
    /// committed when it ran.
    pub fn read<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&mut Conn) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut conn = self.conn()?;
        conn.transaction(|c| f(c).map_err(TxError::Inner))
            .map_err(|e| match e {
                TxError::Inner(e) => e,
                TxError::Db(e) => E::from(StoreError::from(e)),
            })
    }

    /// Applies pending migrations, one process at a time.
    fn migrate(&self) -> StoreResult<()> {
        self.write(|conn| {
            if let Conn::Postgres(c) = conn {
                diesel::sql_query(format!("SELECT pg_advisory_xact_lock({PG_MIGRATION_LOCK})"))
                    .execute(c)?;
            }
            conn.run_pending_migrations(MIGRATIONS)
                .map(|_| ())
                .map_err(|e| StoreError::Migration(e.to_string()))
        })
    }
}

/// What every pool of one store shares.
#[derive(Default)]
pub(super) struct Shared {
    bell: Arc<Bell>,
    hand_off: Arc<hand_off::HandOff>,
    writer: Arc<writer::Writer>,
    checkpoints: Arc<checkpoint::Checkpoints>,
}

/// An error inside [`Store::read`]: the caller's or the transaction's.
enum TxError<E> {
    Inner(E),
    Db(diesel::result::Error),
}

impl<E> From<diesel::result::Error> for TxError<E> {
    fn from(e: diesel::result::Error) -> Self {
        Self::Db(e)
    }
}

/// Stops SQLite counting the memory it holds, for the whole process:
/// the count takes one process-wide mutex around every allocation and
/// free of every connection, on which the threads of a loaded server
/// queued (a sixth of its futex calls; without it an open load of 300
/// lifecycles/s was kept better in 9 of 10 alternated runs, and 100,000
/// slivers took 8 MB less: docs/PERFORMANCE.md, "SQLite's memory
/// count"). SQLite then has no
/// process-wide heap limit (`soft_heap_limit` needs the count), and each
/// connection bounds its own page cache instead ([`SQLITE_CACHE_KIB`]).
/// Takes effect only before SQLite is first used in the process, and must
/// be called before any other thread may use it (`serve` calls it before
/// it starts any); true when it took effect.
pub fn without_sqlite_memory_statistics() -> bool {
    // SAFETY: the caller runs this before any other thread uses SQLite
    // (sqlite3_config is not thread-safe), and SQLITE_CONFIG_MEMSTATUS
    // takes one int. Once SQLite is initialised the call changes nothing
    // and answers SQLITE_MISUSE.
    let answer = unsafe {
        libsqlite3_sys::sqlite3_config(libsqlite3_sys::SQLITE_CONFIG_MEMSTATUS, 0 as c_int)
    };
    answer == libsqlite3_sys::SQLITE_OK
}

/// Opens connections of the kind the URL names, with SQLite set up for
/// concurrent use (WAL, busy timeout, foreign keys).
#[derive(Debug)]
pub struct Manager {
    url: String,
    postgres: bool,
}

impl Manager {
    fn new(url: &str) -> Self {
        let url = url.trim();
        let postgres = url.starts_with("postgres://") || url.starts_with("postgresql://");
        let url = if postgres {
            url.to_owned()
        } else {
            url.strip_prefix("sqlite://").unwrap_or(url).to_owned()
        };
        Self { url, postgres }
    }
}

impl ManageConnection for Manager {
    type Connection = Conn;
    type Error = r2d2::Error;

    fn connect(&self) -> Result<Conn, r2d2::Error> {
        if self.postgres {
            return PgConnection::establish(&self.url)
                .map(Conn::Postgres)
                .map_err(r2d2::Error::ConnectionError);
        }
        let mut conn =
            SqliteConnection::establish(&self.url).map_err(r2d2::Error::ConnectionError)?;
        conn.batch_execute(&format!("PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS};"))
            .and_then(|()| enable_wal(&mut conn))
            .and_then(|()| {
                // Checkpoints run apart from the commits (see `checkpoint`).
                conn.batch_execute(&format!(
                    "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; \
                     PRAGMA wal_autocheckpoint = 0; \
                     PRAGMA cache_size = -{SQLITE_CACHE_KIB};",
                ))
            })
            .map_err(r2d2::Error::QueryError)?;
        Ok(Conn::Sqlite(conn))
    }

    fn is_valid(&self, conn: &mut Conn) -> Result<(), r2d2::Error> {
        conn.ping().map_err(r2d2::Error::QueryError)
    }

    fn has_broken(&self, conn: &mut Conn) -> bool {
        conn.is_broken()
    }
}

/// Switches the SQLite file to write-ahead logging. While another
/// connection holds a lock (several processes opening a new file
/// together), SQLite refuses the switch with "database is locked" at once
/// instead of waiting for the busy timeout, so it is retried until that
/// timeout has passed.
fn enable_wal(conn: &mut SqliteConnection) -> diesel::QueryResult<()> {
    let deadline =
        std::time::Instant::now() + Duration::from_millis(u64::from(SQLITE_BUSY_TIMEOUT_MS));
    loop {
        match conn.batch_execute("PRAGMA journal_mode = WAL;") {
            Err(error)
                if error.to_string().contains("database is locked")
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            done => return done,
        }
    }
}

/// `url` without a password, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{}{user}:***{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_kept_out_of_messages() {
        assert_eq!(
            redact("postgres://am:secret@db.example.org/am"),
            "postgres://am:***@db.example.org/am"
        );
        assert_eq!(
            redact("/var/lib/geni-am/am.sqlite"),
            "/var/lib/geni-am/am.sqlite"
        );
    }

    #[test]
    fn urls_choose_the_database() {
        assert!(Manager::new("postgres://x/y").postgres);
        assert!(Manager::new("postgresql://x/y").postgres);
        let sqlite = Manager::new("sqlite:///tmp/a.db");
        assert!(!sqlite.postgres);
        assert_eq!(sqlite.url, "/tmp/a.db");
    }

    /// The `cache_size` pragma's answer.
    #[derive(diesel::QueryableByName)]
    struct CacheSize {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        cache_size: i64,
    }

    #[test]
    fn every_sqlite_connection_bounds_its_page_cache() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.sqlite");
        let store = Store::open(&path.to_string_lossy(), 2).expect("store");
        let pooled = || store.conn().expect("conn");
        let (mut first, mut second) = (pooled(), pooled());
        for conn in [&mut first, &mut second] {
            let size: Vec<CacheSize> = diesel::sql_query("PRAGMA cache_size")
                .load(&mut **conn)
                .expect("pragma");
            assert_eq!(size[0].cache_size, -SQLITE_CACHE_KIB);
        }
    }

    #[test]
    fn opening_a_directory_that_does_not_exist_names_the_path() {
        let err = Store::open("/nonexistent-dir/x/am.sqlite", 1).unwrap_err();
        assert!(
            err.to_string().contains("/nonexistent-dir/x/am.sqlite"),
            "{err}"
        );
    }
}
