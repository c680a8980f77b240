//! Wake-ups without lost wake-ups: a [`Bell`] counts its rings, and a
//! waiter passes the count it last saw, so a ring between its look for
//! work and its wait ends the wait at once. The store rings its bell after
//! every commit that queued jobs ([`note_queued`] by `jobs::enqueue`);
//! on PostgreSQL the same transaction sends a `NOTIFY`, and [`listen`]
//! rings the bell of every process sharing the database.

use super::cached::CachedDsl;
use super::{Conn, Manager, StoreResult};
use diesel::RunQueryDsl;
use diesel::r2d2::ManageConnection;
use std::cell::Cell;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

/// The PostgreSQL channel a commit that queued jobs notifies.
const CHANNEL: &str = "geni_am_jobs";

/// How often the listener reads its connection for notifications. Diesel
/// has no blocking wait for them (`PgConnection::notifications_iter`
/// returns what has arrived), so the listener looks every few
/// milliseconds: a read of its own socket, no round trip to the server.
const LISTEN_TICK: Duration = Duration::from_millis(5);

/// How long the listener waits before connecting again after an error.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

/// A counter of rings that threads can wait on.
#[derive(Debug, Default)]
pub struct Bell {
    rings: Mutex<u64>,
    rung: Condvar,
}

impl Bell {
    /// Rings: every waiter wakes.
    pub fn ring(&self) {
        *self.rings.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        self.rung.notify_all();
    }

    /// How many times it has rung, to pass to [`Bell::wait`].
    pub fn rings(&self) -> u64 {
        *self.rings.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until the bell has rung more than `seen` times or `timeout`
    /// has passed; returns the count of rings then.
    pub fn wait(&self, seen: u64, timeout: Duration) -> u64 {
        let rings = self.rings.lock().unwrap_or_else(PoisonError::into_inner);
        let (rings, _) = self
            .rung
            .wait_timeout_while(rings, timeout, |rings| *rings == seen)
            .unwrap_or_else(PoisonError::into_inner);
        *rings
    }
}

thread_local! {
    /// Whether the write transaction running on this thread queued a job.
    static QUEUED: Cell<bool> = const { Cell::new(false) };
}

/// Notes that the transaction on `conn` queued a job: the store rings its
/// bell once it commits, and on PostgreSQL the commit notifies the other
/// processes.
pub(super) fn note_queued(conn: &mut Conn) -> StoreResult<()> {
    QUEUED.set(true);
    if let Conn::Postgres(pg) = conn {
        diesel::sql_query(format!("NOTIFY {CHANNEL}"))
            .cached()
            .execute(pg)?;
    }
    Ok(())
}

/// Forgets what an earlier transaction of this thread queued.
pub(super) fn begin() {
    QUEUED.set(false);
}

/// Whether the transaction just ended queued a job.
pub(super) fn queued() -> bool {
    QUEUED.replace(false)
}

/// Rings `bell` whenever a process commits a job to the PostgreSQL
/// database `manager` connects to, until `pause` (called between looks
/// with the time to wait) says to stop. Connection failures are logged
/// and the connection made again.
pub(super) fn listen(manager: &Manager, bell: &Bell, pause: &dyn Fn(Duration) -> bool) {
    loop {
        let listened = manager
            .connect()
            .map_err(|e| e.to_string())
            .and_then(|conn| match conn {
                Conn::Postgres(pg) => Ok(pg),
                Conn::Sqlite(_) => Err("not a PostgreSQL database".to_owned()),
            })
            .and_then(|mut pg| {
                diesel::sql_query(format!("LISTEN {CHANNEL}"))
                    .execute(&mut pg)
                    .map_err(|e| e.to_string())?;
                relay(&mut pg, bell, pause)
            });
        match listened {
            Ok(()) => return,
            Err(err) => {
                tracing::warn!(%err, "not listening for jobs queued by other processes; workers poll meanwhile");
                if pause(RECONNECT_AFTER) {
                    return;
                }
            }
        }
    }
}

/// Rings `bell` for the notifications arriving on `pg` until stopped.
fn relay(
    pg: &mut diesel::PgConnection,
    bell: &Bell,
    pause: &dyn Fn(Duration) -> bool,
) -> Result<(), String> {
    // Anything queued before the LISTEN took effect is claimed by the
    // workers' first look.
    bell.ring();
    loop {
        let mut any = false;
        for notification in pg.notifications_iter() {
            notification.map_err(|e| e.to_string())?;
            any = true;
        }
        if any {
            bell.ring();
        }
        if pause(LISTEN_TICK) {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_before_the_wait_ends_it_at_once() {
        let bell = Bell::default();
        let seen = bell.rings();
        bell.ring();
        assert_eq!(bell.wait(seen, Duration::from_secs(3600)), seen + 1);
    }

    #[test]
    fn a_wait_without_a_ring_ends_with_its_timeout() {
        let bell = Bell::default();
        let seen = bell.rings();
        assert_eq!(bell.wait(seen, Duration::from_millis(1)), seen);
    }
}
