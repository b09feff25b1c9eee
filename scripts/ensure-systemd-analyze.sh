#!/bin/sh
# Makes `systemd-analyze` available to ops/systemd/unit.test.ts (`systemd-analyze verify` of the
# service unit): if it is not on PATH, install Debian's `systemd` package with apt-get (CI runs as
# root), refreshing the package lists first when the install cannot find it. Installing the
# package starts nothing here (no systemd runs as PID 1 in CI); verify needs no running systemd.
# Prints the systemd-analyze path.
set -eu

if command -v systemd-analyze >/dev/null 2>&1; then
  command -v systemd-analyze
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y --no-install-recommends systemd >/dev/null 2>&1; then
  echo "ensure-systemd-analyze: install failed; refreshing the package lists (apt-get update) and retrying" >&2
  apt-get update >/dev/null
  apt-get install -y --no-install-recommends systemd >/dev/null
fi
if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "ensure-systemd-analyze: apt-get installed systemd but systemd-analyze is not on PATH" >&2
  exit 1
fi
command -v systemd-analyze
