#!/bin/sh
# Makes `promtool` available to the metrics lint test (server/http/metrics-promtool.test.ts) without
# installing Prometheus: if promtool is neither on PATH nor already unpacked, download Debian's
# prometheus package and extract only the promtool binary into node_modules/.cache/promtool/.
# Nothing is installed system-wide and no service is set up. Prints the promtool path.
set -eu

cd "$(dirname "$0")/.."
dest="node_modules/.cache/promtool/promtool"

if command -v promtool >/dev/null 2>&1; then
  command -v promtool
  exit 0
fi
if [ -x "$dest" ]; then
  echo "$dest"
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT INT TERM

# `apt-get download` fetches the .deb into the current directory and installs nothing.
if ! (cd "$tmp" && apt-get download prometheus >/dev/null 2>&1); then
  echo "ensure-promtool: download failed; refreshing the package lists (apt-get update) and retrying" >&2
  apt-get update >/dev/null
  (cd "$tmp" && apt-get download prometheus >/dev/null)
fi

deb=""
for f in "$tmp"/prometheus_*.deb; do
  [ -f "$f" ] && deb="$f" && break
done
if [ -z "$deb" ]; then
  echo "ensure-promtool: apt-get download prometheus produced no .deb" >&2
  exit 1
fi
dpkg -x "$deb" "$tmp/root"
mkdir -p "$(dirname "$dest")"
cp "$tmp/root/usr/bin/promtool" "$dest"
chmod 755 "$dest"
echo "$dest"
