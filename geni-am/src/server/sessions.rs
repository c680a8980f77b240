//! The server's resumable TLS sessions, kept in OpenSSL's own encoding
//! instead of OpenSSL's internal cache. The internal cache keeps every
//! session as live objects, the client's decoded certificates among them:
//! about 9 KiB in many small allocations per session, 9 MiB for a full
//! cache, which a run of new connections fills and spreads through the
//! allocator's arenas (docs/PERFORMANCE.md, "Sessions kept encoded").
//! Encoded, a session is one allocation of about 1 KiB: its secrets and
//! the client's leaf certificate, which is all a resumed session carries.
//!
//! OpenSSL hands each new resumable session to the store (a TLS 1.2
//! session, or the session a TLS 1.3 ticket names: tickets are stateful,
//! as the acceptor sets them up), asks it for one when a client offers it,
//! and tells it of a session that must no longer be resumed. The store
//! keeps at most a fixed number, the oldest leaving first, and never gives
//! out one past its lifetime. A TLS 1.3 ticket resumes once (RFC 8446,
//! 8.1): the resumed connection gets a ticket of its own, so resuming
//! takes no room from other clients' sessions.

use chrono::Utc;
use openssl::ssl::{SslAcceptorBuilder, SslSession, SslSessionCacheMode, SslVersion};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

/// Sessions kept by id, bounded in number.
#[derive(Debug)]
pub(super) struct SessionStore {
    limit: usize,
    kept: Mutex<Kept>,
}

/// A session id: at most 32 bytes (TLS 1.2 session ids, and the stateful
/// TLS 1.3 tickets, which are the session's id), held without an
/// allocation of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct SessionId {
    bytes: [u8; 32],
    len: u8,
}

impl SessionId {
    /// The id of these bytes; none for more than 32, which no session has.
    fn of(id: &[u8]) -> Option<SessionId> {
        let mut bytes = [0; 32];
        bytes.get_mut(..id.len())?.copy_from_slice(id);
        Some(SessionId {
            bytes,
            len: u8::try_from(id.len()).ok()?,
        })
    }
}

/// What the store holds, under its lock.
#[derive(Debug, Default)]
struct Kept {
    by_id: HashMap<SessionId, Stored>,
    /// Ids in the order they were kept, each with the number it was kept
    /// under: an id forgotten or kept again since leaves its old entry
    /// behind, passed over when reached.
    order: VecDeque<(SessionId, u64)>,
    kept_so_far: u64,
}

/// One session kept.
#[derive(Debug)]
struct Stored {
    encoded: Arc<[u8]>,
    /// Seconds since the Unix epoch after which it is not given out.
    expires: i64,
    number: u64,
}

impl SessionStore {
    /// A store of at most `limit` sessions.
    pub(super) fn new(limit: usize) -> SessionStore {
        SessionStore {
            limit,
            kept: Mutex::default(),
        }
    }

    /// Keeps the session `id` in its encoding until `expires`, the oldest
    /// kept leaving if the store is full; those expired by `now` go too.
    pub(super) fn keep(&self, id: &[u8], encoded: &[u8], expires: i64, now: i64) {
        let Some(id) = SessionId::of(id) else {
            return;
        };
        let mut kept = self.lock();
        let number = kept.kept_so_far;
        kept.kept_so_far += 1;
        kept.by_id.insert(
            id,
            Stored {
                encoded: encoded.into(),
                expires,
                number,
            },
        );
        kept.order.push_back((id, number));
        kept.drop_oldest(self.limit, now);
    }

    /// The encoding of session `id`, unless unknown or expired by `now`.
    pub(super) fn find(&self, id: &[u8], now: i64) -> Option<Arc<[u8]>> {
        let id = SessionId::of(id)?;
        let mut kept = self.lock();
        let stored = kept.by_id.get(&id)?;
        if stored.expires > now {
            return Some(Arc::clone(&stored.encoded));
        }
        kept.by_id.remove(&id);
        None
    }

