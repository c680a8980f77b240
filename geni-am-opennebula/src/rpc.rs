//! The OpenNebula XML-RPC protocol as the driver sees it: a call is a method
//! name and its parameters after the session; the answer is element `[1]` of
//! a successful reply array, or an [`RpcError`] that says which of the two
//! error channels (a `[false, …]` reply or an XML-RPC fault) or the
//! transport failed, classified for retry decisions (the
//! OpenNebula XML-RPC API reference: return values and error codes).
//!
//! [`wire`] encodes calls and reads replies, [`session`] holds the
//! validated `user:secret`, [`client`] is the [`OneRpc`] of a real oned.

pub mod client;
pub mod session;
pub mod wire;

pub use client::{ClientError, ClientSettings, OneClient, is_repeatable};
pub use session::{Session, SessionError};

/// One parameter of a call, after the session (which the client adds as
/// parameter #0). OpenNebula enforces the XML-RPC types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Param {
    /// `<string>`.
    Str(String),
    /// `<int>` (32-bit; ids, filters, flags).
    Int(i32),
    /// `<boolean>`.
    Bool(bool),
}

/// Element `[1]` of a successful reply: its type depends on the method
/// (XML documents and versions are strings, ids are ints, a few methods
/// answer a boolean or an `<i8>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// `<string>`, e.g. an XML document or a version.
    Str(String),
    /// `<int>`, `<i4>` or `<i8>`, e.g. a new object id.
    Int(i64),
    /// `<boolean>`.
    Bool(bool),
}

/// The error code of a `[false, message, code, …]` reply (the OpenNebula XML-RPC
/// API reference, error codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// 0x100: the session was refused.
    Authentication,
    /// 0x200: not allowed; also quota exhaustion and restricted attributes.
    Authorization,
    /// 0x400: the object does not exist.
    NoExists,
    /// 0x800: the action is not possible in the object's state.
    Action,
    /// 0x1000: a bad argument value (XML_RPC_API, RPC_API in 7.2+).
    RpcApi,
    /// 0x2000: template parse errors, database and HA trouble.
    Internal,
    /// 0x4000: the object cannot be allocated as written.
    Allocate,
    /// 0x8000 (5.6+): the object is locked.
    Locked,
    /// 0x10000 (5.10+): the HA log could not be replicated.
    Replication,
    /// A code this table does not know.
    Other(i64),
}

/// Why a call did not produce an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RpcError {
    /// oned answered `[false, message, code, resp_id (, replication_idx)]`.
    #[error("OpenNebula refused {method}: {message}")]
    Refused {
        /// The method called.
        method: String,
        /// The error code (element `[2]`).
        code: ErrorCode,
        /// oned's message (element `[1]`), with its `[method]` prefix.
        message: String,
        /// The object that caused the error (element `[3]`), if not `-1`.
        object: Option<i64>,
    },
    /// An XML-RPC fault: wrong parameter type or count (-501), unknown
    /// method (-506), malformed call (-503). A programming error, never retried.
    #[error("OpenNebula fault {code} on {method}: {message}")]
    Fault {
        /// The method called.
        method: String,
        /// `faultCode`.
        code: i64,
        /// `faultString`.
        message: String,
    },
    /// No usable reply: connection refused or reset, timeout, an HTTP
    /// status other than 200, or a body that is not an XML-RPC response.
    #[error("OpenNebula unreachable on {method}: {detail}")]
    Transport {
        /// The method called.
        method: String,
        /// What went wrong, for the operator.
        detail: String,
    },
}

/// A connection to one oned: every call the driver makes goes through it.
/// The production implementation is the HTTP client of this module; the
/// driver's unit tests replay recorded replies through it.
pub trait OneRpc: Send + Sync {
    /// Calls `method` (e.g. `one.vm.info`) with the session and `params`,
    /// and returns element `[1]` of the successful reply.
    fn call(&self, method: &str, params: &[Param]) -> Result<Answer, RpcError>;
}

impl ErrorCode {
    /// The code of element `[2]` of a failure reply.
    pub fn from_code(code: i64) -> ErrorCode {
        match code {
            0x100 => ErrorCode::Authentication,
            0x200 => ErrorCode::Authorization,
            0x400 => ErrorCode::NoExists,
            0x800 => ErrorCode::Action,
            0x1000 => ErrorCode::RpcApi,
            0x2000 => ErrorCode::Internal,
            0x4000 => ErrorCode::Allocate,
            0x8000 => ErrorCode::Locked,
            0x10000 => ErrorCode::Replication,
            other => ErrorCode::Other(other),
        }
    }
}

