//! Trust roots and certificate chain verification.
//!
//! A [`TrustStore`] holds the configured roots (a directory of PEM files, as
//! GENI aggregates are configured). [`TrustStore::verify`] builds the chain
//! from a leaf and untrusted intermediates (sent in the TLS handshake or
//! embedded in a credential) to a root with OpenSSL, at a chosen time, and
//! then applies the GENI namespace rule: every signer has an `authority` URN
//! whose namespace covers the subject's.
//!
//! Verified chains are remembered ([`TrustStore::verify`]): a TLS client
//! presents the same chain on every connection and a credential carries the
//! same owner, target and signer certificates on every call, and building
//! and checking a chain costs a fraction of a millisecond each time. The
//! cache lives in the store, so a reload of the roots (a new store) or a
//! change of them (`add_root`, `add_file`) starts it empty, and every store
//! has a [`TrustStore::generation`] for caches kept outside it.

mod error;
mod namespace;
mod openssl_chain;

pub use error::{TrustError, TrustLoadError};

use crate::cache::{BoundedCache, DEFAULT_CAPACITY};
use crate::cert::{CertError, GeniCert, parse_chain_limited};
use crate::urn::Urn;
use chrono::{DateTime, Utc};
use openssl::x509::X509;
use openssl::x509::store::X509Store;
use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// File name endings read from a trust root directory.
pub const ROOT_FILE_EXTENSIONS: [&str; 4] = ["pem", "crt", "cert", "gid"];
/// Most certificates read from one trust root file.
const MAX_ROOTS_PER_FILE: usize = 1024;

/// Source of [`TrustStore::generation`]: never repeats within a process.
static GENERATIONS: AtomicU64 = AtomicU64::new(1);

/// The configured trust roots. The OpenSSL store is built on first use
/// after the roots change and shared by every verification; verified
/// chains are cached until the roots change.
pub struct TrustStore {
    roots: Vec<GeniCert>,
    generation: u64,
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

impl Default for TrustStore {
    fn default() -> TrustStore {
        TrustStore::with_roots(Vec::new())
    }
}

impl Clone for TrustStore {
    fn clone(&self) -> TrustStore {
        TrustStore {
            generation: self.generation,
            ..TrustStore::with_roots(self.roots.clone())
        }
    }
}

impl fmt::Debug for TrustStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self.roots.iter().map(GeniCert::display_name).collect();
        f.debug_struct("TrustStore").field("roots", &names).finish()
    }
}

/// A chain that verified: leaf first, the trust root last.
#[derive(Debug, Clone)]
pub struct VerifiedChain {
    /// Never empty: only built from a chain OpenSSL verified.
    chain: Vec<GeniCert>,
}

impl TrustStore {
    /// An empty store (trusts nothing until roots are added).
    pub fn new() -> TrustStore {
        TrustStore::default()
    }

