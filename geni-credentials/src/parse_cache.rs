//! A bounded, process-wide cache of certificates decoded from credential
//! documents, keyed by the SHA-256 of the exact bytes decoded.
//!
//! OpenSSL 3.0 needs about half a millisecond to decode one X.509
//! certificate (its key decoder framework), while the same few certificates
//! (authorities, callers, slices) recur in every credential of a chain and
//! in every call; decoding dominated verification. Only successful decodes
//! are kept, at most [`DEFAULT_CAPACITY`] of them (CLOCK eviction).

use crate::cache::{BoundedCache, DEFAULT_CAPACITY};
use std::sync::OnceLock;

/// Decoded values by SHA-256 of their encoding.
pub struct ParseCache<V> {
    map: OnceLock<BoundedCache<[u8; 32], V>>,
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
        let map = self.map.get_or_init(|| BoundedCache::new(DEFAULT_CAPACITY));
        if let Some(hit) = map.get(&key) {
            return Ok(hit);
        }
        let value = parse(bytes)?;
        map.insert(key, value.clone());
        Ok(value)
    }
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
