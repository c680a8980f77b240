//! Signature and key algorithms of a certificate, and the legacy features
//! (weak digests, short RSA keys, old X.509 versions) that real GENI
//! federations still use and that are accepted but reported.

use openssl::nid::Nid;
use openssl::pkey::Id;
use openssl::x509::X509Ref;
use std::fmt;

/// RSA keys shorter than this are reported as legacy.
pub const MIN_MODERN_RSA_BITS: u32 = 2048;

/// Something old-fashioned about a certificate that is accepted but worth reporting.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LegacyFeature {
    /// Signed with an MD5 (or older MD2/MD4) digest.
    Md5Signature,
    /// Signed with a SHA-1 digest.
    Sha1Signature,
    /// An RSA key shorter than [`MIN_MODERN_RSA_BITS`].
    ShortRsaKey {
        /// The key length in bits.
        bits: u32,
    },
    /// An X.509 version other than 3 (version 1 certificates have no extensions).
    OldVersion {
        /// The X.509 version (1-based, as people write it).
        version: i32,
    },
}

impl fmt::Display for LegacyFeature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LegacyFeature::Md5Signature => f.write_str("MD5 signature"),
            LegacyFeature::Sha1Signature => f.write_str("SHA-1 signature"),
            LegacyFeature::ShortRsaKey { bits } => write!(f, "{bits}-bit RSA key"),
            LegacyFeature::OldVersion { version } => write!(f, "X.509 version {version}"),
        }
    }
}

/// The algorithms of a certificate, as OpenSSL names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Algorithms {
    /// Signature algorithm, e.g. `sha256WithRSAEncryption`.
    pub signature: String,
    /// Public key algorithm, e.g. `rsaEncryption`.
    pub key: String,
    /// Public key size in bits.
    pub key_bits: u32,
}

/// Reads the algorithms of `cert` and lists its legacy features.
pub(super) fn inspect(
    cert: &X509Ref,
) -> Result<(Algorithms, Vec<LegacyFeature>), openssl::error::ErrorStack> {
    let sig_nid = cert.signature_algorithm().object().nid();
    let key = cert.public_key()?;
    let key_nid = Nid::from_raw(key.id().as_raw());
    let algorithms = Algorithms {
        signature: nid_name(sig_nid),
        key: nid_name(key_nid),
        key_bits: key.bits(),
    };
    let mut legacy = Vec::new();
    let digest = sig_nid.signature_algorithms().map(|algs| algs.digest);
    if matches!(digest, Some(Nid::MD5 | Nid::MD4 | Nid::MD2)) {
        legacy.push(LegacyFeature::Md5Signature);
    } else if digest == Some(Nid::SHA1) {
        legacy.push(LegacyFeature::Sha1Signature);
    }
    if key.id() == Id::RSA && key.bits() < MIN_MODERN_RSA_BITS {
        legacy.push(LegacyFeature::ShortRsaKey { bits: key.bits() });
    }
    let version = cert.version() + 1;
    if version != 3 {
        legacy.push(LegacyFeature::OldVersion { version });
    }
    Ok((algorithms, legacy))
}

/// OpenSSL's long name of an object, or its numeric id when it has none.
fn nid_name(nid: Nid) -> String {
    nid.long_name()
        .map(str::to_owned)
        .unwrap_or_else(|_| format!("nid {}", nid.as_raw()))
}
