//! Tools beside a running `serve`: opening the store without touching its
//! schema ([`Store::attach`], [`Store::pending_migrations`]) and copying a
//! SQLite store while it is in use ([`Store::backup`]).
//!
//! A tool never applies migrations: a newer binary run by an operator next
//! to an older `serve` would change the schema under it. `serve` applies
//! them when it starts (one process at a time, see [`Store::open`]); a tool
//! finding migrations pending says so and stops.

use super::{MIGRATIONS, Manager, Store, StoreError, StoreResult};
use diesel::RunQueryDsl;
use diesel::sql_types::Text;
use diesel_migrations::MigrationHarness;
use std::path::Path;

/// Why a backup was not made.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    /// The store is PostgreSQL, which has its own tool.
    #[error(
        "the store is PostgreSQL: back it up with pg_dump (e.g. pg_dump --format=custom --file=geni-am.dump DATABASE_URL), restore with pg_restore"
    )]
    Postgres,
    /// The target exists; backups never overwrite.
    #[error("{0} exists; a backup never overwrites a file: choose a new name")]
    Exists(String),
    /// The copy failed.
    #[error("cannot back up to {path}: {source}")]
    Copy {
        /// The target.
        path: String,
        /// Why.
        source: StoreError,
    },
}

impl Store {
    /// Opens the store at `url` with a pool of `max_connections` without
    /// applying the schema. A SQLite file that does not exist is refused
    /// (not created empty).
    pub fn attach(url: &str, max_connections: u32) -> StoreResult<Store> {
        let manager = Manager::new(url);
        if !manager.postgres && !Path::new(&manager.url).exists() {
            return Err(StoreError::Open {
                url: super::redact(url),
                message: "no such file (a store is created by `geni-am serve`)".to_owned(),
            });
        }
        Store::pooled(url, max_connections, super::Shared::default())
    }

    /// The versions of the migrations this build has that the database
    /// has not applied, oldest first.
    pub fn pending_migrations(&self) -> StoreResult<Vec<String>> {
        let mut conn = self.conn()?;
        let pending = conn
            .pending_migrations(MIGRATIONS)
            .map_err(|e| StoreError::Migration(e.to_string()))?;
        Ok(pending
            .iter()
            .map(|m| m.name().version().to_string())
            .collect())
    }

    /// Copies a SQLite store to the new file `path` while it is in use
    /// (`VACUUM INTO`: one read transaction, so writers go on and the copy
    /// is the state of one instant, compacted). Never overwrites; a
    /// PostgreSQL store is [`BackupError::Postgres`].
    pub fn backup(&self, path: &Path) -> Result<(), BackupError> {
        if self.postgres {
            return Err(BackupError::Postgres);
        }
        let shown = path.display().to_string();
        if path.exists() {
            return Err(BackupError::Exists(shown));
        }
        let copy = |source: StoreError| BackupError::Copy {
            path: shown.clone(),
            source,
        };
        let mut conn = self.conn().map_err(copy)?;
        diesel::sql_query("VACUUM INTO ?")
            .bind::<Text, _>(path.to_string_lossy().as_ref())
            .execute(&mut *conn)
            .map_err(|e| copy(e.into()))?;
        Ok(())
    }
}
