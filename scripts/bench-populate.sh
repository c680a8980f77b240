#!/usr/bin/env bash
# Usage: scripts/bench-populate.sh BINARY PORT SLIVERS [bench arguments…]
# Memory at rest with many slivers (docs/PERFORMANCE.md, "Memory"): a fresh
# configuration from scripts/bench-config.sh in /tmp/bench-populate-PORT
# with both hosts raised to 100,000 VMs and no state file, the aggregate
# started, then `BINARY bench --populate SLIVERS --clients 4` (arguments
# given are added). Prints the server's VmRSS and RssAnon idle, every 30 s
# while populating (with the slivers in the
# store, and the load average), right after, and 20 s and 80 s
# later; stops the server. Stopping the script (SIGTERM/SIGINT) ends the
# populating early and still takes the readings at rest.
set -euo pipefail
B=$1; port=$2; n=$3; shift 3
d=/tmp/bench-populate-$port
c=$("$(dirname "$0")/bench-config.sh" "$B" "$d" "$port")
sed -i 's/^cpus = 1000$/cpus = 100000/; s/^memory_mb = 1048576$/memory_mb = 104857600/; s/^max_vms = 1000$/max_vms = 100000/' "$c"
sed -i '/^state_file = /d' "$c"
sed -i "s/^\[backend.sim\]$/[backend.sim]\ncontrol_subnet = \"10.10.0.0\/15\"/" "$c"
. "$(dirname "$0")/bench-serve.sh"
serve_bench "$B" "$c" "$d"
sleep 15
slivers() { sqlite3 -readonly "$d/geni-am.sqlite" 'SELECT count(*) FROM slivers' 2>/dev/null || echo '?'; }
echo "idle: $(mem); load $(load)"
"$B" bench --config "$c" --populate "$n" --clients 4 --ready-timeout 7200 "$@" >"$d/bench.log" 2>&1 & bench=$!
trap 'kill $bench 2>/dev/null || true' TERM INT
start=$(date +%s)
while kill -0 $bench 2>/dev/null; do
  sleep 30 & wait $! || true
  kill -0 $bench 2>/dev/null || break
  echo "$(( $(date +%s) - start )) s: $(mem); $(slivers) slivers; load $(load)"
done
wait $bench 2>/dev/null || true
trap 'kill $serve 2>/dev/null || true' EXIT
tail -n5 "$d/bench.log"
echo "$(slivers) slivers; right after ($(( $(date +%s) - start )) s): $(mem)"
sleep 20; echo "+20 s: $(mem)"
sleep 60; echo "+80 s: $(mem); load $(load)"
stop_server
