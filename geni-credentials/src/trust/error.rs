//! Why a certificate chain was not trusted, each reason naming the
//! certificate concerned and classified as a GENI credential outcome.

use crate::cert::CertError;
use crate::refusal::RefusalKind;
use chrono::{DateTime, Utc};

/// Why a trust store could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrustLoadError {
    /// The directory or a file in it could not be read.
    #[error("cannot read trust roots at {path}: {source}")]
    Io {
        /// The path concerned.
        path: String,
        /// The operating system error.
        source: std::io::Error,
    },
    /// A root file holds something that is not a certificate.
    #[error("trust root file {path}: {source}")]
    BadRoot {
        /// The file concerned.
        path: String,
        /// What is wrong with it.
        source: CertError,
    },
    /// No certificate at all was found.
    #[error("no trust root certificates found in {path}")]
    Empty {
        /// The directory or file.
        path: String,
    },
}

/// Why a certificate chain is not trusted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrustError {
    /// A certificate of the chain (or the root) has expired.
    #[error("certificate {subject} (depth {depth}) expired at {not_after} (checked at {at})")]
    Expired {
        /// The certificate (URN or subject DN).
        subject: String,
        /// Position in the chain, 0 = leaf.
        depth: usize,
        /// End of its validity.
        not_after: DateTime<Utc>,
        /// The time of the check.
        at: DateTime<Utc>,
    },
    /// A certificate of the chain is not valid yet.
    #[error(
        "certificate {subject} (depth {depth}) is not valid before {not_before} (checked at {at})"
    )]
    NotYetValid {
        /// The certificate (URN or subject DN).
        subject: String,
        /// Position in the chain, 0 = leaf.
        depth: usize,
        /// Start of its validity.
        not_before: DateTime<Utc>,
        /// The time of the check.
        at: DateTime<Utc>,
    },
    /// The chain does not end at a configured trust root.
    #[error(
        "certificate {subject} does not chain to a trusted root: no trusted issuer for {issuer}"
    )]
    UntrustedRoot {
        /// The last certificate that could be placed in the chain.
        subject: String,
        /// The issuer that is missing from the trust roots.
        issuer: String,
    },
    /// A certificate that signs others is not a CA.
    #[error(
        "certificate {subject} (depth {depth}) signs other certificates but is not a CA (basicConstraints CA:TRUE missing)"
    )]
    NotACa {
        /// The offending issuer.
        subject: String,
        /// Its position in the chain.
        depth: usize,
    },
    /// A signature in the chain does not verify.
    #[error(
        "signature on certificate {subject} (depth {depth}) does not verify with its issuer's key"
    )]
    BadSignature {
        /// The certificate whose signature is bad.
        subject: String,
        /// Its position in the chain.
        depth: usize,
    },
    /// A signer has no `authority` URN.
    #[error(
        "certificate {signer} signs {subject} but has no authority URN (urn:publicid:IDN+<authority>+authority+<name>)"
    )]
    SignerNotAuthority {
        /// The signer.
        signer: String,
        /// The signed certificate.
        subject: String,
    },
    /// A signer's authority does not cover the subject's namespace.
    #[error(
        "certificate {signer} is not an authority for {subject}: its namespace {signer_hrn:?} does not cover {subject_hrn:?}"
    )]
    NamespaceViolation {
        /// The signer URN.
        signer: String,
        /// The subject URN.
        subject: String,
        /// HRN of the signer.
        signer_hrn: String,
        /// HRN of the subject.
        subject_hrn: String,
    },
    /// A certificate in the chain has no usable GENI URN.
    #[error(transparent)]
    Certificate(#[from] CertError),
    /// OpenSSL refused the chain for another reason.
    #[error("certificate {subject} (depth {depth}) rejected: {reason}")]
    Rejected {
        /// The certificate concerned.
        subject: String,
        /// Its position in the chain.
        depth: usize,
        /// OpenSSL's reason.
        reason: String,
    },
    /// OpenSSL failed internally.
    #[error("certificate verification failed inside OpenSSL: {0}")]
    OpenSsl(#[from] openssl::error::ErrorStack),
}

impl TrustError {
    /// The GENI outcome of presenting such a chain.
    pub fn kind(&self) -> RefusalKind {
        match self {
            TrustError::Expired { .. } => RefusalKind::CredentialExpired,
            TrustError::UntrustedRoot { .. }
            | TrustError::NotACa { .. }
            | TrustError::SignerNotAuthority { .. }
            | TrustError::NamespaceViolation { .. } => RefusalKind::CredentialSignerUntrusted,
            TrustError::NotYetValid { .. }
            | TrustError::BadSignature { .. }
            | TrustError::Certificate(_)
            | TrustError::Rejected { .. }
            | TrustError::OpenSsl(_) => RefusalKind::CredentialInvalid,
        }
    }
}
