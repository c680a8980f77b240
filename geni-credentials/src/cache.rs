//! A bounded map shared between threads, evicting with the CLOCK algorithm
//! (an approximation of least-recently-used: an entry read since the hand
//! last passed it gets a second chance). The caches of decoded
//! certificates, verified chains and verified credential documents are
//! built on it; none of them may grow with what clients send.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Most entries of a cache unless told otherwise.
pub const DEFAULT_CAPACITY: usize = 4096;

/// A map of at most `capacity` entries.
pub struct BoundedCache<K, V> {
    capacity: usize,
    inner: Mutex<Clock<K, V>>,
}

/// The slots, the index of each key and the clock hand.
struct Clock<K, V> {
    slots: Vec<Slot<K, V>>,
    index: HashMap<K, usize>,
    hand: usize,
}

struct Slot<K, V> {
    key: K,
    value: V,
    referenced: bool,
}

impl<K: Hash + Eq + Clone, V: Clone> BoundedCache<K, V> {
    /// An empty cache holding at most `capacity` entries (at least one).
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            inner: Mutex::new(Clock {
                slots: Vec::new(),
                index: HashMap::new(),
                hand: 0,
            }),
        }
    }

    /// The value stored under `key`, marking it as recently used.
    pub fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let mut clock = self.lock();
        let at = *clock.index.get(key)?;
        let slot = &mut clock.slots[at];
        slot.referenced = true;
        Some(slot.value.clone())
    }

    /// Stores `value` under `key`, evicting an entry not read since the
    /// hand last passed it when the cache is full.
    pub fn insert(&self, key: K, value: V) {
        let capacity = self.capacity;
        let mut clock = self.lock();
        if let Some(&at) = clock.index.get(&key) {
            clock.slots[at].value = value;
            return;
        }
        let slot = Slot {
            key: key.clone(),
            value,
            referenced: false,
        };
        if clock.slots.len() < capacity {
            let at = clock.slots.len();
            clock.slots.push(slot);
            clock.index.insert(key, at);
            return;
        }
        let victim = clock.sweep();
        let old = std::mem::replace(&mut clock.slots[victim], slot);
        clock.index.remove(&old.key);
        clock.index.insert(key, victim);
    }

    /// Forgets `key`, if stored. A cache left empty gives its memory back.
    pub fn remove<Q>(&self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let mut clock = self.lock();
        let Clock { slots, index, hand } = &mut *clock;
        let Some(at) = index.remove(key) else {
            return;
        };
        slots.swap_remove(at);
        if let Some(moved) = slots.get(at) {
            index.insert(moved.key.clone(), at);
        }
        if slots.is_empty() {
            *slots = Vec::new();
            *index = HashMap::new();
        }
        if *hand >= slots.len() {
            *hand = 0;
        }
    }

    /// How many entries are stored.
    pub fn len(&self) -> usize {
        self.lock().slots.len()
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Locks the map; every update leaves it consistent before anything
    /// can panic, so a poisoned lock is used as is.
    fn lock(&self) -> MutexGuard<'_, Clock<K, V>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<K, V> Clock<K, V> {
    /// Advances the hand past referenced slots (clearing their mark) and
    /// returns the first unreferenced one; the hand moves beyond it.
    fn sweep(&mut self) -> usize {
        loop {
            let at = self.hand;
            self.hand = (self.hand + 1) % self.slots.len();
            let slot = &mut self.slots[at];
            if !slot.referenced {
                return at;
            }
            slot.referenced = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_cache_evicts_an_entry_not_read_since_the_hand_passed() {
        let cache = BoundedCache::new(3);
        for key in 1..=3 {
            cache.insert(key, key * 10);
        }
        assert_eq!(cache.get(&1), Some(10));
        cache.insert(4, 40);
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.get(&1), Some(10), "read entries get a second chance");
        assert_eq!(cache.get(&2), None, "the first unread entry is evicted");
        assert_eq!(cache.get(&3), Some(30));
        assert_eq!(cache.get(&4), Some(40));
    }

    #[test]
    fn inserting_a_stored_key_replaces_its_value_without_growing() {
        let cache = BoundedCache::new(2);
        cache.insert("a", 1);
        cache.insert("a", 2);
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.get(&"a"), Some(2));
    }

    #[test]
    fn a_removed_key_is_gone_and_the_others_stay_found() {
        let cache = BoundedCache::new(3);
        for key in 1..=3 {
            cache.insert(key, key * 10);
        }
        cache.remove(&1);
        cache.remove(&7);
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get(&1), None);
        assert_eq!(
            cache.get(&3),
            Some(30),
            "the slot moved into the gap is found"
        );
        assert_eq!(cache.get(&2), Some(20));
        cache.insert(4, 40);
        assert_eq!(
            cache.len(),
            3,
            "the room freed is taken before anything is evicted"
        );
        assert_eq!(cache.get(&2), Some(20));
        assert_eq!(cache.get(&3), Some(30));
        cache.insert(5, 50);
        assert_eq!(
            cache.get(&4),
            None,
            "full again: the entry not read made way"
        );
        assert_eq!(cache.get(&5), Some(50));
        for key in [2, 3, 4, 5] {
            cache.remove(&key);
        }
        assert!(cache.is_empty());
        cache.insert(6, 60);
        assert_eq!(cache.get(&6), Some(60));
    }

    #[test]
    fn the_cache_never_holds_more_than_its_capacity() {
        let cache = BoundedCache::new(8);
        for key in 0..1000 {
            cache.insert(key, ());
            if key % 3 == 0 {
                cache.get(&key);
            }
        }
        assert_eq!(cache.len(), 8);
        assert_eq!(cache.get(&999), Some(()), "the newest entry is kept");
    }
}
