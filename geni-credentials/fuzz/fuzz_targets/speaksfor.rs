//! Fuzz target: speaks-for verification never panics, and a statement
//! that verifies makes its user the caller.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    credentials_fuzz::speaksfor(data);
});
