//! Fuzz target: a request RSpec taken the way Allocate takes it
//! (validation, tree, nodes of this aggregate, manifest) never panics.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rspec_fuzz::request(data));
