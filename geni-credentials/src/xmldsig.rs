//! In-process XML-DSig for GENI credentials, built on geni-xml (the
//! hardened parse, C14N and node identity) and OpenSSL (digests and RSA):
//! the credential profile of the parse ([`Document`]), canonicalization of
//! one element in document context, the accepted algorithms
//! ([`C14nMethod`], [`DigestMethod`], [`SignatureMethod`]) and the
//! `Signature` profile with its verification ([`Signature`]).
//!
//! This module proves only "these bytes were signed by the key of this
//! certificate, and the signature covers exactly this element"; whether the
//! certificate is trusted and what the element means is decided by `sfa`.

mod algorithm;
mod c14n;
mod document;
mod signature;

#[cfg(feature = "dev")]
pub(crate) use algorithm::ENVELOPED;
pub use algorithm::{C14nMethod, DSIG_NS, DigestMethod, SignatureMethod};
#[cfg(feature = "dev")]
pub(crate) use c14n::canonicalize;
pub use document::{Document, MAX_DEPTH, MAX_DOCUMENT_BYTES};
pub use geni_xml::{Node, XmlError};
pub use signature::{Signature, VerifiedSignature, key_verifies};

/// Why a signature was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
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
