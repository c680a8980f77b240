//! A development certificate authority: GENI authorities (self-signed roots
//! and intermediate sub-authorities) that issue user, slice, tool and
//! aggregate/server certificates carrying URN, UUID and e-mail in their
//! subjectAltName, as a clearinghouse would. For tests, demos and quick
//! starts; [`Defect`] makes deliberately bad certificates for negative tests.
//!
//! ```no_run
//! # use geni_credentials::devca::Authority;
//! let root = Authority::root("geni-am.test", "sa")?;
//! let alice = root.user("alice")?;
//! let am = root.server("am", &["localhost", "127.0.0.1"])?;
//! # Ok::<(), geni_credentials::devca::DevCaError>(())
//! ```

mod build;
mod files;
mod spec;

pub use spec::{CertSpec, Defect, KeyType, SignatureDigest};

use crate::cert::{CertError, GeniCert, chain_to_pem};
use crate::sign::SigningKey;
use crate::urn::{Urn, UrnError};
use openssl::pkey::{PKey, Private};

/// Why the development CA could not do what was asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DevCaError {
    /// A URN built from the given names is not valid.
    #[error("invalid name for a development CA certificate: {0}")]
    Urn(#[from] UrnError),
    /// OpenSSL failed to generate a key or sign.
    #[error("OpenSSL failed while issuing a certificate: {0}")]
    Crypto(#[from] openssl::error::ErrorStack),
    /// An issued or read certificate could not be parsed.
    #[error(transparent)]
    Cert(#[from] CertError),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file concerned.
        path: String,
        /// The operating system error.
        source: std::io::Error,
    },
    /// The private key read does not belong to the certificate read.
    #[error("private key in {key_path} does not match the certificate in {cert_path}")]
    KeyMismatch {
        /// The certificate file.
        cert_path: String,
        /// The key file.
        key_path: String,
    },
}

/// A certificate with its private key and the certificates of its issuers.
#[derive(Clone)]
pub struct Identity {
    cert: GeniCert,
    urn: Urn,
    key: PKey<Private>,
    issuers: Vec<GeniCert>,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity")
            .field("cert", &self.cert.display_name())
            .field("issuers", &self.issuers.len())
            .finish_non_exhaustive()
    }
}

impl Identity {
    /// Bundles a certificate (which must carry a GENI URN), its key and its issuers.
    pub fn new(
        cert: GeniCert,
        key: PKey<Private>,
        issuers: Vec<GeniCert>,
    ) -> Result<Identity, DevCaError> {
        let urn = cert.require_urn()?.clone();
        Ok(Identity {
            cert,
            urn,
            key,
            issuers,
        })
    }

    /// The certificate.
    pub fn cert(&self) -> &GeniCert {
        &self.cert
    }

    /// The URN of the certificate.
    pub fn urn(&self) -> &Urn {
        &self.urn
    }

    /// The private key.
    pub fn key(&self) -> &PKey<Private> {
        &self.key
    }

    /// The issuers' certificates, nearest first, root last (empty for a root).
    pub fn issuers(&self) -> &[GeniCert] {
        &self.issuers
    }

    /// The certificate followed by its issuers.
    pub fn chain(&self) -> Vec<GeniCert> {
        std::iter::once(self.cert.clone())
            .chain(self.issuers.iter().cloned())
            .collect()
    }

    /// The chain as one PEM text (what a GENI user's certificate file holds).
    pub fn chain_pem(&self) -> String {
        chain_to_pem(&self.chain())
    }

    /// The private key as PKCS#8 PEM.
    pub fn key_pem(&self) -> Result<String, DevCaError> {
        let pem = self.key.private_key_to_pem_pkcs8()?;
        Ok(String::from_utf8_lossy(&pem).into_owned())
    }

    /// The key and chain in the form credential signing takes.
    pub fn signing_key(&self) -> SigningKey {
        SigningKey {
            key: self.key.clone(),
            chain: self.chain().iter().map(|c| c.x509().clone()).collect(),
        }
    }
}

/// An authority that issues certificates: an identity whose certificate is
/// an `authority` URN (normally with `CA:TRUE`).
#[derive(Debug, Clone)]
pub struct Authority {
    identity: Identity,
}

impl Authority {
    /// A self-signed root for `authority` with URN
    /// `urn:publicid:IDN+<authority>+authority+<name>` (`name`: `sa`, `ca`, `ma`…).
    pub fn root(authority: &str, name: &str) -> Result<Authority, DevCaError> {
        let urn = Urn::from_parts(authority, "authority", name)?;
        let mut spec =
            CertSpec::new(urn, authority).with_email(&format!("{name}@{}", top(authority)));
        spec.is_ca = true;
        Authority::root_from_spec(spec)
    }

