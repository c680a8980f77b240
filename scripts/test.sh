#!/usr/bin/env bash
# Sets up the machine and runs every check and test of geni-am: formatting,
# clippy with warnings as errors, and the whole workspace's tests (unit,
# corpus, property and end-to-end suites; benches run once as tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo build --workspace --locked --bins
cargo test --workspace --all-targets --locked
