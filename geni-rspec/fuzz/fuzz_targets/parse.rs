//! Fuzz target: parsing arbitrary bytes never panics, and whatever parses
//! serializes back to exactly the input, re-parses, and can be navigated.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rspec_fuzz::parse(data));
