#!/usr/bin/env sh
# The coordination tests (server/coordination) run a three-member etcd cluster on loopback
# (server/testing/etcd-cluster.ts) from Debian's etcd-server package; install it when `etcd` is
# missing, as ensure-chromium.sh does for Chromium. Installs the package only: no service is
# started (the tests start their own members). Prints the binary's path.
set -eu
if command -v etcd >/dev/null 2>&1; then
  command -v etcd
  exit 0
fi
echo "installing Debian's etcd-server for the coordination tests..." >&2
if [ "$(id -u)" -ne 0 ]; then
  echo "etcd is missing and this is not root: run 'apt-get install -y etcd-server' as root" >&2
  exit 1
fi
apt-get update -qq
# policy-rc.d keeps the package's service from being started (101: action forbidden).
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null
command -v etcd
