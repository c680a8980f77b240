//! What a development-CA certificate should contain, with modern defaults
//! and the deliberate defects negative tests need.

use crate::urn::Urn;
use chrono::{DateTime, Duration, Utc};
use std::net::IpAddr;
use uuid::Uuid;

/// Digest used to sign a certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SignatureDigest {
    /// SHA-256 (the default).
    Sha256,
    /// SHA-1 (legacy).
    Sha1,
    /// MD5 (legacy, as the original GENI examples).
    Md5,
}

/// The kind of key a certificate is issued for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum KeyType {
    /// RSA of [`CertSpec::key_bits`] bits (the default; every GENI
    /// certificate of users, slices and authorities is RSA).
    #[default]
    Rsa,
    /// ECDSA on P-256 (prime256v1): a TLS server key, ten times cheaper
    /// to sign a handshake with than RSA 2048.
    EcdsaP256,
}

/// The contents of one certificate to issue. Fields are public so tests can
/// build any variation; [`CertSpec::new`] gives modern defaults.
#[derive(Debug, Clone)]
pub struct CertSpec {
    /// The GENI URN (subjectAltName URI).
    pub urn: Urn,
    /// The subject common name.
    pub common_name: String,
    /// Contact e-mail (subjectAltName rfc822Name).
    pub email: Option<String>,
    /// UUID (subjectAltName URI `urn:uuid:`).
    pub uuid: Option<Uuid>,
    /// Whether basicConstraints says `CA:TRUE`.
    pub is_ca: bool,
    /// Start of validity.
    pub not_before: DateTime<Utc>,
    /// End of validity.
    pub not_after: DateTime<Utc>,
    /// Signature digest.
    pub digest: SignatureDigest,
    /// The kind of key.
    pub key_type: KeyType,
    /// RSA key size in bits (for [`KeyType::Rsa`]).
    pub key_bits: u32,
    /// subjectAltName DNS names (servers).
    pub dns_names: Vec<String>,
    /// subjectAltName IP addresses (servers).
    pub ip_addresses: Vec<IpAddr>,
}

/// A deliberately defective certificate, for negative tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Defect {
    /// Validity ended a year ago.
    Expired,
    /// Validity starts in a year.
    NotYetValid,
    /// The URN lies outside the issuer's namespace.
    WrongNamespace,
    /// An authority certificate without `CA:TRUE`.
    NotACa,
    /// SHA-1 signature and a 1024-bit RSA key.
    Legacy,
}

impl CertSpec {
    /// A spec for `urn`: RSA 2048, SHA-256, a fresh UUID, valid from an hour
    /// ago (clock skew) for a year, not a CA.
    pub fn new(urn: Urn, common_name: &str) -> CertSpec {
        let now = Utc::now();
        CertSpec {
            urn,
            common_name: common_name.to_owned(),
            email: None,
            uuid: Some(Uuid::new_v4()),
            is_ca: false,
            not_before: now - Duration::hours(1),
            not_after: now + Duration::days(365),
            digest: SignatureDigest::Sha256,
            key_type: KeyType::Rsa,
            key_bits: 2048,
            dns_names: Vec::new(),
            ip_addresses: Vec::new(),
        }
    }

    /// Sets the contact e-mail.
    pub fn with_email(mut self, email: &str) -> CertSpec {
        self.email = Some(email.to_owned());
        self
    }

    /// Sets the validity window.
    pub fn valid(mut self, not_before: DateTime<Utc>, not_after: DateTime<Utc>) -> CertSpec {
        self.not_before = not_before;
        self.not_after = not_after;
        self
    }

    /// Applies a defect. `WrongNamespace` moves the URN to the authority
    /// `elsewhere.invalid`; `NotACa` clears the CA flag.
    pub fn with_defect(mut self, defect: Defect) -> CertSpec {
        let now = Utc::now();
        match defect {
            Defect::Expired => {
                self.not_before = now - Duration::days(730);
                self.not_after = now - Duration::days(365);
            }
            Defect::NotYetValid => {
                self.not_before = now + Duration::days(365);
                self.not_after = now + Duration::days(730);
            }
            Defect::WrongNamespace => {
                if let Ok(urn) =
                    Urn::from_parts("elsewhere.invalid", self.urn.type_text(), self.urn.name())
                {
                    self.urn = urn;
                }
            }
            Defect::NotACa => self.is_ca = false,
            Defect::Legacy => {
                self.digest = SignatureDigest::Sha1;
                self.key_bits = 1024;
            }
        }
        self
    }
}
