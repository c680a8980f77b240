//! The one XML-RPC codec of geni-am, on `dxr`: decoding a request or
//! reply body (hostile input: size and depth limits, no DTDs or entities,
//! a precise message for every malformed envelope), lenient accessors for
//! the loosely typed values real clients send (the GENI AM API, "Data
//! types": be lenient on input), and encoding of calls, responses and
//! faults, written straight into the answer's text; responses never carry the types clients choke on (`nil`, `i8`,
//! `dateTime.iso8601`, `base64`). The AM API server and the OpenNebula
//! client both speak through it.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod access;
mod decode;
mod encode;

pub use access::{as_bool, as_int, as_str, as_struct, as_xmlrpc_datetime, member};
pub use decode::{DecodeError, MAX_DEPTH, decode_call, decode_response};
pub use encode::encode_call;
pub use encode::{EncodeError, encode_fault, encode_response};

/// An XML-RPC value and fault (re-exported from `dxr`, so callers need no direct dependency).
pub use dxr::{Fault, Value};

/// The answer to one call: a value, or an XML-RPC fault (malformed call,
/// unknown method); GENI errors are values.
pub type Reply = Result<Value, Fault>;

/// One decoded XML-RPC method call.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The `methodName`, as sent.
    pub method: String,
    /// The parameters, in order (possibly none).
    pub params: Vec<Value>,
}

/// XML-RPC fault codes of the interoperability convention
/// (specs.xmlrpc.com "Specification for Fault Code Interoperability").
pub mod fault_code {
    /// The body is not well-formed XML.
    pub const PARSE_ERROR: i32 = -32700;
    /// The body is XML but not a valid XML-RPC `methodCall`.
    pub const INVALID_REQUEST: i32 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// Wrong number or type of parameters.
    pub const INVALID_PARAMS: i32 = -32602;
    /// The server failed to produce an answer.
    pub const INTERNAL_ERROR: i32 = -32603;
    /// The request was refused before it was decoded (path, size, time,
    /// encoding, connection limits).
    pub const TRANSPORT_ERROR: i32 = -32300;
}
