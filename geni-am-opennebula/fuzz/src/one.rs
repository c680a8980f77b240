//! The OpenNebula targets: an XML-RPC reply from `oned`, and the
//! documents its string answers carry.

use super::oned::parse_with_every_parser;
use geni_am_opennebula::rpc::Answer;
use geni_am_opennebula::rpc::client::DEFAULT_RESPONSE_LIMIT;
use geni_am_opennebula::rpc::wire::decode_response;

/// `one_reply`: decoding `data` as an OpenNebula XML-RPC reply never
/// panics, and a string it yields (an `oned` document) goes through every
/// document parser.
pub fn one_reply(data: &[u8]) {
    if let Ok(Answer::Str(document)) = decode_response("one.fuzz", data, DEFAULT_RESPONSE_LIMIT) {
        parse_with_every_parser(&document);
    }
}

/// `one_documents`: `data`, read as text the way a decoded reply string
/// is, goes through every document parser.
pub fn one_documents(data: &[u8]) {
    parse_with_every_parser(&String::from_utf8_lossy(data));
}
