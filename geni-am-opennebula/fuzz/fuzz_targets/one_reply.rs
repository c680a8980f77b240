//! Fuzz target: decoding arbitrary bytes as an OpenNebula XML-RPC reply
//! never panics, and a string it yields (an `oned` document) goes through
//! every document parser without panicking either.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| opennebula_fuzz::one::one_reply(data));
