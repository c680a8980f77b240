#!/usr/bin/env bash
# Runs every cargo-fuzz target of geni-rspec, geni-credentials, geni-am-opennebula and geni-am for SECONDS
# each (default 60), one after the other, with the target's committed
# seeds (<crate>/fuzz/seeds/<target>/) as an input corpus beside its
# working corpus (<crate>/fuzz/corpus/<target>/, git-ignored). Inputs that
# crash, leak, time out or run out of memory are copied into
# <crate>/fuzz/regressions/<target>/, which geni-am/tests/fuzz_replay.rs replays
# on every `cargo test`: commit them with the fix. Exit status 1 when any
# target failed. Installs cargo-fuzz when missing (cargo-fuzz needs
# nightly features; RUSTC_BOOTSTRAP=1 enables them on the stable toolchain).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]   # all targets, or only those named
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
export RUSTC_BOOTSTRAP=1
seconds=${1:-60}
shift $(($# > 0 ? 1 : 0))
only=("$@")

command -v cargo-fuzz >/dev/null 2>&1 || cargo install --locked cargo-fuzz

failed=()
for crate in geni-rspec geni-credentials geni-am-opennebula geni-am; do
  for target in $(cd "$crate" && cargo fuzz list); do
    if [ ${#only[@]} -gt 0 ] && [[ " ${only[*]} " != *" $target "* ]]; then
      continue
    fi
    mkdir -p "$crate/fuzz/corpus/$target"
    echo "fuzz: $crate/$target for ${seconds}s"
    if ! (cd "$crate" && cargo fuzz run "$target" "fuzz/corpus/$target" "fuzz/seeds/$target" \
      -- -max_total_time="$seconds" -print_final_stats=1); then
      failed+=("$crate/$target")
    fi
    for artifact in "$crate/fuzz/artifacts/$target"/{crash,leak,timeout,oom}-*; do
      [ -f "$artifact" ] || continue
      mkdir -p "$crate/fuzz/regressions/$target"
      cp "$artifact" "$crate/fuzz/regressions/$target/"
      echo "fuzz: kept $crate/fuzz/regressions/$target/$(basename "$artifact")"
    done
  done
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failures in ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: no failure"
