//! GENI X.509 certificates ("GIDs"): parsing PEM/DER and chains, and reading
//! the GENI identity out of them — the URN (`subjectAltName` URI
//! `urn:publicid:…`), the UUID (URI `urn:uuid:…`), the e-mail (`rfc822Name`)
//! — from the DER GeneralNames, plus the CA flag, validity window and
//! algorithms. Legacy certificates (MD5/SHA-1, 1024-bit RSA) are accepted and
//! flagged in [`GeniCert::legacy`].

mod algo;
mod pem;

pub use algo::{Algorithms, LegacyFeature, MIN_MODERN_RSA_BITS};

use crate::openssl_glue;
use crate::refusal::RefusalKind;
use crate::urn::{Urn, UrnError};
use chrono::{DateTime, Utc};
use openssl::asn1::{Asn1Time, Asn1TimeRef};
use openssl::hash::MessageDigest;
use openssl::x509::{X509, X509NameRef, X509Ref};
use std::net::IpAddr;
use uuid::Uuid;

/// Largest PEM or DER input accepted, in bytes.
pub const MAX_CERT_INPUT: usize = 1 << 20;
/// Most certificates accepted in one chain.
pub const MAX_CHAIN_LEN: usize = 16;

/// Why bytes could not be read as GENI certificates.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CertError {
    /// The input exceeds [`MAX_CERT_INPUT`].
    #[error("certificate input is {len} bytes; at most {max} are accepted")]
    TooLarge {
        /// Input length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// No `-----BEGIN CERTIFICATE-----` block was found.
    #[error("no PEM certificate (-----BEGIN CERTIFICATE-----) found")]
    NoCertificate,
    /// More certificates than allowed.
    #[error("more than {max} certificates in one PEM blob")]
    TooManyCertificates {
        /// The limit.
        max: usize,
    },
    /// A `BEGIN CERTIFICATE` line without its `END` line.
    #[error("certificate #{} has no -----END CERTIFICATE----- line", index + 1)]
    Unterminated {
        /// Zero-based position of the block.
        index: usize,
    },
    /// The body of a PEM block is not base64.
    #[error("certificate #{} is not valid base64: {reason}", index + 1)]
    BadBase64 {
        /// Zero-based position of the block.
        index: usize,
        /// What the decoder said.
        reason: String,
    },
    /// The DER is not an X.509 certificate.
    #[error("certificate #{} is not a valid DER X.509 certificate: {reason}", index + 1)]
    BadDer {
        /// Zero-based position of the certificate.
        index: usize,
        /// What OpenSSL said.
        reason: String,
    },
    /// OpenSSL could not read a part of an otherwise parsed certificate.
    #[error("cannot read {what} of certificate {subject}: {reason}")]
    Unreadable {
        /// The certificate subject.
        subject: String,
        /// Which part.
        what: &'static str,
        /// What OpenSSL said.
        reason: String,
    },
    /// The certificate carries no `urn:publicid:` URI in its subjectAltName.
    #[error("certificate {subject} has no GENI URN (subjectAltName URI urn:publicid:IDN+…)")]
    NoUrn {
        /// The certificate subject.
        subject: String,
    },
    /// The certificate's URN is malformed.
    #[error("certificate {subject} carries a malformed URN: {source}")]
    BadUrn {
        /// The certificate subject.
        subject: String,
        /// Why the URN was refused.
        source: UrnError,
    },
}

impl CertError {
    /// The GENI outcome of presenting such a certificate.
    pub fn kind(&self) -> RefusalKind {
        RefusalKind::CredentialInvalid
    }
}

/// A parsed GENI certificate with its identity fields read out.
#[derive(Debug, Clone)]
pub struct GeniCert {
    x509: X509,
    subject: String,
    urn: Option<Urn>,
    urn_problem: Option<UrnError>,
    uuid: Option<Uuid>,
    emails: Vec<String>,
    uris: Vec<String>,
    dns_names: Vec<String>,
    ip_addresses: Vec<IpAddr>,
    is_ca: bool,
    not_before: DateTime<Utc>,
    not_after: DateTime<Utc>,
    algorithms: Algorithms,
    legacy: Vec<LegacyFeature>,
}

impl GeniCert {
    /// Parses one DER certificate.
    pub fn from_der(der: &[u8]) -> Result<GeniCert, CertError> {
        check_size(der.len())?;
        der_at(der, 0)
    }

    /// Parses the first certificate of a PEM text (other blocks are ignored).
    pub fn from_pem(pem: &[u8]) -> Result<GeniCert, CertError> {
        parse_chain(pem)?
            .into_iter()
            .next()
            .ok_or(CertError::NoCertificate)
    }

