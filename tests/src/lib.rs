//! Helpers shared by the end-to-end suites in `tests/tests/`: locating the
//! built `geni-am` binary and the shared corpus beside the checkout.

use std::path::PathBuf;

/// The `geni-am` binary built by cargo for this workspace.
pub fn geni_am_bin() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"));
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    target.join(profile).join("geni-am")
}

/// The root of this workspace.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests crate sits inside the workspace")
        .to_path_buf()
}

/// The shared corpus (`../shared/corpus` beside the checkout, or
/// `GENI_CORPUS` when set).
pub fn corpus_dir() -> PathBuf {
    std::env::var_os("GENI_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("../shared/corpus"))
}
