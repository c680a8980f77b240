//! Fuzz target: parsing and validating a TOML configuration never panics,
//! run against a directory holding the files the example configuration
//! names (made once per run under the system's temporary directory).

#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

fn base() -> &'static PathBuf {
    static BASE: OnceLock<PathBuf> = OnceLock::new();
    BASE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("geni-am-fuzz-config-{}", std::process::id()));
        am_fuzz::config::write_base(&dir).expect("the configuration base directory");
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    am_fuzz::config::config(data, base());
});
