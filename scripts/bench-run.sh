#!/usr/bin/env bash
# Usage: scripts/bench-run.sh BINARY PORT [bench arguments…]
# One measured load run (docs/PERFORMANCE.md, "Service load"): a fresh
# configuration from scripts/bench-config.sh in /tmp/bench-run-PORT, the
# aggregate started and answering one GetVersion, then `BINARY bench` with
# the arguments given (default: --clients 100 --lifecycles 5
# --ready-timeout 120). Prints the bench's report, the server's CPU seconds
# during it (utime + stime from /proc), its resident size idle and after,
# and the load average before and after; stops the server.
set -euo pipefail
B=$1; port=$2; shift 2
args=("$@"); [ ${#args[@]} -gt 0 ] || args=(--clients 100 --lifecycles 5 --ready-timeout 120)
. "$(dirname "$0")/bench-serve.sh"
serve_fresh "$B" "$port"
sleep 2
tck=$(getconf CLK_TCK)
cpu() { awk -v t="$tck" '{print ($14 + $15) / t}' /proc/$serve/stat; }
echo "load before: $(load); idle: $(mem)"
c0=$(cpu)
"$B" bench --config "$c" "${args[@]}"
c1=$(cpu)
echo "server CPU during bench: $(awk -v a="$c0" -v b="$c1" 'BEGIN{print b - a}') s; after: $(mem); load after: $(load)"
stop_server