    /// Reads the identity fields of an OpenSSL certificate.
    pub fn from_x509(x509: X509) -> Result<GeniCert, CertError> {
        let subject = name_line(x509.subject_name());
        let unreadable = |what: &'static str| {
            let subject = subject.clone();
            move |e: openssl::error::ErrorStack| CertError::Unreadable {
                subject,
                what,
                reason: e.to_string(),
            }
        };
        let (algorithms, legacy) = algo::inspect(&x509).map_err(unreadable("public key"))?;
        let not_before = to_utc(x509.not_before()).map_err(unreadable("notBefore"))?;
        let not_after = to_utc(x509.not_after()).map_err(unreadable("notAfter"))?;
        let mut cert = GeniCert {
            is_ca: openssl_glue::ca_flag(&x509),
            x509,
            subject,
            urn: None,
            urn_problem: None,
            uuid: None,
            emails: Vec::new(),
            uris: Vec::new(),
            dns_names: Vec::new(),
            ip_addresses: Vec::new(),
            not_before,
            not_after,
            algorithms,
            legacy,
        };
        cert.read_alt_names();
        Ok(cert)
    }

    /// Walks the subjectAltName GeneralNames and keeps the GENI ones.
    fn read_alt_names(&mut self) {
        let Some(names) = self.x509.subject_alt_names() else {
            return;
        };
        for name in &names {
            if let Some(uri) = name.uri() {
                self.uris.push(uri.to_owned());
                if let Some(hex) = strip_prefix_ignore_case(uri, "urn:uuid:") {
                    self.uuid = self.uuid.or_else(|| Uuid::parse_str(hex).ok());
                } else if strip_prefix_ignore_case(uri, "urn:publicid:").is_some()
                    && self.urn.is_none()
                {
                    match Urn::parse(uri) {
                        Ok(urn) => self.urn = Some(urn),
                        Err(e) => self.urn_problem = self.urn_problem.take().or(Some(e)),
                    }
                }
            } else if let Some(email) = name.email() {
                self.emails.push(email.to_owned());
            } else if let Some(dns) = name.dnsname() {
                self.dns_names.push(dns.to_owned());
            } else if let Some(ip) = name.ipaddress().and_then(ip_from_bytes) {
                self.ip_addresses.push(ip);
            }
        }
    }

    /// The OpenSSL certificate.
    pub fn x509(&self) -> &X509 {
        &self.x509
    }

    /// The subject distinguished name on one line (`CN=…, O=…`), for messages.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// The issuer distinguished name on one line.
    pub fn issuer(&self) -> String {
        name_line(self.x509.issuer_name())
    }

    /// The GENI URN from the subjectAltName, if present and well-formed.
    pub fn urn(&self) -> Option<&Urn> {
        self.urn.as_ref()
    }

    /// The GENI URN, or why there is none.
    pub fn require_urn(&self) -> Result<&Urn, CertError> {
        match (&self.urn, &self.urn_problem) {
            (Some(urn), _) => Ok(urn),
            (None, Some(problem)) => Err(CertError::BadUrn {
                subject: self.subject.clone(),
                source: problem.clone(),
            }),
            (None, None) => Err(CertError::NoUrn {
                subject: self.subject.clone(),
            }),
        }
    }

    /// A short name for messages: the URN if any, else the subject DN.
    pub fn display_name(&self) -> String {
        self.urn
            .as_ref()
            .map_or_else(|| self.subject.clone(), Urn::to_string)
    }

    /// The UUID from a `urn:uuid:` subjectAltName URI.
    pub fn uuid(&self) -> Option<Uuid> {
        self.uuid
    }

    /// The first `rfc822Name` (contact e-mail).
    pub fn email(&self) -> Option<&str> {
        self.emails.first().map(String::as_str)
    }

    /// Every `rfc822Name` in the subjectAltName.
    pub fn emails(&self) -> &[String] {
        &self.emails
    }

    /// Every URI in the subjectAltName, in order.
    pub fn uris(&self) -> &[String] {
        &self.uris
    }

    /// Every `dNSName` in the subjectAltName.
    pub fn dns_names(&self) -> &[String] {
        &self.dns_names
    }

    /// Every `iPAddress` in the subjectAltName.
    pub fn ip_addresses(&self) -> &[IpAddr] {
        &self.ip_addresses
    }

    /// Whether basicConstraints says `CA:TRUE`.
    pub fn is_ca(&self) -> bool {
        self.is_ca
    }

    /// Start of the validity window.
    pub fn not_before(&self) -> DateTime<Utc> {
        self.not_before
    }

    /// End of the validity window.
    pub fn not_after(&self) -> DateTime<Utc> {
        self.not_after
    }

    /// Whether `at` lies inside the validity window.
    pub fn is_valid_at(&self, at: DateTime<Utc>) -> bool {
        self.not_before <= at && at <= self.not_after
    }

    /// Signature and key algorithms.
    pub fn algorithms(&self) -> &Algorithms {
        &self.algorithms
    }

    /// Legacy features found (empty for a modern certificate).
    pub fn legacy(&self) -> &[LegacyFeature] {
        &self.legacy
    }

    /// Whether the certificate is issued by itself (subject = issuer and its own key verifies it).
    pub fn is_self_signed(&self) -> bool {
        self.x509.issued(&self.x509) == openssl::x509::X509VerifyResult::OK
            && self
                .x509
                .public_key()
                .and_then(|key| self.x509.verify(&key))
                .unwrap_or(false)
    }

    /// The DER encoding.
    pub fn to_der(&self) -> Vec<u8> {
        self.x509.to_der().unwrap_or_default()
    }

    /// The PEM encoding (one `CERTIFICATE` block).
    pub fn to_pem(&self) -> String {
        pem::to_pem_block(&self.to_der())
    }

    /// Whether both are the very same certificate (same DER bytes).
    pub fn same_cert(&self, other: &GeniCert) -> bool {
        self.x509.as_ref() == other.x509.as_ref()
    }

    /// The ABAC key id: lowercase hex SHA-1 of the subject public key
    /// (the Subject Key Identifier when present, as gcf reads it).
    pub fn key_id(&self) -> String {
        if let Some(ski) = self.x509.subject_key_id() {
            return hex::encode(ski.as_slice());
        }
        public_key_sha1(&self.x509)
            .map(hex::encode)
            .unwrap_or_default()
    }
}

