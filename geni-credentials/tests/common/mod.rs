//! Helpers shared by the integration tests: where the corpus is, walking
//! it, and the one decision whether an optional half may be skipped.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The shared corpus of real GENI data, beside the workspace.
pub fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
}

/// Every file under `dir`, recursively, sorted.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A prerequisite of an optional half of a test is missing (`what` says
/// which): with `GENI_AM_REQUIRE_ALL=1` (as `scripts/test.sh` sets) the
/// test fails; otherwise a loud notice says the half did not run, and the
/// caller skips it.
pub fn missing_prerequisite(what: &str) {
    assert!(
        std::env::var("GENI_AM_REQUIRE_ALL").as_deref() != Ok("1"),
        "GENI_AM_REQUIRE_ALL=1 but {what}"
    );
    eprintln!("\n*** {what}: this part of the test did NOT run ***\n");
}
