#!/usr/bin/env sh
# The dashboard tests drive Debian's Chromium; install the package when it is missing.
# Never downloads a browser any other way (no `playwright install`).
set -eu
if [ -x /usr/bin/chromium ]; then exit 0; fi
echo "installing Debian's chromium for the dashboard tests..."
if [ "$(id -u)" -ne 0 ]; then
  echo "chromium is missing and this is not root: run 'apt-get install -y chromium' as root" >&2
  exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
