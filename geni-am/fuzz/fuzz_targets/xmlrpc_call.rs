//! Fuzz target: the XML-RPC request decoder never panics on a request
//! body, and what it decodes re-encodes stably.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| am_fuzz::xmlrpc::xmlrpc_call(data));
