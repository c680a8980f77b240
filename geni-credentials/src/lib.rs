//! Identity and authorisation for a GENI aggregate manager.
//!
//! This crate decides who the caller is and what the presented credentials
//! let that caller do; it knows nothing of RSpecs, HTTP or the store:
//!
//! * `urn` — GENI URNs (`urn:publicid:IDN+<authority>+<type>+<name>`).
//! * `cert` — GENI X.509 certificates (URN, UUID, e-mail, authority flag).
//! * `trust` — trust roots and chain building.
//! * `sfa` — signed SFA credentials: parsing, in-process XML-DSig
//!   verification bound to the element that is read, delegation checks.
//! * `speaksfor` — ABAC speaks-for credentials and `geni_speaking_for`.
//! * `privilege` — which AM API method needs which privilege.
//! * `sign` / `devca` — signing credentials and a development CA.
//! * `refusal` — the GENI outcome every refusal is classified as.

pub mod cert;
pub mod devca;
mod parse_cache;
pub mod privilege;
pub mod refusal;
pub mod sfa;
pub mod sign;
pub mod speaksfor;
pub mod trust;
pub mod urn;
pub mod xmldsig;

/// The shared corpus of real GENI data, for tests.
#[cfg(test)]
pub(crate) fn corpus() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
}
