#!/usr/bin/env bash
# Usage: scripts/bench-after-load.sh BINARY PORT [bench arguments…]
# Memory after a load (docs/PERFORMANCE.md, "Memory"): a fresh
# configuration from scripts/bench-config.sh in /tmp/bench-run-PORT, the
# aggregate started, its VmRSS and RssAnon 15 s after start (idle), then
# `BINARY bench` with the arguments given (default: --clients 100
# --lifecycles 3 --ready-timeout 120), and the readings right after, 20 s
# and 80 s later, with the load average; stops the server.
set -euo pipefail
B=$1; port=$2; shift 2
args=("$@"); [ ${#args[@]} -gt 0 ] || args=(--clients 100 --lifecycles 3 --ready-timeout 120)
d=/tmp/bench-run-$port
c=$("$(dirname "$0")/bench-config.sh" "$B" "$d" "$port")
RUST_LOG=warn "$B" serve --config "$c" 2>"$d/serve.log" & serve=$!
trap 'kill $serve 2>/dev/null || true' EXIT
sleep 15
mem() { awk '/VmRSS/{r=$2} /RssAnon/{a=$2} END{printf "RSS %.1f MB (anonymous %.1f)", r / 1024, a / 1024}' /proc/$serve/status; }
echo "idle: $(mem); load $(cut -d' ' -f1-3 /proc/loadavg)"
"$B" bench --config "$c" "${args[@]}"
echo "right after: $(mem)"
sleep 20; echo "+20 s: $(mem)"
sleep 60; echo "+80 s: $(mem); load $(cut -d' ' -f1-3 /proc/loadavg)"
kill $serve; wait $serve 2>/dev/null || true
