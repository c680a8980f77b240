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
//! cache belongs to one set of roots ([`roots`]), so a change of them
//! (`add_root`, `add_file`) or a reload while the store is shared
//! ([`TrustStore::replace`]: a running server re-reading its roots
//! directory) starts it empty, and every set of roots has a
//! [`TrustStore::generation`] for caches kept outside the store.

mod error;
mod namespace;
mod openssl_chain;
mod presented;
mod roots;

pub use error::{TrustError, TrustLoadError};
pub use presented::PresentedChain;

use crate::cert::{CertError, GeniCert, parse_chain_limited};
use crate::urn::Urn;
use chrono::{DateTime, Utc};
use openssl::x509::X509;
use roots::Roots;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, PoisonError, RwLock};

/// File name endings read from a trust root directory.
pub const ROOT_FILE_EXTENSIONS: [&str; 4] = ["pem", "crt", "cert", "gid"];
/// Most certificates read from one trust root file.
const MAX_ROOTS_PER_FILE: usize = 1024;

/// The configured trust roots. The OpenSSL store is built on first use
/// after the roots change and shared by every verification; verified
/// chains are cached until the roots change. Shared between threads
/// (`Arc<TrustStore>`), the roots can be replaced in place
/// ([`TrustStore::replace`]): each verification uses the roots in force
/// when it starts.
pub struct TrustStore {
    current: RwLock<Arc<Roots>>,
}

impl Default for TrustStore {
    fn default() -> TrustStore {
        TrustStore::with_roots(Vec::new())
    }
}

impl Clone for TrustStore {
    /// A store of the same roots (same generation, same caches) that
    /// changes apart from this one from now on.
    fn clone(&self) -> TrustStore {
        TrustStore {
            current: RwLock::new(self.current()),
        }
    }
}

impl fmt::Debug for TrustStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let current = self.current();
        let names: Vec<String> = current.certs.iter().map(GeniCert::display_name).collect();
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
    /// certificate (private keys) are skipped; a malformed certificate is an
    /// error, and so is a directory without any certificate.
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
        let mut certs = Vec::new();
        for path in paths {
            certs.extend(read_root_file(&path)?);
        }
        if certs.is_empty() {
            return Err(TrustLoadError::Empty {
                path: dir.display().to_string(),
            });
        }
        Ok(TrustStore::with_roots(certs))
    }

    /// Adds every certificate of one PEM file as a root.
    pub fn add_file(&mut self, path: &Path) -> Result<(), TrustLoadError> {
        let added = read_root_file(path)?;
        if !added.is_empty() {
            let mut certs = self.roots();
            certs.extend(added);
            *self = TrustStore::with_roots(certs);
        }
        Ok(())
    }

    /// Adds one root certificate.
    pub fn add_root(&mut self, root: GeniCert) {
        let mut certs = self.roots();
        certs.push(root);
        *self = TrustStore::with_roots(certs);
    }

    /// Replaces the roots of this store, wherever it is shared, by those
    /// of `fresh` (typically [`TrustStore::from_dir`] read again): every
    /// verification that starts afterwards uses them, under `fresh`'s
    /// generation, and nothing verified against the old roots is served
    /// from a cache. Verifications already running finish with the old roots.
    pub fn replace(&self, fresh: TrustStore) {
        let roots = fresh.current();
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = roots;
    }

    /// The roots, in load order (a copy: the roots may be replaced).
    pub fn roots(&self) -> Vec<GeniCert> {
        self.current().certs.clone()
    }

    /// Identifies these roots: two stores with the same generation hold the
    /// same roots, and any change of the roots gives a new generation. A
    /// cache of verdicts kept outside the store includes it in its keys.
    pub fn generation(&self) -> u64 {
        self.current().generation
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
        self.current().verify_shared(leaf, untrusted, at)
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
        let presented = std::iter::once(leaf).chain(untrusted).cloned().collect();
        self.verify_presented(&PresentedChain::new(presented)?, at)
    }

    /// [`TrustStore::verify_x509`] for a chain whose cache keys are
    /// already computed (by the TLS handshake that received it).
    pub fn verify_presented(
        &self,
        presented: &PresentedChain,
        at: DateTime<Utc>,
    ) -> Result<Arc<VerifiedChain>, TrustError> {
        self.current().verify_presented(presented, at)
    }

    /// For a resumed TLS session, in which the peer sends no certificates
    /// (OpenSSL keeps only its leaf in the session): the chain `leaf` last
    /// verified with through [`TrustStore::verify_x509`] on these roots, if
    /// still cached and valid at `at`; otherwise `leaf` verified alone.
    pub fn verify_resumed_x509(
        &self,
        leaf: &X509,
        at: DateTime<Utc>,
    ) -> Result<Arc<VerifiedChain>, TrustError> {
        self.current().verify_resumed_x509(leaf, at)
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
    /// A store of `certs` with a new generation and empty caches.
    fn with_roots(certs: Vec<GeniCert>) -> TrustStore {
        TrustStore {
            current: RwLock::new(Arc::new(Roots::new(certs))),
        }
    }

    /// The roots in force now.
    fn current(&self) -> Arc<Roots> {
        Arc::clone(&self.current.read().unwrap_or_else(PoisonError::into_inner))
    }
}

/// Every certificate of one root file (none for a file of private keys only).
fn read_root_file(path: &Path) -> Result<Vec<GeniCert>, TrustLoadError> {
    let bytes = std::fs::read(path).map_err(|source| TrustLoadError::Io {
        path: path.display().to_string(),
        source,
    })?;
    match parse_chain_limited(&bytes, MAX_ROOTS_PER_FILE) {
        Ok(certs) => Ok(certs),
        Err(CertError::NoCertificate) => Ok(Vec::new()),
        Err(source) => Err(TrustLoadError::BadRoot {
            path: path.display().to_string(),
            source,
        }),
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

#[cfg(test)]
mod tests;
