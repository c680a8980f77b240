#!/usr/bin/env bash
# Builds the Debian package of geni-am (target/debian/geni-am_<version>_<arch>.deb)
# from a release build, with cargo-deb and the metadata in geni-am/Cargo.toml
# ([package.metadata.deb]): /usr/bin/geni-am, /etc/geni-am/geni-am.toml (a
# conffile: deploy/debian/geni-am.toml), the systemd unit
# deploy/geni-am.service, and the maintainer scripts of deploy/debian/.
# deploy/INSTALL.md says what to do with it.
#
# Installs what it needs when missing: the build's Debian packages
# (scripts/setup.sh), dpkg-dev (dpkg-shlibdeps, for the shared-library
# dependencies) and cargo-deb from crates.io, at the version below (Debian
# does not package it). Extra arguments go to cargo-deb (e.g. --output DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
scripts/install-cargo-deb.sh
cargo deb --locked -p geni-am "$@"
