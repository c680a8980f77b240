//! GENI return codes (GENI AM API v3, "Return Codes") and the API's
//! envelope error: the ONE place codes are defined.
//!
//! An [`AmError`] is what a call is answered with when it fails: a code
//! plus a message a person can act on, which the API layer puts into the
//! `code`/`output` members of the GENI envelope. Which code a failure gets
//! is decided in `api::errors`; the core reports failures as data
//! (`core::CoreError`).

use std::fmt;

/// Every `geni_code` of the registry (GENI AM API v3, "Return Codes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GeniCode {
    /// 0: success.
    Success,
    /// 1: malformed or missing required argument/option.
    BadArgs,
    /// 2: other/internal error.
    Error,
    /// 3: credentials don't grant the needed privilege; slice shut down.
    Forbidden,
    /// 4: unsupported RSpec type/version.
    BadVersion,
    /// 5: server error.
    ServerError,
    /// 6: request too big.
    TooBig,
    /// 7: operation refused.
    Refused,
    /// 8: operation timed out.
    TimedOut,
    /// 9: database error.
    DbError,
    /// 10: RPC error.
    RpcError,
    /// 11: unavailable (e.g. server lockdown).
    Unavailable,
    /// 12: search failed (unknown slice/sliver).
    SearchFailed,
    /// 13: operation unsupported.
    Unsupported,
    /// 14: busy, retry later.
    Busy,
    /// 15: expired.
    Expired,
    /// 16: in progress.
    InProgress,
    /// 17: already exists.
    AlreadyExists,
    /// 18: required argument(s) missing.
    MissingArgs,
    /// 19: argument (e.g. expiration) out of range.
    OutOfRange,
    /// 20: supplied credential invalid.
    CredentialInvalid,
    /// 21: supplied credential expired.
    CredentialExpired,
    /// 22: credential doesn't match the client certificate or slice.
    CredentialMismatch,
    /// 23: credential not signed by a trusted authority.
    CredentialSignerUntrusted,
    /// 24: requested VLAN tag(s) unavailable.
    VlanUnavailable,
    /// 25: requested link capacity unavailable.
    InsufficientBandwidth,
    /// 26: not enough nodes.
    InsufficientNodes,
    /// -32001: server temporarily too busy.
    ServerBusy,
}

impl GeniCode {
    /// Every code, in registry order.
    pub const ALL: [GeniCode; 28] = [
        Self::Success,
        Self::BadArgs,
        Self::Error,
        Self::Forbidden,
        Self::BadVersion,
        Self::ServerError,
        Self::TooBig,
        Self::Refused,
        Self::TimedOut,
        Self::DbError,
        Self::RpcError,
        Self::Unavailable,
        Self::SearchFailed,
        Self::Unsupported,
        Self::Busy,
        Self::Expired,
        Self::InProgress,
        Self::AlreadyExists,
        Self::MissingArgs,
        Self::OutOfRange,
        Self::CredentialInvalid,
        Self::CredentialExpired,
        Self::CredentialMismatch,
        Self::CredentialSignerUntrusted,
        Self::VlanUnavailable,
        Self::InsufficientBandwidth,
        Self::InsufficientNodes,
        Self::ServerBusy,
    ];

    /// The integer sent as `geni_code`.
    pub fn as_i32(self) -> i32 {
        match self {
            Self::ServerBusy => -32001,
            // The registry is dense from 0 to 26 in declaration order.
            other => other as i32,
        }
    }

