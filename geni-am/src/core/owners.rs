//! Which slice each sliver belongs to, for the API's check of a call that
//! names slivers (its credential must target their slice). A sliver never
//! moves to another slice, so what was once read or allocated here stays
//! true, also for other processes' slivers on a shared PostgreSQL; the
//! slivers this process allocated are known without reading the store,
//! and a call naming them needs no read transaction before its own.

use super::{Aggregate, CoreError};
use geni_credentials::BoundedCache;
use std::sync::Arc;

/// Most slivers remembered (each costs about 150 bytes); past it, the
/// least recently named are forgotten first.
const MOST: usize = 10_000;

/// The slice of each sliver remembered, by sliver URN.
pub(super) struct Owners(BoundedCache<String, Arc<str>>);

impl Default for Owners {
    fn default() -> Self {
        Owners(BoundedCache::new(MOST))
    }
}

impl Owners {
    /// Remembers that the slivers `urns` belong to `slice`.
    pub(super) fn record<'a>(&self, slice: &str, urns: impl IntoIterator<Item = &'a str>) {
        let slice: Arc<str> = slice.into();
        for urn in urns {
            self.0.insert(urn.to_owned(), Arc::clone(&slice));
        }
    }

    /// Forgets the slivers `urns` (they were deleted: a call naming one
    /// again reads its slice from the store).
    pub(super) fn forget<'a>(&self, urns: impl IntoIterator<Item = &'a str>) {
        for urn in urns {
            self.0.remove(urn);
        }
    }

    /// The slice of `urn`, if remembered.
    pub(super) fn of(&self, urn: &str) -> Option<Arc<str>> {
        self.0.get(urn)
    }
}

impl Aggregate {
    /// The slices the known slivers of `urns` belong to, each once, in
    /// the order of `urns`; unknown slivers are left out. The store is
    /// read only for slivers not remembered.
    pub fn slices_of_slivers(&self, urns: &[&str]) -> Result<Vec<String>, CoreError> {
        let mut owners: Vec<Option<Arc<str>>> = urns.iter().map(|u| self.owners.of(u)).collect();
        let missing: Vec<&str> = urns
            .iter()
            .zip(&owners)
            .filter(|(_, owner)| owner.is_none())
            .map(|(urn, _)| *urn)
            .collect();
        if !missing.is_empty() {
            let mut read = self.store.slices_of_slivers(&missing)?.into_iter();
            for (urn, owner) in urns.iter().zip(owners.iter_mut()) {
                if owner.is_some() {
                    continue;
                }
                if let Some(slice) = read.next().flatten() {
                    self.owners.record(&slice, [*urn]);
                    *owner = Some(slice.into());
                }
            }
        }
        let mut slices: Vec<String> = Vec::new();
        for slice in owners.into_iter().flatten() {
            if !slices.iter().any(|s| **s == *slice) {
                slices.push(slice.to_string());
            }
        }
        Ok(slices)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slivers_are_remembered_and_the_memory_is_bounded() {
        let owners = Owners::default();
        owners.record("slice-a", ["s1", "s2"]);
        assert_eq!(owners.of("s1").as_deref(), Some("slice-a"));
        assert_eq!(owners.of("s2").as_deref(), Some("slice-a"));
        assert_eq!(owners.of("s3"), None);
        let many: Vec<String> = (0..MOST + 1).map(|i| format!("x{i}")).collect();
        owners.record("slice-b", many.iter().map(String::as_str));
        let held = owners.0.len();
        assert!(held <= MOST, "{held} remembered");
        assert_eq!(owners.of(&many[MOST]).as_deref(), Some("slice-b"));
    }

    #[test]
    fn deleted_slivers_are_forgotten_and_the_others_kept() {
        let owners = Owners::default();
        owners.record("slice-a", ["s1", "s2", "s3"]);
        owners.forget(["s1", "s3", "unknown"]);
        assert_eq!(owners.of("s1"), None);
        assert_eq!(owners.of("s3"), None);
        assert_eq!(owners.of("s2").as_deref(), Some("slice-a"));
    }
}
