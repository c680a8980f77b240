//! Fuzz target: certificate parsing (PEM chains or DER) never panics, and
//! every accessor of an accepted certificate works.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| credentials_fuzz::cert(data));
