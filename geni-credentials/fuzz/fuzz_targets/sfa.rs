//! Fuzz target: SFA credential verification (signatures, chain, rules,
//! roots) never panics, and what verifies belongs to the call.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    credentials_fuzz::sfa(data);
});