/// Parses every certificate of a PEM text (leaf first), or a single DER certificate.
pub fn parse_chain(input: &[u8]) -> Result<Vec<GeniCert>, CertError> {
    parse_chain_limited(input, MAX_CHAIN_LEN)
}

/// [`parse_chain`] with a custom limit on the number of certificates.
pub(crate) fn parse_chain_limited(
    input: &[u8],
    max_certs: usize,
) -> Result<Vec<GeniCert>, CertError> {
    check_size(input.len())?;
    if input.first() == Some(&0x30) {
        return Ok(vec![der_at(input, 0)?]);
    }
    let text = String::from_utf8_lossy(input);
    pem::certificate_blocks(&text, max_certs)?
        .iter()
        .enumerate()
        .map(|(index, der)| der_at(der, index))
        .collect()
}

/// Writes certificates as one PEM text, in order.
pub fn chain_to_pem(chain: &[GeniCert]) -> String {
    chain.iter().map(GeniCert::to_pem).collect()
}

fn check_size(len: usize) -> Result<(), CertError> {
    if len > MAX_CERT_INPUT {
        return Err(CertError::TooLarge {
            len,
            max: MAX_CERT_INPUT,
        });
    }
    Ok(())
}

fn der_at(der: &[u8], index: usize) -> Result<GeniCert, CertError> {
    let x509 = X509::from_der(der).map_err(|e| CertError::BadDer {
        index,
        reason: e.to_string(),
    })?;
    GeniCert::from_x509(x509)
}

/// An IPv4 or IPv6 address from its 4 or 16 network-order bytes.
fn ip_from_bytes(bytes: &[u8]) -> Option<IpAddr> {
    match bytes.len() {
        4 => <[u8; 4]>::try_from(bytes).ok().map(IpAddr::from),
        16 => <[u8; 16]>::try_from(bytes).ok().map(IpAddr::from),
        _ => None,
    }
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// Renders a distinguished name as `CN=…, O=…` for messages.
fn name_line(name: &X509NameRef) -> String {
    let parts: Vec<String> = name
        .entries()
        .map(|entry| {
            let key = entry.object().nid().short_name().unwrap_or("?");
            let value = entry.data().to_string().unwrap_or_else(|_| "?".to_owned());
            format!("{key}={value}")
        })
        .collect();
    if parts.is_empty() {
        "(empty subject)".to_owned()
    } else {
        parts.join(", ")
    }
}

/// Converts an ASN.1 time to UTC.
fn to_utc(time: &Asn1TimeRef) -> Result<DateTime<Utc>, openssl::error::ErrorStack> {
    let epoch = Asn1Time::from_unix(0)?;
    let diff = epoch.diff(time)?;
    let seconds = i64::from(diff.days) * 86_400 + i64::from(diff.secs);
    Ok(DateTime::from_timestamp(seconds, 0).unwrap_or(DateTime::<Utc>::MIN_UTC))
}

/// SHA-1 over the subjectPublicKey BIT STRING contents.
pub(crate) fn public_key_sha1(cert: &X509Ref) -> Option<Vec<u8>> {
    let bits = openssl_glue::public_key_bits(cert)?;
    openssl::hash::hash(MessageDigest::sha1(), bits.as_slice())
        .ok()
        .map(|d| d.to_vec())
}

#[cfg(test)]
mod tests;
