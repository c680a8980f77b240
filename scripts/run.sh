#!/usr/bin/env bash
# Sets up the machine, builds geni-am and runs it. Until the service lands this
# shows the RSpec tools at work: it validates a request and prints the manifest
# this aggregate would answer with.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"

cargo build --release --locked -p am
bin=target/release/geni-am
"$bin" --help
