#!/usr/bin/env bash
# Usage: scripts/bench-config.sh BINARY DIR PORT
# Writes a fresh `geni-am dev init` configuration into DIR (emptied first)
# for load runs (docs/PERFORMANCE.md, "Service load"): SQLite, the simulated
# cloud at zero delays, and room for a hundred clients in one slice: both
# hosts at cpus = 1000, memory_mb = 1048576, max_vms = 1000,
# [aggregate] max_slivers_per_slice = 1000 and
# [server] max_connections_per_client = 256 (the bench's connections all
# carry one certificate). The API listens on PORT, the operator endpoint on
# PORT + 1000. With BENCH_STORE_URL set (e.g. postgres://postgres@127.0.0.1/bench,
# a database of its own, which the caller empties before each run) the store
# is that database instead of SQLite. Prints the configuration's path.
set -euo pipefail
B=$1; d=$2; port=$3
rm -rf "$d"
"$B" dev init --dir "$d" --host 127.0.0.1 --port "$port" --operator-port $((port + 1000)) >/dev/null
c=$d/geni-am.toml
sed -i 's/^boot_delay_ms = .*/boot_delay_ms = 0\ncreate_delay_ms = 0\nstop_delay_ms = 0/' "$c"
sed -i 's/^cpus = 8$/cpus = 1000/; s/^memory_mb = 16384$/memory_mb = 1048576/; s/^max_vms = 4$/max_vms = 1000/' "$c"
sed -i 's/^\[aggregate\]$/[aggregate]\nmax_slivers_per_slice = 1000/' "$c"
sed -i 's/^\[server\]$/[server]\nmax_connections_per_client = 256/' "$c"
if [ -n "${BENCH_STORE_URL:-}" ]; then
  # awk takes the URL as it is; sed would read & and | in it as its own syntax.
  awk '/^\[/ { store = ($0 == "[store]") }
       store && /^url = / { $0 = "url = \"" ENVIRON["BENCH_STORE_URL"] "\""; done = 1 }
       { print }
       END { exit !done }' "$c" > "$c.new" || { echo "bench-config.sh: no [store] url in $c" >&2; exit 1; }
  mv "$c.new" "$c"
fi
echo "$c"
