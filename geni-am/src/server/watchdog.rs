//! The connection watchdog: a connection may spend at most
//! `keep_alive_secs + request_timeout_secs` between two requests (from the
//! handshake, or from the end of the previous call, to the moment the next
//! request's headers are complete). Actix bounds the headers of a
//! connection's first request and closes idle kept-alive connections, but
//! once a byte of a later request has arrived it waits for its headers
//! without limit; a client trickling them would hold the connection for
//! ever. The watchdog shuts such a connection's socket down (through a
//! duplicate of its descriptor, held while the connection lives).

use actix_web::rt::net::TcpStream;
use std::cell::Cell;
use std::os::fd::AsFd;
use std::rc::{Rc, Weak};
use std::time::{Duration, Instant};

/// The watch over one connection, kept with the connection's data; the
/// watchdog stops when it is dropped.
pub(super) struct Watch {
    state: Rc<State>,
}

/// What the watchdog sees of its connection.
struct State {
    /// A duplicate of the connection's socket, to shut it down with.
    socket: socket2::Socket,
    /// Calls in progress on the connection (0 or 1 with HTTP/1.1).
    calls: Cell<u32>,
    /// Since when no call has been in progress.
    idle_since: Cell<Instant>,
}

/// A call in progress: while it lives the connection is not idle.
pub(super) struct Call {
    state: Rc<State>,
}

impl Watch {
    /// Starts watching the connection on `stream`, allowing `limit`
    /// between two requests. Runs on the worker that owns the connection.
    pub(super) fn start(stream: &TcpStream, limit: Duration) -> std::io::Result<Watch> {
        let socket = socket2::Socket::from(stream.as_fd().try_clone_to_owned()?);
        let state = Rc::new(State {
            socket,
            calls: Cell::new(0),
            idle_since: Cell::new(Instant::now()),
        });
        actix_web::rt::spawn(watch(Rc::downgrade(&state), limit));
        Ok(Watch { state })
    }

    /// Marks a call as in progress until the returned guard is dropped.
    pub(super) fn call(&self) -> Call {
        self.state.calls.set(self.state.calls.get() + 1);
        Call {
            state: Rc::clone(&self.state),
        }
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        self.state
            .calls
            .set(self.state.calls.get().saturating_sub(1));
        self.state.idle_since.set(Instant::now());
    }
}

/// Sleeps until the connection could be overdue, then shuts it down when
/// it is; ends when the connection is gone.
async fn watch(state: Weak<State>, limit: Duration) {
    loop {
        let since = match state.upgrade() {
            Some(state) if state.calls.get() > 0 => Instant::now(),
            Some(state) => state.idle_since.get(),
            None => return,
        };
        // A limit beyond the clock's range is no limit.
        let Some(wake) = since.checked_add(limit) else {
            return;
        };
        actix_web::rt::time::sleep_until(wake.into()).await;
        let Some(state) = state.upgrade() else {
            return;
        };
        if state.calls.get() == 0 && state.idle_since.get().elapsed() >= limit {
            tracing::info!(
                limit_secs = limit.as_secs(),
                "connection closed: no complete request in time"
            );
            let _ = state.socket.shutdown(std::net::Shutdown::Both);
            return;
        }
    }
}
