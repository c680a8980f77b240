#!/usr/bin/env bash
# Usage: scripts/bench-after-load.sh BINARY PORT [bench arguments…]
# Memory after a load (docs/PERFORMANCE.md, "Memory"): a fresh
# configuration from scripts/bench-config.sh in /tmp/bench-run-PORT, the
# aggregate started, its VmRSS and RssAnon 15 s after it answered (idle), then
# `BINARY bench` with the arguments given (default: --clients 100
# --lifecycles 3 --ready-timeout 120), and the readings right after, 20 s
# and 80 s later, with the load average; stops the server.
set -euo pipefail
B=$1; port=$2; shift 2
args=("$@"); [ ${#args[@]} -gt 0 ] || args=(--clients 100 --lifecycles 3 --ready-timeout 120)
. "$(dirname "$0")/bench-serve.sh"
serve_fresh "$B" "$port"
sleep 15
echo "idle: $(mem); load $(load)"
"$B" bench --config "$c" "${args[@]}"
echo "right after: $(mem)"
sleep 20; echo "+20 s: $(mem)"
sleep 60; echo "+80 s: $(mem); load $(load)"
stop_server
