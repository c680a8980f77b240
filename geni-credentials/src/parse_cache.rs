//! A bounded, process-wide cache of certificates decoded from credential
//! documents, keyed by the SHA-256 of the exact bytes decoded.
//!
//! OpenSSL 3.0 needs about half a millisecond to decode one X.509
//! certificate (its key decoder framework), while the same few certificates
//! (authorities, callers, slices) recur in every credential of a chain and
//! in every call; decoding dominated verification. Only successful decodes
//! are kept; when the cache is full it is emptied and refilled.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Most entries kept per cache.
const CAPACITY: usize = 4096;

/// Decoded values by SHA-256 of their encoding.
pub struct ParseCache<V> {
    map: OnceLock<Mutex<HashMap<[u8; 32], V>>>,
}

impl<V: Clone> ParseCache<V> {
    /// An empty cache (usable in a `static`).
    pub const fn new() -> Self {
        Self {
            map: OnceLock::new(),
        }
    }

    /// The value decoded from `bytes`, decoding with `parse` on a miss.
    pub fn get_or_parse<E>(
        &self,
        bytes: &[u8],
        parse: impl FnOnce(&[u8]) -> Result<V, E>,
    ) -> Result<V, E> {
        let key = openssl::sha::sha256(bytes);
        let map = self.map.get_or_init(|| Mutex::new(HashMap::new()));
        if let Some(hit) = lock(map).get(&key) {
            return Ok(hit.clone());
        }
        let value = parse(bytes)?;
        let mut entries = lock(map);
        if entries.len() >= CAPACITY {
            entries.clear();
        }
        entries.insert(key, value.clone());
        Ok(value)
    }
}

/// Locks the map; a panic elsewhere cannot leave it inconsistent (every
/// update is a single insert or clear), so poisoning is ignored.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_once_and_does_not_keep_failures() {
        static CACHE: ParseCache<usize> = ParseCache::new();
        let mut calls = 0;
        let mut parse = |b: &[u8]| {
            calls += 1;
            if b.is_empty() {
                Err("empty")
            } else {
                Ok(b.len())
            }
        };
        assert_eq!(CACHE.get_or_parse(b"abc", &mut parse), Ok(3));
        assert_eq!(CACHE.get_or_parse(b"abc", &mut parse), Ok(3));
        assert_eq!(CACHE.get_or_parse(b"", &mut parse), Err("empty"));
        assert_eq!(CACHE.get_or_parse(b"", &mut parse), Err("empty"));
        assert_eq!(calls, 3);
    }
}
