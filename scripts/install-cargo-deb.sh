#!/usr/bin/env bash
# Installs what building the Debian package needs, when missing: dpkg-dev
# (dpkg-shlibdeps computes the shared-library dependencies) and cargo-deb
# from crates.io at a pinned version (Debian does not package it).
set -euo pipefail
export PATH="$HOME/.cargo/bin:$PATH"
CARGO_DEB_VERSION=3.8.0

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
if ! command -v dpkg-shlibdeps >/dev/null 2>&1; then
  echo "package: installing dpkg-dev"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq dpkg-dev
fi
if [ "$(cargo deb --version 2>/dev/null)" != "cargo-deb $CARGO_DEB_VERSION" ]; then
  echo "package: installing cargo-deb $CARGO_DEB_VERSION"
  cargo install --locked cargo-deb --version "$CARGO_DEB_VERSION"
fi
