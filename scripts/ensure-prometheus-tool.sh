#!/bin/sh
# Makes one binary of Debian's `prometheus` package available without installing Prometheus:
# `promtool` (the metrics and rules checks) or `prometheus` (the server the alert and dashboard
# tests scrape real Baton nodes with). If it is neither on PATH nor already unpacked, download the
# package and extract only that binary into node_modules/.cache/<tool>/. Nothing is installed
# system-wide and no service is set up. Prints the binary's path.
#   sh scripts/ensure-prometheus-tool.sh promtool|prometheus
set -eu

tool="${1:-}"
case "$tool" in
  promtool | prometheus) ;;
  *)
    echo "usage: ensure-prometheus-tool.sh promtool|prometheus" >&2
    exit 2
    ;;
esac

cd "$(dirname "$0")/.."
dest="node_modules/.cache/$tool/$tool"

if command -v "$tool" >/dev/null 2>&1; then
  command -v "$tool"
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
  echo "ensure-prometheus-tool: download failed; refreshing the package lists (apt-get update) and retrying" >&2
  apt-get update >/dev/null
  (cd "$tmp" && apt-get download prometheus >/dev/null)
fi

deb=""
for f in "$tmp"/prometheus_*.deb; do
  [ -f "$f" ] && deb="$f" && break
done
if [ -z "$deb" ]; then
  echo "ensure-prometheus-tool: apt-get download prometheus produced no .deb" >&2
  exit 1
fi
dpkg -x "$deb" "$tmp/root"
mkdir -p "$(dirname "$dest")"
cp "$tmp/root/usr/bin/$tool" "$dest.partial"
chmod 755 "$dest.partial"
# Renamed into place, so a second caller never runs a half-copied binary.
mv "$dest.partial" "$dest"
echo "$dest"