    /// The registry label, e.g. `SEARCHFAILED`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Success => "SUCCESS",
            Self::BadArgs => "BADARGS",
            Self::Error => "ERROR",
            Self::Forbidden => "FORBIDDEN",
            Self::BadVersion => "BADVERSION",
            Self::ServerError => "SERVERERROR",
            Self::TooBig => "TOOBIG",
            Self::Refused => "REFUSED",
            Self::TimedOut => "TIMEDOUT",
            Self::DbError => "DBERROR",
            Self::RpcError => "RPCERROR",
            Self::Unavailable => "UNAVAILABLE",
            Self::SearchFailed => "SEARCHFAILED",
            Self::Unsupported => "UNSUPPORTED",
            Self::Busy => "BUSY",
            Self::Expired => "EXPIRED",
            Self::InProgress => "INPROGRESS",
            Self::AlreadyExists => "ALREADYEXISTS",
            Self::MissingArgs => "MISSINGARGS",
            Self::OutOfRange => "OUTOFRANGE",
            Self::CredentialInvalid => "CREDENTIAL_INVALID",
            Self::CredentialExpired => "CREDENTIAL_EXPIRED",
            Self::CredentialMismatch => "CREDENTIAL_MISMATCH",
            Self::CredentialSignerUntrusted => "CREDENTIAL_SIGNER_UNTRUSTED",
            Self::VlanUnavailable => "VLAN_UNAVAILABLE",
            Self::InsufficientBandwidth => "INSUFFICIENT_BANDWIDTH",
            Self::InsufficientNodes => "INSUFFICIENT_NODES",
            Self::ServerBusy => "SERVERBUSY",
        }
    }

    /// The code whose integer is `value`, if it is in the registry.
    pub fn from_i32(value: i32) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_i32() == value)
    }
}

impl fmt::Display for GeniCode {
    /// `LABEL (n)`, e.g. `SEARCHFAILED (12)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.label(), self.as_i32())
    }
}

/// A failed call: the GENI code to answer with and a message for the
/// experimenter (sent as `output`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct AmError {
    /// The code.
    pub code: GeniCode,
    /// What went wrong, for a person.
    pub message: String,
}

/// Defines one `AmError` constructor per code.
macro_rules! constructors {
    ($($(#[$meta:meta])* $name:ident => $code:ident),* $(,)?) => {
        impl AmError {
            $(
                $(#[$meta])*
                pub fn $name(message: impl Into<String>) -> Self {
                    Self::new(GeniCode::$code, message)
                }
            )*
        }
    };
}

constructors! {
    /// BADARGS (1): a malformed or missing argument.
    bad_args => BadArgs,
    /// ERROR (2): an internal error.
    error => Error,
    /// BADVERSION (4): an RSpec type or version the AM does not speak.
    bad_version => BadVersion,
    /// SEARCHFAILED (12): unknown slice or sliver.
    search_failed => SearchFailed,
}

impl AmError {
    /// An error with any code.
    pub fn new(code: GeniCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_the_registry_numbers() {
        let numbers: Vec<i32> = GeniCode::ALL.iter().map(|c| c.as_i32()).collect();
        let mut expected: Vec<i32> = (0..=26).collect();
        expected.push(-32001);
        assert_eq!(numbers, expected);
        assert_eq!(GeniCode::SearchFailed.as_i32(), 12);
        assert_eq!(GeniCode::OutOfRange.as_i32(), 19);
        assert_eq!(GeniCode::InsufficientNodes.as_i32(), 26);
    }

    #[test]
    fn every_code_round_trips_through_its_number() {
        for code in GeniCode::ALL {
            assert_eq!(GeniCode::from_i32(code.as_i32()), Some(code));
        }
        assert_eq!(GeniCode::from_i32(27), None);
    }

    #[test]
    fn labels_are_the_registry_labels() {
        assert_eq!(GeniCode::BadArgs.label(), "BADARGS");
        assert_eq!(
            GeniCode::CredentialSignerUntrusted.label(),
            "CREDENTIAL_SIGNER_UNTRUSTED"
        );
        assert_eq!(GeniCode::Unsupported.to_string(), "UNSUPPORTED (13)");
    }

    #[test]
    fn constructors_set_code_and_message() {
        let e = AmError::search_failed("no sliver x");
        assert_eq!(e.code, GeniCode::SearchFailed);
        assert_eq!(e.to_string(), "SEARCHFAILED (12): no sliver x");
        assert_eq!(AmError::bad_version("v9").code, GeniCode::BadVersion);
    }
}
