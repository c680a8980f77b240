//! Fuzz target: decoding arbitrary bytes as an OpenNebula XML-RPC reply
//! never panics, and a string it yields (an `oned` document) goes through
//! every document parser without panicking either.

#![no_main]

use am::backend::opennebula::rpc::Answer;
use am::backend::opennebula::rpc::client::DEFAULT_RESPONSE_LIMIT;
use am::backend::opennebula::rpc::wire::decode_response;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(Answer::Str(document)) = decode_response("one.fuzz", data, DEFAULT_RESPONSE_LIMIT) {
        am_fuzz_documents::parse_with_every_parser(&document);
    }
});
