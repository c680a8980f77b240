//! Fuzz target: URN parsing never panics; an accepted URN formats back to
//! exactly its input, re-parses to the same parts, and its public id, HRN
//! and name rule can be computed.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| credentials_fuzz::urn(data));
