//! WAL checkpoints of a SQLite store, off the commit path. SQLite's own
//! checkpoint (`wal_autocheckpoint`) runs inside the commit that crosses
//! its threshold, while that writer still holds the store's one write
//! turn, so every other writer waited for it; the store's connections
//! turn it off, and a thread of the store's own runs a `PASSIVE`
//! checkpoint on a connection of its own after every [`EVERY`] commits
//! instead: it copies what it can into the database file while writers go
//! on, and the next writer starts the WAL over once all of it is copied.
//!
//! Under a steady stream of writes that never happens (each checkpoint
//! ends behind the commits made while it ran), so when the WAL has grown
//! past [`MOST_FRAMES`] the thread checkpoints once more holding the
//! writers' turn (`Store::turn`), which copies only what was committed
//! during the first pass; the WAL then starts over at the next commit.
//! What the WAL holds is as durable as before: a restart recovers it, and
//! the last connection to close checkpoints it.

use super::writer::Writer;
use super::{Conn, Manager};
use diesel::RunQueryDsl;
use diesel::r2d2::ManageConnection;
use diesel::sql_types::Integer;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};

/// Commits between checkpoints (a commit of this store writes a few
/// pages, so this is about SQLite's default of 1,000 pages).
pub(super) const EVERY: u32 = 100;

/// Frames (pages) of WAL past which a checkpoint finishes in the writers'
/// turn: SQLite's own threshold.
const MOST_FRAMES: i32 = 1_000;

/// The checkpoints of one SQLite file, shared by every pool of a store.
#[derive(Debug, Default)]
pub(super) struct Checkpoints {
    /// Commits since the last checkpoint was asked for.
    commits: AtomicU32,
    /// Wakes the checkpointing thread, started at the first need; the
    /// thread ends when this is dropped with the store.
    wake: Mutex<Option<SyncSender<()>>>,
}

impl Checkpoints {
    /// Counts a commit to the file `url`, whose writers take turns on
    /// `writer`, and, every [`EVERY`] commits, asks the thread for a
    /// checkpoint (starting it if need be). Never waits for the
    /// checkpoint.
    pub(super) fn committed(&self, url: &str, writer: &Arc<Writer>) {
        if self.commits.fetch_add(1, Ordering::Relaxed) + 1 < EVERY {
            return;
        }
        self.commits.store(0, Ordering::Relaxed);
        let mut wake = self.wake.lock().unwrap_or_else(PoisonError::into_inner);
        if wake.is_none() {
            *wake = start(url, Arc::clone(writer));
        }
        if let Some(sender) = wake.as_ref() {
            match sender.try_send(()) {
                // Full: a checkpoint is asked for already.
                Ok(()) | Err(TrySendError::Full(())) => {}
                Err(TrySendError::Disconnected(())) => *wake = None,
            }
        }
    }
}

/// Starts the thread checkpointing `url` on a connection of its own; its
/// sender, or none (with a warning; the next checkpoint tries again) when
/// the connection or the thread cannot be had.
fn start(url: &str, writer: Arc<Writer>) -> Option<SyncSender<()>> {
    let conn = match Manager::new(url).connect() {
        Ok(conn) => conn,
        Err(error) => {
            tracing::warn!(%error, "no connection for WAL checkpoints");
            return None;
        }
    };
    let (sender, asked) = sync_channel(1);
    std::thread::Builder::new()
        .name("store-checkpoint".into())
        .spawn(move || run(conn, &asked, &writer))
        .inspect_err(|error| tracing::warn!(%error, "no thread for WAL checkpoints"))
        .ok()?;
    Some(sender)
}

/// Checkpoints on `conn` each time it is asked, until the store is gone;
/// a WAL grown past [`MOST_FRAMES`] is checkpointed again in `writer`'s
/// turn.
fn run(mut conn: Conn, asked: &Receiver<()>, writer: &Writer) {
    while asked.recv().is_ok() {
        let outcome = checkpoint(&mut conn).and_then(|frames| {
            if frames <= MOST_FRAMES {
                return Ok(frames);
            }
            let _turn = writer.turn();
            checkpoint(&mut conn)
        });
        if let Err(error) = outcome {
            tracing::warn!(%error, "WAL checkpoint failed");
        }
    }
}

/// What `PRAGMA wal_checkpoint` answers.
#[derive(diesel::QueryableByName)]
struct Checkpointed {
    /// Frames in the WAL.
    #[diesel(sql_type = Integer)]
    log: i32,
}

/// One `PASSIVE` checkpoint; the frames the WAL holds.
fn checkpoint(conn: &mut Conn) -> diesel::QueryResult<i32> {
    let answer: Vec<Checkpointed> =
        diesel::sql_query("PRAGMA wal_checkpoint(PASSIVE)").load(conn)?;
    Ok(answer.first().map_or(0, |a| a.log))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EventKind;
    use crate::store::{Store, StoreError, events};

    /// The `wal_autocheckpoint` pragma's answer.
    #[derive(diesel::QueryableByName)]
    struct AutoCheckpoint {
        #[diesel(sql_type = Integer)]
        wal_autocheckpoint: i32,
    }

    #[test]
    fn commits_never_checkpoint_and_the_wal_stays_bounded_by_the_thread() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.sqlite");
        let store = Store::open(&path.to_string_lossy(), 2).expect("store");
        let pages: Vec<AutoCheckpoint> = diesel::sql_query("PRAGMA wal_autocheckpoint")
            .load(&mut *store.conn().expect("conn"))
            .expect("pragma");
        assert_eq!(pages[0].wal_autocheckpoint, 0);
        let commits = 80 * EVERY;
        let detail = "x".repeat(100);
        for _ in 0..commits {
            store
                .write(|conn| {
                    events::append(
                        conn,
                        chrono::Utc::now(),
                        None,
                        None,
                        EventKind::Renew,
                        &detail,
                    )
                })
                .map_err(|e: StoreError| e.to_string())
                .expect("written");
        }
        // Unchecked, the WAL would hold every commit, at least four pages
        // each (the table and its indexes; 5.6 measured). It starts over
        // once a checkpoint has copied all of it, so then it holds fewer.
        let mut conn = store.conn().expect("conn");
        let frames = checkpoint(&mut conn).expect("checkpoint");
        let unchecked = 4 * i32::try_from(commits).expect("commits");
        assert!(
            frames < unchecked / 2,
            "{frames} frames, {unchecked} unchecked"
        );
    }
}
