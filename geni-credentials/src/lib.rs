#![doc = include_str!("../README.md")]
//!
//! ## Surface
//!
//! * identities: [`Urn`] (`urn:publicid:IDN+<authority>+<type>+<name>`),
//!   [`GeniCert`] (GENI X.509 certificates: URN, UUID, e-mail, authority
//!   flag) and [`parse_chain`];
//! * trust: [`TrustStore`] (trust roots and chain building) and
//!   [`VerifiedChain`];
//! * [`handshake`] — client chains in a TLS server's handshakes, verified
//!   against a shared [`TrustStore`], accepted verdicts cached;
//! * [`key_methods`] — certificate keys read without OpenSSL 3.0's
//!   provider decoders;
//! * [`sfa`] — signed SFA credentials: parsing, in-process XML-DSig
//!   verification bound to the element that is read, delegation checks
//!   ([`sfa::verify`], [`sfa::VerifiedCredential`]);
//! * [`speaksfor`] — ABAC speaks-for credentials and `geni_speaking_for`;
//! * [`privilege`] — which AM API method needs which privilege;
//! * [`xmldsig`] — the XML-DSig profile GENI credentials are signed with;
//! * [`RefusalKind`] — the GENI outcome every refusal is classified as;
//! * with the `dev` feature, `sign` (signing credentials) and `devca` (a
//!   development certificate authority).
//!
//! The crate has no `unsafe` code but for one module of OpenSSL glue (calls
//! the `openssl` crate does not wrap); XML goes through geni-xml.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod cache;
mod cert;
#[cfg(feature = "dev")]
pub mod devca;
pub mod handshake;
pub mod key_methods;
mod openssl_glue;
mod parse_cache;
pub mod privilege;
mod refusal;
pub mod sfa;
#[cfg(feature = "dev")]
pub mod sign;
pub mod speaksfor;
mod trust;
mod urn;
pub mod xmldsig;

pub use cache::{BoundedCache, DEFAULT_CAPACITY};
pub use cert::{
    Algorithms as CertAlgorithms, CertError, GeniCert, LegacyFeature, MAX_CERT_INPUT,
    MAX_CHAIN_LEN, MIN_MODERN_RSA_BITS, chain_to_pem, parse_chain,
};
pub use refusal::RefusalKind;
pub use trust::{PresentedChain, TrustError, TrustLoadError, TrustStore, VerifiedChain};
pub use urn::{Urn, UrnError, UrnType, publicid_to_urn, urn_to_publicid};

/// The shared corpus of real GENI data, for tests.
#[cfg(test)]
pub(crate) fn corpus() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
}
