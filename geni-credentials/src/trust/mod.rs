//! Trust roots and certificate chain verification.
//!
//! A [`TrustStore`] holds the configured roots (a directory of PEM files, as
//! GENI aggregates are configured). [`TrustStore::verify`] builds the chain
//! from a leaf and untrusted intermediates (sent in the TLS handshake or
//! embedded in a credential) to a root with OpenSSL, at a chosen time, and
//! then applies the GENI namespace rule: every signer has an `authority` URN
//! whose namespace covers the subject's.

mod error;
mod namespace;
mod openssl_chain;

pub use error::{TrustError, TrustLoadError};

use crate::cert::{CertError, GeniCert, parse_chain_limited};
use crate::urn::Urn;
use chrono::{DateTime, Utc};
use openssl::x509::store::X509Store;
use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

/// File name endings read from a trust root directory.
pub const ROOT_FILE_EXTENSIONS: [&str; 4] = ["pem", "crt", "cert", "gid"];
/// Most certificates read from one trust root file.
const MAX_ROOTS_PER_FILE: usize = 1024;

/// The configured trust roots. The OpenSSL store is built on first use
/// after the roots change and shared by every verification.
#[derive(Default)]
pub struct TrustStore {
    roots: Vec<GeniCert>,
    store: OnceLock<X509Store>,
}

impl Clone for TrustStore {
    fn clone(&self) -> TrustStore {
        TrustStore {
            roots: self.roots.clone(),
            store: OnceLock::new(),
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
                self.roots.extend(certs);
                self.store = OnceLock::new();
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
        self.roots.push(root);
        self.store = OnceLock::new();
    }

    /// The roots, in load order.
    pub fn roots(&self) -> &[GeniCert] {
        &self.roots
    }

    /// Verifies `leaf` at time `at`, using `untrusted` as candidate
    /// intermediates (order irrelevant; the leaf itself and roots may be among them).
    pub fn verify(
        &self,
        leaf: &GeniCert,
        untrusted: &[GeniCert],
        at: DateTime<Utc>,
    ) -> Result<VerifiedChain, TrustError> {
        let chain =
            openssl_chain::build_and_verify(self.x509_store()?, &self.roots, leaf, untrusted, at)?;
        namespace::check_chain(&chain)?;
        Ok(VerifiedChain { chain })
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
}

#[cfg(test)]
mod tests;
