//! The ONE mapping of every failure the API layer meets to a GENI code:
//! credential refusals of the `credentials` crate ([`RefusalKind`]),
//! malformed arguments, and the core's [`AmError`] (already coded).

use crate::geni::{AmError, GeniCode};
use geni_credentials::RefusalKind;

/// The GENI code a credential refusal is answered with.
pub fn refusal_code(kind: RefusalKind) -> GeniCode {
    match kind {
        RefusalKind::Forbidden => GeniCode::Forbidden,
        RefusalKind::CredentialInvalid => GeniCode::CredentialInvalid,
        RefusalKind::CredentialExpired => GeniCode::CredentialExpired,
        RefusalKind::CredentialMismatch => GeniCode::CredentialMismatch,
        RefusalKind::CredentialSignerUntrusted => GeniCode::CredentialSignerUntrusted,
    }
}

/// A credential refusal of `kind`, explained by `message`.
pub fn refused(kind: RefusalKind, message: impl Into<String>) -> AmError {
    AmError::new(refusal_code(kind), message)
}

/// A malformed or missing argument of `method`.
pub fn bad_argument(method: &str, message: impl std::fmt::Display) -> AmError {
    AmError::bad_args(format!("{method}: {message}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_refusal_maps_to_its_registry_code() {
        for (kind, code) in [
            (RefusalKind::Forbidden, 3),
            (RefusalKind::CredentialInvalid, 20),
            (RefusalKind::CredentialExpired, 21),
            (RefusalKind::CredentialMismatch, 22),
            (RefusalKind::CredentialSignerUntrusted, 23),
        ] {
            assert_eq!(refusal_code(kind).as_i32(), code, "{kind}");
            assert_eq!(refusal_code(kind).label(), kind.label());
        }
    }

    #[test]
    fn refusals_and_bad_arguments_keep_their_message() {
        let e = refused(RefusalKind::CredentialMismatch, "target is slice b");
        assert_eq!(e.code, GeniCode::CredentialMismatch);
        assert_eq!(e.message, "target is slice b");
        let e = bad_argument("Renew", "expiration_time is not a time");
        assert_eq!(e.code, GeniCode::BadArgs);
        assert_eq!(e.message, "Renew: expiration_time is not a time");
    }
}