    /// Forgets session `id`.
    pub(super) fn forget(&self, id: &[u8]) {
        if let Some(id) = SessionId::of(id) {
            self.lock().by_id.remove(&id);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        // The map stays consistent whatever a panicking holder did.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Kept {
    /// Drops from the oldest on: past `limit`, expired by `now`, or
    /// entries that no longer name what is kept.
    fn drop_oldest(&mut self, limit: usize, now: i64) {
        while let Some((id, number)) = self.order.front() {
            let current = self.by_id.get(id).filter(|s| s.number == *number);
            match current {
                Some(stored) if self.by_id.len() <= limit && stored.expires > now => break,
                Some(_) => {
                    self.by_id.remove(id);
                }
                None => {}
            }
            self.order.pop_front();
        }
        // Entries left behind in the middle by forgotten sessions are
        // cleared once they would double the queue.
        if self.order.len() > 2 * limit.max(1) {
            let by_id = &self.by_id;
            self.order
                .retain(|(id, number)| by_id.get(id).is_some_and(|s| s.number == *number));
        }
    }
}

/// Makes a store of at most `limit` sessions the acceptor's session cache,
/// in place of OpenSSL's.
pub(super) fn install(builder: &mut SslAcceptorBuilder, limit: usize) {
    let store = Arc::new(SessionStore::new(limit));
    builder.set_session_cache_mode(SslSessionCacheMode::SERVER | SslSessionCacheMode::NO_INTERNAL);
    let keeping = Arc::clone(&store);
    builder.set_new_session_callback(move |_, session| {
        // A session that cannot be encoded is not resumable; the
        // connection goes on without it.
        if let Ok(encoded) = session.to_der() {
            // `time` is a C long: 32 bits on some targets.
            #[allow(clippy::useless_conversion)]
            let expires = i64::from(session.time()).saturating_add(session.timeout());
            keeping.keep(session.id(), &encoded, expires, Utc::now().timestamp());
        }
    });
    let forgetting = Arc::clone(&store);
    builder.set_remove_session_callback(move |_, session| forgetting.forget(session.id()));
    // SAFETY: every session the store holds was handed over by this
    // acceptor's own context, so a session found belongs to it.
    unsafe {
        builder.set_get_session_callback(move |_, id| {
            let encoded = store.find(id, Utc::now().timestamp())?;
            let session = SslSession::from_der(&encoded).ok()?;
            if session.protocol_version() == SslVersion::TLS1_3 {
                store.forget(id);
            }
            Some(session)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_000_000;
    const LATER: i64 = NOW + 300;

    #[test]
    fn a_kept_session_is_found_until_it_expires() {
        let store = SessionStore::new(4);
        store.keep(b"one", b"encoded one", LATER, NOW);
        assert_eq!(
            store.find(b"one", NOW).as_deref(),
            Some(&b"encoded one"[..])
        );
        assert_eq!(
            store.find(b"one", LATER - 1).as_deref(),
            Some(&b"encoded one"[..])
        );
        assert_eq!(store.find(b"one", LATER), None);
        assert!(
            store.lock().by_id.is_empty(),
            "an expired session is dropped when asked for"
        );
        assert_eq!(store.find(b"other", NOW), None);
    }

    #[test]
    fn a_full_store_lets_the_oldest_go() {
        let store = SessionStore::new(3);
        for id in [b"a", b"b", b"c", b"d"] {
            store.keep(id, id, LATER, NOW);
        }
        assert_eq!(store.lock().by_id.len(), 3);
        assert_eq!(store.find(b"a", NOW), None);
        for id in [b"b", b"c", b"d"] {
            assert!(store.find(id, NOW).is_some());
        }
    }

    #[test]
    fn expired_sessions_leave_when_another_is_kept() {
        let store = SessionStore::new(10);
        store.keep(b"old", b"x", NOW + 10, NOW);
        store.keep(b"new", b"y", LATER + 10, NOW + 5);
        assert_eq!(store.lock().by_id.len(), 2);
        store.keep(b"newer", b"z", LATER + 20, NOW + 20);
        assert_eq!(store.lock().by_id.len(), 2);
        assert_eq!(store.find(b"old", NOW), None, "gone, whenever asked");
    }

    #[test]
    fn a_forgotten_session_is_not_found() {
        let store = SessionStore::new(2);
        store.keep(b"a", b"1", LATER, NOW);
        store.forget(b"a");
        assert_eq!(store.find(b"a", NOW), None);
    }

    #[test]
    fn a_session_kept_again_leaves_after_those_kept_before_its_second_keeping() {
        let store = SessionStore::new(2);
        store.keep(b"a", b"1", LATER, NOW);
        store.keep(b"b", b"2", LATER, NOW);
        store.keep(b"a", b"3", LATER, NOW);
        store.keep(b"c", b"4", LATER, NOW);
        assert_eq!(store.find(b"b", NOW), None, "b is now the oldest");
        assert_eq!(store.find(b"a", NOW).as_deref(), Some(&b"3"[..]));
        assert!(store.find(b"c", NOW).is_some());
    }

    #[test]
    fn an_id_longer_than_any_session_has_is_neither_kept_nor_found() {
        let store = SessionStore::new(2);
        let long = [7u8; 33];
        store.keep(&long, b"x", LATER, NOW);
        assert!(store.lock().by_id.is_empty());
        assert_eq!(store.find(&long, NOW), None);
        store.keep(&long[..32], b"y", LATER, NOW);
        assert_eq!(store.find(&long[..32], NOW).as_deref(), Some(&b"y"[..]));
    }

    #[test]
    fn sessions_forgotten_behind_a_live_one_leave_the_queue_bounded() {
        let store = SessionStore::new(10);
        for i in 0..5u32 {
            store.keep(&i.to_be_bytes(), b"live", LATER, NOW);
        }
        for i in 5..105u32 {
            let id = i.to_be_bytes();
            store.keep(&id, b"short-lived", LATER, NOW);
            store.forget(&id);
        }
        assert_eq!(store.lock().by_id.len(), 5);
        assert!((0..5u32).all(|i| store.find(&i.to_be_bytes(), NOW).is_some()));
        let queued = store.lock().order.len();
        assert!(queued <= 20, "{queued} entries queued for 5 sessions");
    }
}
