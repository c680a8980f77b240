//! oned's refusal of a call: the failure reply's message (without the
//! `[method]` prefix the dispatcher adds), error code and `resp_id`, with
//! the codes of the OpenNebula XML-RPC API reference.

/// A refusal: message without the method prefix, code and resp_id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Message text after `[method] `.
    pub message: String,
    /// Error code.
    pub code: i32,
    /// resp_id.
    pub resp_id: i32,
}

impl Refusal {
    /// AUTHENTICATION: the session's user or secret is wrong.
    pub const AUTHENTICATION: i32 = 256;
    /// AUTHORIZATION (quota limits among others).
    pub const AUTHORIZATION: i32 = 512;
    /// NO_EXISTS.
    pub const NO_EXISTS: i32 = 1024;
    /// ACTION: the object is in a state that refuses the call.
    pub const ACTION: i32 = 2048;
    /// XML_RPC_API: a parameter is out of range.
    pub const XML_RPC_API: i32 = 4096;
    /// INTERNAL: the request could not be carried out.
    pub const INTERNAL: i32 = 8192;
    /// ALLOCATE: the object could not be created.
    pub const ALLOCATE: i32 = 16384;

    /// A refusal with `code` and `message` (resp_id -1).
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code,
            resp_id: -1,
        }
    }

    /// NO_EXISTS for `object` `id`.
    pub fn no_such(object: &str, id: i32) -> Self {
        Self {
            message: format!("Error getting {object} [{id}]."),
            code: Self::NO_EXISTS,
            resp_id: id,
        }
    }
}
