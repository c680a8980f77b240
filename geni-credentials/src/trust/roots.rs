//! One set of trust roots as a [`super::TrustStore`] holds it between two
//! reloads: the roots, their generation, the OpenSSL store built from them
//! on first use, and the caches of chains verified against them. A reload
//! replaces the whole set, so nothing verified against the old roots is
//! served once the new ones are in place.

use super::presented::{PresentedChain, chain_key};
use super::{VerifiedChain, namespace, openssl_chain};
use crate::cache::{BoundedCache, DEFAULT_CAPACITY};
use crate::cert::{CertError, GeniCert};
use crate::trust::TrustError;
use chrono::{DateTime, Utc};
use openssl::x509::X509;
use openssl::x509::store::X509Store;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// Source of generations: never repeats within a process.
static GENERATIONS: AtomicU64 = AtomicU64::new(1);

/// Roots with a generation of their own and empty caches at first.
pub(super) struct Roots {
    pub(super) certs: Vec<GeniCert>,
    pub(super) generation: u64,
    store: OnceLock<X509Store>,
    verified: BoundedCache<[u8; 32], Arc<CachedChain>>,
    /// For TLS peers: the key of the chain each leaf last verified with.
    sent_with: BoundedCache<[u8; 32], [u8; 32]>,
}

/// A chain that verified, with the time window in which it stays valid:
/// the latest notBefore and the earliest notAfter of its certificates.
struct CachedChain {
    chain: Arc<VerifiedChain>,
    valid_from: DateTime<Utc>,
    valid_until: DateTime<Utc>,
}

impl CachedChain {
    /// Whether every certificate of the chain is valid at `at`.
    fn is_valid_at(&self, at: DateTime<Utc>) -> bool {
        self.valid_from <= at && at <= self.valid_until
    }
}

impl Roots {
    /// `certs` under a new generation, with empty caches.
    pub(super) fn new(certs: Vec<GeniCert>) -> Roots {
        Roots {
            certs,
            generation: GENERATIONS.fetch_add(1, Ordering::Relaxed),
            store: OnceLock::new(),
            verified: BoundedCache::new(DEFAULT_CAPACITY),
            sent_with: BoundedCache::new(DEFAULT_CAPACITY),
        }
    }

    /// See [`super::TrustStore::verify_shared`].
    pub(super) fn verify_shared(
        &self,
        leaf: &GeniCert,
        untrusted: &[GeniCert],
        at: DateTime<Utc>,
    ) -> Result<Arc<VerifiedChain>, TrustError> {
        let presented = std::iter::once(leaf)
            .chain(untrusted)
            .map(|cert| cert.x509().deref());
        self.verify_cached(chain_key(presented)?, at, || {
            Ok((leaf.clone(), untrusted.to_vec()))
        })
    }

    /// See [`super::TrustStore::verify_presented`].
    pub(super) fn verify_presented(
        &self,
        presented: &PresentedChain,
        at: DateTime<Utc>,
    ) -> Result<Arc<VerifiedChain>, TrustError> {
        let key = presented.chain_key();
        let chain = self.verify_cached(key, at, || {
            let sent = presented
                .sent()
                .iter()
                .filter_map(|x509| GeniCert::from_x509(x509.clone()).ok())
                .collect();
            Ok((GeniCert::from_x509(presented.leaf().clone())?, sent))
        })?;
        if !presented.sent().is_empty() {
            self.sent_with.insert(presented.leaf_key(), key);
        }
        Ok(chain)
    }

    /// See [`super::TrustStore::verify_resumed_x509`].
    pub(super) fn verify_resumed_x509(
        &self,
        leaf: &X509,
        at: DateTime<Utc>,
    ) -> Result<Arc<VerifiedChain>, TrustError> {
        let sent_with = self
            .sent_with
            .get(&chain_key(std::iter::once(leaf.deref()))?);
        let remembered = sent_with.and_then(|key| self.verified.get(&key));
        match remembered {
            Some(hit) if hit.is_valid_at(at) => Ok(hit.chain.clone()),
            _ => self.verify_presented(&PresentedChain::new(vec![leaf.clone()])?, at),
        }
    }

    /// The chain cached under `key` if `at` lies in its validity window;
    /// otherwise the full verification of the certificates `read` gives,
    /// cached when it succeeds. Refusals are not cached: OpenSSL already
    /// refuses most of them in the handshake, they are rare, and a cached
    /// refusal would outlive the reason (a notBefore reached, a root added).
    fn verify_cached(
        &self,
        key: [u8; 32],
        at: DateTime<Utc>,
        read: impl FnOnce() -> Result<(GeniCert, Vec<GeniCert>), CertError>,
    ) -> Result<Arc<VerifiedChain>, TrustError> {
        if let Some(hit) = self.verified.get(&key).filter(|hit| hit.is_valid_at(at)) {
            return Ok(hit.chain.clone());
        }
        let (leaf, untrusted) = read()?;
        let chain = openssl_chain::build_and_verify(
            self.x509_store()?,
            &self.certs,
            &leaf,
            &untrusted,
            at,
        )?;
        namespace::check_chain(&chain)?;
        let verified = Arc::new(VerifiedChain { chain });
        let (valid_from, valid_until) = verified.validity();
        self.verified.insert(
            key,
            Arc::new(CachedChain {
                chain: verified.clone(),
                valid_from,
                valid_until,
            }),
        );
        Ok(verified)
    }

    /// The OpenSSL store of the roots, built on first use.
    fn x509_store(&self) -> Result<&X509Store, TrustError> {
        if let Some(store) = self.store.get() {
            return Ok(store);
        }
        let built = openssl_chain::build_store(&self.certs)?;
        // Another thread may have built an identical store meanwhile.
        Ok(self.store.get_or_init(|| built))
    }
}