    /// Reads every `*.pem`, `*.crt`, `*.cert` and `*.gid` file of `dir` (not
    /// recursively); each may hold several certificates. Files without any
    /// certificate (private keys) are skipped; a malformed certificate is an error.
    pub fn from_dir(dir: &Path) -> Result<TrustStore, TrustLoadError> {
        let io = |source| TrustLoadError::Io {
            path: dir.display().to_string(),
            source,
        };
        let mut paths = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let path = entry.map_err(io)?.path();
            let wanted = path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                ROOT_FILE_EXTENSIONS
                    .iter()
                    .any(|w| w.eq_ignore_ascii_case(e))
            });
            if wanted && path.is_file() {
                paths.push(path);
            }
        }
        paths.sort();
        let mut store = TrustStore::new();
        for path in paths {
            store.add_file(&path)?;
        }
        if store.roots.is_empty() {
            return Err(TrustLoadError::Empty {
                path: dir.display().to_string(),
            });
        }
        Ok(store)
    }

    /// Adds every certificate of one PEM file as a root.
    pub fn add_file(&mut self, path: &Path) -> Result<(), TrustLoadError> {
        let bytes = std::fs::read(path).map_err(|source| TrustLoadError::Io {
            path: path.display().to_string(),
            source,
        })?;
        match parse_chain_limited(&bytes, MAX_ROOTS_PER_FILE) {
            Ok(certs) => {
                let mut roots = std::mem::take(&mut self.roots);
                roots.extend(certs);
                *self = TrustStore::with_roots(roots);
            }
            Err(CertError::NoCertificate) => {}
            Err(source) => {
                return Err(TrustLoadError::BadRoot {
                    path: path.display().to_string(),
                    source,
                });
            }
        }
        Ok(())
    }

    /// Adds one root certificate.
    pub fn add_root(&mut self, root: GeniCert) {
        let mut roots = std::mem::take(&mut self.roots);
        roots.push(root);
        *self = TrustStore::with_roots(roots);
    }

    /// The roots, in load order.
    pub fn roots(&self) -> &[GeniCert] {
        &self.roots
    }

    /// Identifies these roots: two stores with the same generation hold the
    /// same roots, and any change of the roots gives a new generation. A
    /// cache of verdicts kept outside the store includes it in its keys.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Verifies `leaf` at time `at`, using `untrusted` as candidate
    /// intermediates (order irrelevant; the leaf itself and roots may be among them).
    pub fn verify(
        &self,
        leaf: &GeniCert,
        untrusted: &[GeniCert],
        at: DateTime<Utc>,
    ) -> Result<VerifiedChain, TrustError> {
        Ok(self.verify_shared(leaf, untrusted, at)?.as_ref().clone())
    }

    /// [`TrustStore::verify`], sharing the cached chain instead of copying it.
    pub fn verify_shared(
        &self,
        leaf: &GeniCert,
        untrusted: &[GeniCert],
        at: DateTime<Utc>,
    ) -> Result<Arc<VerifiedChain>, TrustError> {
        let presented = std::iter::once(leaf).chain(untrusted).map(GeniCert::x509);
        self.verify_cached(chain_key(presented)?, at, || {
            Ok((leaf.clone(), untrusted.to_vec()))
        })
    }

    /// [`TrustStore::verify`] for certificates as OpenSSL decoded them (a
    /// TLS peer's leaf and the chain it sent): on a cache hit nothing is
    /// read out of them. Unreadable intermediates are left out of the candidates.
    pub fn verify_x509(
        &self,
        leaf: &X509,
        untrusted: &[X509],
        at: DateTime<Utc>,
    ) -> Result<Arc<VerifiedChain>, TrustError> {
        let key = chain_key(std::iter::once(leaf).chain(untrusted))?;
        let chain = self.verify_cached(key, at, || {
            let sent = untrusted
                .iter()
                .filter_map(|x509| GeniCert::from_x509(x509.clone()).ok())
                .collect();
            Ok((GeniCert::from_x509(leaf.clone())?, sent))
        })?;
        if !untrusted.is_empty() {
            self.sent_with
                .insert(chain_key(std::iter::once(leaf))?, key);
        }
        Ok(chain)
    }

    /// For a resumed TLS session, in which the peer sends no certificates
    /// (OpenSSL keeps only its leaf in the session): the chain `leaf` last
    /// verified with through [`TrustStore::verify_x509`] on this store, if
    /// still cached and valid at `at`; otherwise `leaf` verified alone.
    pub fn verify_resumed_x509(
        &self,
        leaf: &X509,
        at: DateTime<Utc>,
    ) -> Result<Arc<VerifiedChain>, TrustError> {
        let sent_with = self.sent_with.get(&chain_key(std::iter::once(leaf))?);
        let remembered = sent_with.and_then(|key| self.verified.get(&key));
        match remembered {
            Some(hit) if hit.is_valid_at(at) => Ok(hit.chain.clone()),
            _ => self.verify_x509(leaf, &[], at),
        }
    }

    /// Verifies a chain given leaf first (as in a PEM file or a GID), at time `at`.
    pub fn verify_chain(
        &self,
        chain: &[GeniCert],
        at: DateTime<Utc>,
    ) -> Result<VerifiedChain, TrustError> {
        let (leaf, rest) = chain
            .split_first()
            .ok_or(TrustError::Certificate(CertError::NoCertificate))?;
        self.verify(leaf, rest, at)
    }
}

impl TrustStore {
    /// A store of `roots` with a new generation and empty caches.
    fn with_roots(roots: Vec<GeniCert>) -> TrustStore {
        TrustStore {
            roots,
            generation: GENERATIONS.fetch_add(1, Ordering::Relaxed),
            store: OnceLock::new(),
            verified: BoundedCache::new(DEFAULT_CAPACITY),
            sent_with: BoundedCache::new(DEFAULT_CAPACITY),
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
            &self.roots,
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

    /// The OpenSSL store of the roots, built once per change of the roots.
    fn x509_store(&self) -> Result<&X509Store, TrustError> {
        if let Some(store) = self.store.get() {
            return Ok(store);
        }
        let built = openssl_chain::build_store(&self.roots)?;
        // Another thread may have built an identical store meanwhile.
        Ok(self.store.get_or_init(|| built))
    }
}

impl VerifiedChain {
    /// The whole chain, leaf first, trust root last.
    pub fn certificates(&self) -> &[GeniCert] {
        &self.chain
    }

    /// The verified leaf certificate.
    pub fn leaf(&self) -> &GeniCert {
        &self.chain[0]
    }

    /// The trust root the chain ends at.
    pub fn root(&self) -> &GeniCert {
        &self.chain[self.chain.len() - 1]
    }

    /// The leaf's URN (present: the namespace rule required it).
    pub fn leaf_urn(&self) -> Option<&Urn> {
        self.leaf().urn()
    }

    /// URNs of the issuers above the leaf, nearest first, root last.
    pub fn issuer_urns(&self) -> Vec<&Urn> {
        self.chain[1..].iter().filter_map(GeniCert::urn).collect()
    }

    /// When the whole chain is valid: from the latest notBefore to the
    /// earliest notAfter of its certificates (both included, as OpenSSL
    /// checks them).
    pub fn validity(&self) -> (DateTime<Utc>, DateTime<Utc>) {
        let from = self.chain.iter().map(GeniCert::not_before).max();
        let until = self.chain.iter().map(GeniCert::not_after).min();
        let leaf = self.leaf();
        (
            from.unwrap_or(leaf.not_before()),
            until.unwrap_or(leaf.not_after()),
        )
    }
}

/// The cache key of a presented chain: SHA-256 over each certificate's DER,
/// each preceded by its length so that no two chains share an encoding.
fn chain_key<'c>(certs: impl Iterator<Item = &'c X509>) -> Result<[u8; 32], TrustError> {
    let mut hasher = openssl::sha::Sha256::new();
    for cert in certs.take(crate::cert::MAX_CHAIN_LEN + 1) {
        let der = cert.to_der()?;
        hasher.update(&(der.len() as u64).to_be_bytes());
        hasher.update(&der);
    }
    Ok(hasher.finish())
}

#[cfg(test)]
mod tests;