/// Texts of INTERNAL errors a highly available zone gives while it has no
/// leader or cannot replicate; the call can be tried again (OpenNebula's high-availability guide).
const HA_TEXTS: [&str; 5] = [
    "election mode",
    "no leader found",
    "replicating log",
    "zone disabled",
    "Cannot process request",
];

impl RpcError {
    /// Whether the same call may succeed if tried again later: transport
    /// trouble, a locked object, HA elections and replication.
    /// Faults, bad arguments, parse errors and refusals are not retried.
    pub fn is_retryable(&self) -> bool {
        match self {
            RpcError::Transport { .. } => true,
            RpcError::Fault { .. } => false,
            RpcError::Refused { code, message, .. } => match code {
                ErrorCode::Locked | ErrorCode::Replication => true,
                ErrorCode::Internal => HA_TEXTS.iter().any(|text| message.contains(text)),
                _ => false,
            },
        }
    }

    /// Whether oned refused for lack of quota or capacity: an AUTHORIZATION
    /// error whose text names a quota, or an ALLOCATE error that ran
    /// out of leases or memory.
    pub fn is_capacity(&self) -> bool {
        match self {
            RpcError::Refused {
                code: ErrorCode::Authorization,
                message,
                ..
            } => message.contains("quota"),
            RpcError::Refused {
                code: ErrorCode::Allocate,
                message,
                ..
            } => message.contains("Cannot get IP/MAC lease") || message.contains("enough capacity"),
            _ => false,
        }
    }

    /// Whether the object the call named does not exist (any more).
    pub fn is_no_exists(&self) -> bool {
        matches!(
            self,
            RpcError::Refused {
                code: ErrorCode::NoExists,
                ..
            }
        )
    }
}

impl From<RpcError> for geni_am_backend::BackendError {
    /// The generic classification; callers that know which object a
    /// NO_EXISTS refers to map it to [`geni_am_backend::BackendError::NotFound`] themselves.
    fn from(err: RpcError) -> Self {
        use geni_am_backend::BackendError;
        if err.is_capacity() {
            BackendError::Capacity(err.to_string())
        } else if matches!(err, RpcError::Transport { .. }) {
            BackendError::Unreachable(err.to_string())
        } else if err.is_retryable() {
            BackendError::Transient(err.to_string())
        } else {
            BackendError::Permanent(err.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use geni_am_backend::{BackendError, ErrorClass};

    fn refused(code: i64, message: &str) -> RpcError {
        RpcError::Refused {
            method: "one.template.instantiate".into(),
            code: ErrorCode::from_code(code),
            message: message.into(),
            object: None,
        }
    }

    #[test]
    fn quota_refusals_are_capacity_not_permission() {
        let quota = refused(
            512,
            "[one.template.instantiate] User [2] : user [2] limit of 1 reached for RUNNING_VMS quota in VM.",
        );
        assert_eq!(BackendError::from(quota).class(), ErrorClass::Capacity);
        let denied = refused(
            512,
            "[one.template.instantiate] User [5] : User Template includes a restricted attribute NIC/MAC.",
        );
        assert_eq!(BackendError::from(denied).class(), ErrorClass::Permanent);
        let lease = refused(
            16384,
            "[one.template.instantiate] Error allocating a new virtual machine template. Cannot get IP/MAC lease from virtual network 0.",
        );
        assert_eq!(BackendError::from(lease).class(), ErrorClass::Capacity);
    }

    #[test]
    fn only_transient_trouble_is_retried() {
        let transport = RpcError::Transport {
            method: "one.vm.info".into(),
            detail: "connection refused".into(),
        };
        assert!(transport.is_retryable());
        assert!(BackendError::from(transport).is_unreachable());
        let locked = refused(0x8000, "The resource virtual machine is locked. [3].");
        assert!(locked.is_retryable());
        assert!(
            !BackendError::from(locked).is_unreachable(),
            "oned answered"
        );
        assert!(
            refused(
                8192,
                "Cannot process request, oned cluster in election mode"
            )
            .is_retryable()
        );
        assert!(!refused(8192, "Parse error: XML Template malformed.").is_retryable());
        assert!(!refused(2048, "Could not terminate VM 42, wrong state PROLOG.").is_retryable());
        let fault = RpcError::Fault {
            method: "one.vm.info".into(),
            code: -501,
            message: "Parameter that is supposed to be integer is not".into(),
        };
        assert!(!fault.is_retryable());
        assert_eq!(BackendError::from(fault).class(), ErrorClass::Permanent);
        assert!(refused(1024, "[one.vm.info] Error getting virtual machine [99].").is_no_exists());
        assert_eq!(ErrorCode::from_code(0x20000), ErrorCode::Other(0x20000));
    }
}
