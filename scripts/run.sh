#!/usr/bin/env bash
# Sets up the machine, builds geni-am and runs it in the foreground with a
# development PKI, a SQLite store and the simulated cloud. The first run
# writes dev-pki/ (CA, aggregate and experimenter certificates, slice and
# user credentials, geni-am.toml) and prints how to call the aggregate;
# later runs keep it. Stop with Ctrl-C.
#
# Environment: GENI_AM_DEV_DIR (default dev-pki), GENI_AM_HOST (default
# localhost), GENI_AM_PORT (default 8443).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"

cargo build --release --locked -p geni-am
bin=target/release/geni-am
dir=${GENI_AM_DEV_DIR:-dev-pki}

"$bin" dev init --dir "$dir" --host "${GENI_AM_HOST:-localhost}" --port "${GENI_AM_PORT:-8443}"
echo
exec "$bin" serve --config "$dir/geni-am.toml"
