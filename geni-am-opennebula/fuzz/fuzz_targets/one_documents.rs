//! Fuzz target: arbitrary bytes, read as text the way a decoded reply
//! string is, go through every `oned` document parser without panicking.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| opennebula_fuzz::one::one_documents(data));
