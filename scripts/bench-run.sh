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
d=/tmp/bench-run-$port
c=$("$(dirname "$0")/bench-config.sh" "$B" "$d" "$port")
RUST_LOG=warn "$B" serve --config "$c" 2>"$d/serve.log" & serve=$!
trap 'kill $serve 2>/dev/null || true' EXIT
until "$B" bench --config "$c" --getversion --clients 1 --calls 1 >/dev/null 2>&1; do
  kill -0 $serve || exit 1; sleep 0.2
done
sleep 2
tck=$(getconf CLK_TCK)
cpu() { awk -v t="$tck" '{print ($14 + $15) / t}' /proc/$serve/stat; }
rss() { awk '/VmRSS/{print $2 / 1024 " MB"}' /proc/$serve/status; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); RSS idle: $(rss)"
c0=$(cpu)
"$B" bench --config "$c" "${args[@]}"
c1=$(cpu)
echo "server CPU during bench: $(awk -v a="$c0" -v b="$c1" 'BEGIN{print b - a}') s; RSS after: $(rss); load after: $(cut -d' ' -f1-3 /proc/loadavg)"
kill $serve; wait $serve 2>/dev/null || true
