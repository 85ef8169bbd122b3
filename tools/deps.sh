#!/bin/sh
# deps.sh: install the Debian packages braid builds against, if missing.
# Called by make before the first build; safe to run again.
set -e
PKGS="gcc make libopenblas-pthread-dev liblapacke-dev libcjson-dev python3"
[ -n "$BRAID_EXTRA_PKGS" ] && PKGS="$PKGS $BRAID_EXTRA_PKGS"
missing=""
for p in $PKGS; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing$missing"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || true
$SUDO apt-get install -y -qq $missing
