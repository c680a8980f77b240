#!/usr/bin/env bash
# Installs what building and testing geni-am needs on a Debian machine, only
# when it is missing: the C libraries behind the -sys crates (libxml2 with
# libclang for its bindings, OpenSSL, SQLite, libpq), the xmlsec1 and xmllint
# command lines the interop tests compare against, and a Rust toolchain.
set -euo pipefail

packages=(
  build-essential pkg-config
  libxml2-dev libxml2-utils libclang-dev
  libssl-dev openssl
  libsqlite3-dev libpq-dev
  xmlsec1
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
  [ -x "$HOME/.cargo/bin/cargo" ] || {
    echo "setup: no Rust toolchain; installing Debian's cargo"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cargo rustc
  }
fi
