//! Reading a TLS certificate chain and its private key from PEM files,
//! checked against each other: the server's identity, and the client's in
//! `geni_am::client`. Any X.509 certificate will do here (a server certificate
//! need not carry a GENI URN; clients that verify it want its
//! subjectAltName to name the host they connect to).

use openssl::pkey::{PKey, Private};
use openssl::x509::X509;
use std::path::Path;

/// Most certificates read from a chain file.
const MAX_CHAIN: usize = 16;

/// A certificate (first), its issuers and its private key.
pub struct TlsIdentity {
    /// Leaf first, then issuers as the file lists them.
    pub chain: Vec<X509>,
    /// The private key of the leaf.
    pub key: PKey<Private>,
}

/// Why a certificate chain or key file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsFileError {
    /// A file cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The operating system error.
        source: std::io::Error,
    },
    /// The certificate file holds no usable PEM certificate.
    #[error(
        "{path} holds no PEM certificate (-----BEGIN CERTIFICATE-----) that OpenSSL can read{detail}"
    )]
    NoCertificate {
        /// The file.
        path: String,
        /// OpenSSL's reason, if any.
        detail: String,
    },
    /// The certificate file holds too many certificates.
    #[error("{path} holds more than {MAX_CHAIN} certificates")]
    TooManyCertificates {
        /// The file.
        path: String,
    },
    /// The key file holds no readable private key.
    #[error("{path} holds no PEM private key that OpenSSL can read: {reason}")]
    BadKey {
        /// The file.
        path: String,
        /// OpenSSL's reason.
        reason: String,
    },
    /// The key does not belong to the certificate.
    #[error("the private key in {key} does not belong to the certificate in {cert}")]
    Mismatch {
        /// The certificate file.
        cert: String,
        /// The key file.
        key: String,
    },
}

impl TlsIdentity {
    /// Reads and cross-checks the certificate chain file and the key file.
    pub fn load(cert: &Path, key: &Path) -> Result<TlsIdentity, TlsFileError> {
        let cert_name = cert.display().to_string();
        let key_name = key.display().to_string();
        let chain =
            X509::stack_from_pem(&read(cert)?).map_err(|e| TlsFileError::NoCertificate {
                path: cert_name.clone(),
                detail: format!(": {e}"),
            })?;
        if chain.len() > MAX_CHAIN {
            return Err(TlsFileError::TooManyCertificates { path: cert_name });
        }
        let Some(leaf) = chain.first() else {
            return Err(TlsFileError::NoCertificate {
                path: cert_name,
                detail: String::new(),
            });
        };
        let private =
            PKey::private_key_from_pem(&read(key)?).map_err(|e| TlsFileError::BadKey {
                path: key_name.clone(),
                reason: e.to_string(),
            })?;
        let matches = leaf
            .public_key()
            .is_ok_and(|public| public.public_eq(&private));
        if !matches {
            return Err(TlsFileError::Mismatch {
                cert: cert_name,
                key: key_name,
            });
        }
        Ok(TlsIdentity {
            chain,
            key: private,
        })
    }
}

/// Reads a small file.
fn read(path: &Path) -> Result<Vec<u8>, TlsFileError> {
    std::fs::read(path).map_err(|source| TlsFileError::Read {
        path: path.display().to_string(),
        source,
    })
}
