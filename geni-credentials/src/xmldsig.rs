//! In-process XML-DSig for GENI credentials, built on libxml2 (parsing and
//! C14N) and OpenSSL (digests and RSA): a hardened document view ([`dom`]),
//! canonicalization of one element in document context ([`c14n`]), the
//! accepted algorithms ([`algorithm`]) and the `Signature` profile with its
//! verification ([`signature`]).
//!
//! This module proves only "these bytes were signed by the key of this
//! certificate, and the signature covers exactly this element"; whether the
//! certificate is trusted and what the element means is decided by `sfa`.

pub mod algorithm;
pub mod c14n;
pub mod dom;
pub mod signature;

pub use algorithm::{C14nMethod, DigestMethod, SignatureMethod};
pub use dom::{Document, Node, XmlError};
pub use signature::{Signature, VerifiedSignature};

/// Why a signature was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DsigError {
    /// The document itself was refused.
    #[error(transparent)]
    Xml(#[from] XmlError),
    /// The signature does not have the expected shape.
    #[error("<{element}> at line {line} {message}")]
    Structure {
        /// Line of the offending element.
        line: u32,
        /// The offending element.
        element: String,
        /// What is wrong with it.
        message: String,
    },
    /// An algorithm outside the accepted set.
    #[error("unsupported {what} {uri:?} at line {line}")]
    UnsupportedAlgorithm {
        /// Line of the element naming it.
        line: u32,
        /// Which kind of algorithm.
        what: &'static str,
        /// The URI found.
        uri: String,
    },
    /// The reference is not a same-document `#id` reference.
    #[error("reference URI {uri:?} at line {line} is not a same-document \"#id\" reference")]
    ReferenceUri {
        /// Line of the `Reference`.
        line: u32,
        /// The URI found.
        uri: String,
    },
    /// No element carries the referenced ID.
    #[error("reference at line {line} points at ID {id:?}, which no element carries")]
    UnknownId {
        /// Line of the `Reference`.
        line: u32,
        /// The ID.
        id: String,
    },
    /// The referenced element changed after signing.
    #[error(
        "digest of the element with ID {id:?} does not match the signed digest (reference at line {line}): the element was altered after signing"
    )]
    DigestMismatch {
        /// Line of the `Reference`.
        line: u32,
        /// The ID.
        id: String,
    },
    /// No attached certificate's key verifies the signature value.
    #[error(
        "signature value of <Signature> at line {line} does not verify with any attached certificate's key"
    )]
    BadSignatureValue {
        /// Line of the `Signature`.
        line: u32,
    },
    /// An attached certificate is not valid DER.
    #[error("certificate at line {line} cannot be read: {reason}")]
    Certificate {
        /// Line of the `X509Certificate`.
        line: u32,
        /// OpenSSL's reason.
        reason: String,
    },
    /// Base64 text that does not decode.
    #[error("<{element}> at line {line} is not valid base64")]
    Base64 {
        /// Line of the element.
        line: u32,
        /// The element.
        element: String,
    },
    /// OpenSSL failed internally.
    #[error("cryptographic library failure")]
    Crypto,
}
