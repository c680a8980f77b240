#!/usr/bin/env bash
# Sets up the machine and runs every check and test of geni-am: formatting,
# clippy with warnings as errors, and the whole workspace's tests (unit,
# corpus, property and end-to-end suites; benches run once as tests), the
# end-to-end suites on SQLite and on PostgreSQL, and the geni-lib interop
# test in a Python virtual environment; Debian's chromium (installed when
# missing) renders the operator dashboard; the Debian package (built from the
# debug binary with cargo-deb, installed when missing), its systemd unit
# and the Prometheus alert rules.
#
# PostgreSQL: when DATABASE_URL is not set, a local server is installed
# (Debian's postgresql) and started when missing, and a role for the
# current user is created; DATABASE_URL then points at it. Suites create
# and drop one database per test on that server. GENI_AM_REQUIRE_ALL=1
# makes a suite fail rather than skip an optional half (PostgreSQL,
# geni-lib, xmlsec1, chromium, cargo-deb, systemd-analyze, promtool).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

# The packaging suite (tests/tests/package.rs): cargo-deb and dpkg-dev build
# the .deb, systemd-analyze (Debian's systemd) checks the unit, promtool
# (Debian's prometheus) checks the alert rules.
scripts/install-cargo-deb.sh
tools=()
command -v systemd-analyze >/dev/null 2>&1 || tools+=(systemd)
command -v promtool >/dev/null 2>&1 || tools+=(prometheus)
if [ ${#tools[@]} -gt 0 ]; then
  echo "test: installing ${tools[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${tools[@]}"
fi

# Runs a command as the postgres superuser.
as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then su postgres -c "$*"; else sudo -u postgres sh -c "$*"; fi
}

start_postgres() {
  if ! command -v pg_ctlcluster >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    echo "test: installing PostgreSQL"
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq postgresql
  fi
  if ! pg_isready -q -h localhost 2>/dev/null; then
    echo "test: starting PostgreSQL"
    local version
    version=$(ls /usr/lib/postgresql | sort -V | tail -1)
    if ! pg_lsclusters -h 2>/dev/null | grep -q .; then
      "${sudo_cmd[@]}" pg_createcluster "$version" main
    fi
    cluster=$(pg_lsclusters -h | head -1 | awk '{print $1" "$2}')
    # shellcheck disable=SC2086
    "${sudo_cmd[@]}" pg_ctlcluster $cluster start
    for _ in $(seq 1 30); do pg_isready -q -h localhost && break; sleep 1; done
  fi
  local me
  me=$(id -un)
  if ! as_postgres "psql -Atc \"select 1 from pg_roles where rolname='$me'\"" | grep -q 1; then
    as_postgres "psql -qc \"create role \\\"$me\\\" login superuser password 'geni-am-test'\""
  fi
  export DATABASE_URL="postgres://$me:geni-am-test@localhost/postgres"
}

if [ -z "${DATABASE_URL:-}" ]; then
  start_postgres
fi
export GENI_AM_REQUIRE_ALL=1
echo "test: PostgreSQL at ${DATABASE_URL%%\?*}" | sed 's#://[^@]*@#://***@#'

# Headless Chromium renders the operator dashboard in its end-to-end test.
if ! command -v chromium >/dev/null 2>&1; then
  echo "test: installing Chromium"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq chromium
fi

# geni-lib (with six, which it imports without declaring) in a venv.
venv=target/genilib-venv
if [ ! -x "$venv/bin/python" ]; then
  if ! python3 -m venv "$venv" 2>/dev/null; then
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq python3-venv
    python3 -m venv "$venv"
  fi
fi
"$venv/bin/python" -c 'import geni.minigcf.amapi3, six, pytest' 2>/dev/null ||
  "$venv/bin/pip" install -q geni-lib six pytest
export GENI_AM_PYTHON="$PWD/$venv/bin/python"

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo build --workspace --locked --bins
export GENI_AM_BIN="$PWD/target/debug/geni-am"
cargo test --workspace --all-targets --locked
