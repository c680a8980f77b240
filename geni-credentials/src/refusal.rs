//! The GENI credential outcomes every refusal in this crate falls into.
//!
//! Each error type of the crate classifies itself with a `kind()` method
//! returning a [`RefusalKind`]; the service maps the kind to a numeric GENI
//! code in one place. This module deliberately knows no numbers.

use std::fmt;

/// Why a caller was refused, in the vocabulary of the GENI AM API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefusalKind {
    /// The credentials are valid but do not grant what the call needs.
    Forbidden,
    /// A credential or certificate is malformed, badly signed or otherwise unusable.
    CredentialInvalid,
    /// A credential or certificate is outside its validity window.
    CredentialExpired,
    /// A credential does not match the caller's certificate or the target slice.
    CredentialMismatch,
    /// A credential or certificate is not signed by a trusted authority.
    CredentialSignerUntrusted,
}

impl RefusalKind {
    /// The GENI label of this outcome (`FORBIDDEN`, `CREDENTIAL_INVALID`, …).
    pub fn label(self) -> &'static str {
        match self {
            RefusalKind::Forbidden => "FORBIDDEN",
            RefusalKind::CredentialInvalid => "CREDENTIAL_INVALID",
            RefusalKind::CredentialExpired => "CREDENTIAL_EXPIRED",
            RefusalKind::CredentialMismatch => "CREDENTIAL_MISMATCH",
            RefusalKind::CredentialSignerUntrusted => "CREDENTIAL_SIGNER_UNTRUSTED",
        }
    }
}

impl fmt::Display for RefusalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_the_geni_names() {
        assert_eq!(RefusalKind::Forbidden.to_string(), "FORBIDDEN");
        assert_eq!(
            RefusalKind::CredentialSignerUntrusted.label(),
            "CREDENTIAL_SIGNER_UNTRUSTED"
        );
        assert_eq!(RefusalKind::CredentialExpired.label(), "CREDENTIAL_EXPIRED");
    }
}
