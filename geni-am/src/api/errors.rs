//! The ONE mapping of every failure the API layer meets to a GENI code
//! (GENI AM API v3, "Return Codes"): credential refusals of the
//! `credentials` crate ([`RefusalKind`]), malformed arguments, and the
//! core's [`CoreError`]s.

use crate::core::CoreError;
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

/// The GENI code a core failure is answered with.
pub fn core_code(error: &CoreError) -> GeniCode {
    match error {
        CoreError::EmptyRequest
        | CoreError::InvalidRspec(_)
        | CoreError::TemplateRefused(_)
        | CoreError::BadRequest { .. }
        | CoreError::NoNodeForAggregate { .. }
        | CoreError::BadUrn(_)
        | CoreError::MissingOption(_) => GeniCode::BadArgs,
        CoreError::UnsupportedRspec(_) => GeniCode::BadVersion,
        CoreError::NodeExists { .. } | CoreError::SliceExists { .. } => GeniCode::AlreadyExists,
        CoreError::TooManySlivers { .. } => GeniCode::TooBig,
        CoreError::NoCapacity(_) => GeniCode::InsufficientNodes,
        CoreError::UnknownSlice { .. }
        | CoreError::UnknownSliver { .. }
        | CoreError::NoSuchSliver { .. }
        | CoreError::NoSuchSlice { .. } => GeniCode::SearchFailed,
        CoreError::ShutDown { .. } => GeniCode::Forbidden,
        CoreError::CredentialExpired { .. } => GeniCode::Expired,
        CoreError::ExpiryPassed { .. } | CoreError::ExpiryTooLate { .. } => GeniCode::OutOfRange,
        CoreError::NothingAllocated { .. } | CoreError::Draining { .. } => GeniCode::Unavailable,
        CoreError::NotAllocated { .. } => GeniCode::Refused,
        CoreError::UnknownAction { .. }
        | CoreError::ActionNeedsProvisioned { .. }
        | CoreError::ActionNotInState { .. } => GeniCode::Unsupported,
        CoreError::Busy(_) => GeniCode::Busy,
        CoreError::Store(_) => GeniCode::DbError,
        CoreError::Internal(_) => GeniCode::Error,
    }
}

impl From<CoreError> for AmError {
    /// The core failure's code ([`core_code`]) and its text as the message.
    fn from(error: CoreError) -> Self {
        AmError::new(core_code(&error), error.to_string())
    }
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
    fn core_failures_are_answered_with_their_code_and_text() {
        for (error, code) in [
            (CoreError::EmptyRequest, GeniCode::BadArgs),
            (
                CoreError::bad_request(7, "no such image"),
                GeniCode::BadArgs,
            ),
            (
                CoreError::UnsupportedRspec("ns".into()),
                GeniCode::BadVersion,
            ),
            (
                CoreError::NoCapacity("full".into()),
                GeniCode::InsufficientNodes,
            ),
            (
                CoreError::UnknownSlice { slice: "s".into() },
                GeniCode::SearchFailed,
            ),
            (CoreError::MissingOption("geni_users"), GeniCode::BadArgs),
            (CoreError::Internal("damaged".into()), GeniCode::Error),
        ] {
            let text = error.to_string();
            let answered = AmError::from(error);
            assert_eq!(answered.code, code, "{text}");
            assert_eq!(answered.message, text);
        }
        let bad = AmError::from(CoreError::bad_request(7, "no such image"));
        assert_eq!(bad.message, "line 7: no such image");
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
