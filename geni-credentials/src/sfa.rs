//! SFA credentials (`geni_sfa` versions 2 and 3, and bare XML strings from
//! old clients): reading the credential chain (`model`), binding each
//! signature to the credential element it covers (`binding`), the
//! delegation and authority rules (`rules`), the verification entry
//! point ([`verify()`]) and how credentials arrive on the wire ([`wire`]).
//! Every refusal is one [`SfaError`] whose [`SfaError::kind`] maps to a
//! GENI code.

mod binding;
mod model;
mod rules;
pub mod time;
mod verify;
pub mod wire;

pub(crate) use binding::signed_elements;
pub use verify::{ChainLink, Request, VerifiedCredential, verify};

use crate::cert::CertError;
use crate::privilege::MissingPrivilege;
use crate::refusal::RefusalKind;
use crate::trust::TrustError;
use crate::xmldsig::{DsigError, XmlError};
use chrono::{DateTime, Utc};

/// Why a credential was refused: one precise reason.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SfaError {
    /// The document was refused before its content was read.
    #[error(transparent)]
    Document(#[from] XmlError),
    /// The credential does not have the SFA shape.
    #[error("line {line}: {message}")]
    Malformed {
        /// Line of the offending element.
        line: u32,
        /// What is wrong.
        message: String,
    },
    /// A signature covers something other than the credentials that are
    /// read, or the signatures do not line up with the chain.
    #[error("signature wrapping refused at line {line}: {message}")]
    Wrapping {
        /// Line of the offending element.
        line: u32,
        /// What is wrong.
        message: String,
    },
    /// A credential of the chain is not signed.
    #[error("credential {credential:?} at line {line} has no signature")]
    MissingSignature {
        /// The credential's ID.
        credential: String,
        /// Its line.
        line: u32,
    },
    /// A signature does not verify.
    #[error("signature of credential {credential:?}: {source}")]
    Signature {
        /// The credential's ID (empty when not yet known).
        credential: String,
        /// Why.
        source: DsigError,
    },
    /// An owner or target certificate cannot be read.
    #[error("line {line}: <{field}>: {source}")]
    Gid {
        /// Line of the GID element.
        line: u32,
        /// `owner_gid` or `target_gid`.
        field: String,
        /// Why.
        source: Box<CertError>,
    },
    /// The credential is not of type `privilege`.
    #[error(
        "credential {credential:?} is of type {kind:?}; only \"privilege\" credentials authorise calls"
    )]
    NotPrivilege {
        /// The credential's ID.
        credential: String,
        /// The type found.
        kind: String,
    },
    /// A credential of the chain has expired.
    #[error("credential {credential:?} expired at {expires} (checked at {at})")]
    Expired {
        /// The credential's ID.
        credential: String,
        /// Its expiry.
        expires: DateTime<Utc>,
        /// The time of the check.
        at: DateTime<Utc>,
    },
    /// A certificate (owner, target or signer) is not trusted.
    #[error("{role} certificate of credential {credential:?}: {source}")]
    Untrusted {
        /// The credential's ID.
        credential: String,
        /// `owner`, `target` or `signer`.
        role: &'static str,
        /// Why.
        source: Box<TrustError>,
    },
    /// The root credential's signer is not an authority over its target.
    #[error(
        "root credential {credential:?} is signed by {signer}, which is not an authority for {target}"
    )]
    RootNotAuthority {
        /// The credential's ID.
        credential: String,
        /// The signer's URN (or subject).
        signer: String,
        /// The target URN.
        target: String,
    },
    /// A delegation link breaks a rule.
    #[error("delegation of credential {credential:?}: {message}")]
    Delegation {
        /// The delegated (child) credential's ID.
        credential: String,
        /// Which rule is broken.
        message: String,
    },
    /// The credential's owner is not the caller.
    #[error("credential is owned by {owner}, but the caller is {caller}")]
    OwnerNotCaller {
        /// The owner URN.
        owner: String,
        /// The caller URN.
        caller: String,
    },
    /// The credential's target is not the object of the call.
    #[error("credential targets {target}, but the call is about {expected}")]
    TargetMismatch {
        /// The credential's target URN.
        target: String,
        /// The URN the call is about.
        expected: String,
    },
    /// The credential does not grant the privilege the call needs.
    #[error(transparent)]
    PrivilegeMissing(MissingPrivilege),
}

impl SfaError {
    /// The GENI outcome of this refusal.
    pub fn kind(&self) -> RefusalKind {
        match self {
            SfaError::Expired { .. } => RefusalKind::CredentialExpired,
            SfaError::Untrusted { source, .. } => source.kind(),
            SfaError::RootNotAuthority { .. } => RefusalKind::CredentialSignerUntrusted,
            SfaError::OwnerNotCaller { .. } | SfaError::TargetMismatch { .. } => {
                RefusalKind::CredentialMismatch
            }
            SfaError::PrivilegeMissing(_) => RefusalKind::Forbidden,
            SfaError::Document(_)
            | SfaError::Malformed { .. }
            | SfaError::Wrapping { .. }
            | SfaError::MissingSignature { .. }
            | SfaError::Signature { .. }
            | SfaError::Gid { .. }
            | SfaError::NotPrivilege { .. }
            | SfaError::Delegation { .. } => RefusalKind::CredentialInvalid,
        }
    }
}