    /// A self-signed root exactly as `spec` says.
    pub fn root_from_spec(spec: CertSpec) -> Result<Authority, DevCaError> {
        let key = build::new_key(&spec)?;
        let x509 = build::sign_cert(&spec, &key, None)?;
        Ok(Authority::from(Identity::new(
            GeniCert::from_x509(x509)?,
            key,
            Vec::new(),
        )?))
    }

    /// An intermediate authority for the sub-authority `<authority>:<sub>`,
    /// with URN `…+authority+<name>`, issued by this authority.
    pub fn intermediate(&self, sub: &str, name: &str) -> Result<Authority, DevCaError> {
        let authority = format!("{}:{sub}", self.urn().authority());
        let urn = Urn::from_parts(&authority, "authority", name)?;
        let mut spec =
            CertSpec::new(urn, &authority).with_email(&format!("{name}@{}", top(&authority)));
        spec.is_ca = true;
        Ok(Authority::from(self.issue(spec)?))
    }

    /// Issues a certificate exactly as `spec` says (any URN, any defect).
    pub fn issue(&self, spec: CertSpec) -> Result<Identity, DevCaError> {
        let key = build::new_key(&spec)?;
        let issuer = &self.identity;
        let x509 = build::sign_cert(&spec, &key, Some((issuer.cert.x509(), &issuer.key)))?;
        Identity::new(GeniCert::from_x509(x509)?, key, issuer.chain())
    }

    /// The default spec for an object `<type>+<name>` in this authority's
    /// namespace, with e-mail `<name>@<top-level authority>`.
    pub fn spec_for(&self, kind: &str, name: &str) -> Result<CertSpec, DevCaError> {
        let authority = self.urn().authority();
        let urn = Urn::from_parts(authority, kind, name)?;
        urn.check_name()?;
        Ok(CertSpec::new(urn, name).with_email(&format!("{name}@{}", top(authority))))
    }

    /// Issues a user certificate (`…+user+<name>`).
    pub fn user(&self, name: &str) -> Result<Identity, DevCaError> {
        self.issue(self.spec_for("user", name)?)
    }

    /// Issues a slice certificate (`…+slice+<name>`).
    pub fn slice(&self, name: &str) -> Result<Identity, DevCaError> {
        self.issue(self.spec_for("slice", name)?)
    }

    /// Issues a tool certificate (`…+tool+<name>`), as speaks-for tools present.
    pub fn tool(&self, name: &str) -> Result<Identity, DevCaError> {
        self.issue(self.spec_for("tool", name)?)
    }

    /// Issues an aggregate/server certificate `…+authority+<name>` whose
    /// common name is the first host and whose subjectAltName lists every
    /// host as DNS name or IP address, so hostname-checking TLS clients accept it.
    pub fn server(&self, name: &str, hosts: &[&str]) -> Result<Identity, DevCaError> {
        self.server_with_key(name, hosts, KeyType::Rsa)
    }

    /// [`Authority::server`] with a key of type `key` (an ECDSA P-256 key
    /// makes TLS handshakes cheaper for the server).
    pub fn server_with_key(
        &self,
        name: &str,
        hosts: &[&str],
        key: KeyType,
    ) -> Result<Identity, DevCaError> {
        let mut spec = self.spec_for("authority", name)?;
        spec.key_type = key;
        if let Some(first) = hosts.first() {
            spec.common_name = (*first).to_owned();
        }
        for host in hosts {
            match host.parse() {
                Ok(ip) => spec.ip_addresses.push(ip),
                Err(_) => spec.dns_names.push((*host).to_owned()),
            }
        }
        self.issue(spec)
    }

    /// Issues a deliberately defective certificate for negative tests: a
    /// user `<name>` with `defect`, or for [`Defect::NotACa`] a sub-authority
    /// `<name>` without `CA:TRUE` (wrap it with [`Authority::from`] to issue
    /// certificates that must then fail to verify).
    pub fn defective(&self, name: &str, defect: Defect) -> Result<Identity, DevCaError> {
        let spec = if defect == Defect::NotACa {
            let authority = format!("{}:{name}", self.urn().authority());
            CertSpec::new(Urn::from_parts(&authority, "authority", "sa")?, &authority)
        } else {
            self.spec_for("user", name)?
        };
        self.issue(spec.with_defect(defect))
    }

    /// This authority's identity (certificate, key, issuers).
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// This authority's certificate.
    pub fn cert(&self) -> &GeniCert {
        &self.identity.cert
    }

    /// This authority's URN.
    pub fn urn(&self) -> &Urn {
        self.identity.urn()
    }
}

impl From<Identity> for Authority {
    fn from(identity: Identity) -> Authority {
        Authority { identity }
    }
}

/// The top-level authority (before the first `:`), used for e-mail domains.
fn top(authority: &str) -> &str {
    authority.split(':').next().unwrap_or(authority)
}

#[cfg(test)]
mod tests;
