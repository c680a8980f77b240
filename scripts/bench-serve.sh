# Sourced by scripts/bench-run.sh, bench-after-load.sh and
# bench-populate.sh: the aggregate of a scripts/bench-config.sh
# configuration started for a measured run, and readings of its process.

# serve_bench BINARY CONFIG DIR: starts `BINARY serve --config CONFIG`
# (its log in DIR/serve.log; its pid in $serve, killed when the script
# exits) and returns once it has answered a GetVersion.
serve_bench() {
  RUST_LOG=warn "$1" serve --config "$2" 2>"$3/serve.log" & serve=$!
  trap 'kill $serve 2>/dev/null || true' EXIT
  until "$1" bench --config "$2" --getversion --clients 1 --calls 1 >/dev/null 2>&1; do
    kill -0 $serve || exit 1; sleep 0.2
  done
}

# serve_fresh BINARY PORT: a fresh scripts/bench-config.sh configuration
# in /tmp/bench-run-PORT (the directory in $d, the file in $c), served as
# serve_bench serves it.
serve_fresh() {
  d=/tmp/bench-run-$2
  c=$("$(dirname "${BASH_SOURCE[0]}")/bench-config.sh" "$1" "$d" "$2")
  serve_bench "$1" "$c" "$d"
}

# The server's resident and anonymous resident size.
mem() { awk '/VmRSS/{r=$2} /RssAnon/{a=$2} END{printf "RSS %.1f MB (anonymous %.1f)", r / 1024, a / 1024}' /proc/$serve/status; }

# The load average over 1, 5 and 15 minutes.
load() { cut -d' ' -f1-3 /proc/loadavg; }

# Stops the server and waits for it.
stop_server() { kill $serve; wait $serve 2>/dev/null || true; }
