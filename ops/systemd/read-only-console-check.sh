#!/bin/sh
# By hand, as root: does `baton serve` with the dashboard work when its install dir and
# node_modules are read-only, as ProtectSystem=strict makes them under baton.service? Not in
# `npm test`: it needs the dashboard's build (made after the Vitest stage) and a mount namespace.
#
#   sh ops/systemd/read-only-console-check.sh /opt/baton      (a checkout with .next built)
#
# In a private mount namespace (unshare -m) it bind-mounts the install dir and its node_modules
# read-only, starts a one-node cluster with a writable state dir in /tmp, fetches the dashboard,
# the API and the probes, stops it with SIGTERM, and prints every log line that mentions a write
# refused. Exits 1 if a page did not answer 200, a write was refused, or the stop was not clean.
set -eu
install="$(realpath "${1:?usage: read-only-console-check.sh <install dir with .next built>}")"
[ -f "$install/.next/BUILD_ID" ] || { echo "no dashboard build in $install/.next: run npm run build there" >&2; exit 2; }
modules="$(realpath "$install/node_modules")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT INT TERM
ports="$(node -e '
const net = require("node:net");
const servers = [];
const take = () => new Promise((ok) => { const s = net.createServer(); s.listen(0, "127.0.0.1", () => { servers.push(s); ok(s.address().port); }); });
(async () => { const p = [await take(), await take(), await take(), await take()]; servers.forEach((s) => s.close()); console.log(p.join(" ")); })();')"
set -- $ports
printf '{"peers":[{"id":"a","host":"127.0.0.1","lockPort":%s,"sessionPort":%s,"peerPort":%s,"httpPort":%s}]}\n' "$1" "$2" "$3" "$4" > "$work/cluster.json"
http="$4"
mkdir "$work/state"
unshare -m sh -eu -c '
  install="$1"; modules="$2"; work="$3"; http="$4"
  mount --bind "$install" "$install" && mount -o remount,bind,ro "$install"
  mount --bind "$modules" "$modules" && mount -o remount,bind,ro "$modules"
  cd "$work/state"
  BATON_ADMIN_TOKEN=read-only-console-check-0123456789 NODE_ENV=production NEXT_TELEMETRY_DISABLED=1 \
    node "$install/bin/baton" serve --config "$work/cluster.json" --node a --data-dir "$work/state" >"$work/out" 2>"$work/err" &
  pid=$!
  i=0
  until grep -q "baton serving" "$work/out" 2>/dev/null; do
    i=$((i + 1)); [ "$i" -le 240 ] || { cat "$work/err"; exit 1; }; sleep 0.25
  done
  # /readyz is 503 while the node discovers its peers (1.5 peer timeouts) before it promotes.
  i=0
  until [ "$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$http/readyz")" = 200 ]; do
    i=$((i + 1)); [ "$i" -le 40 ] || break; sleep 0.25
  done
  bad=0
  for path in / /api/v1/locks /api/v1/cluster /healthz /readyz /metrics; do
    code="$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$http$path")"
    echo "GET $path $code"
    [ "$code" = 200 ] || bad=1
  done
  kill -TERM "$pid"
  status=0; wait "$pid" || status=$?
  echo "exit on SIGTERM: $status"
  [ "$status" = 0 ] || bad=1
  if grep -i -E "EROFS|read-only file system|EACCES" "$work/err"; then bad=1; else echo "no write refused in the log"; fi
  exit "$bad"
' sh "$install" "$modules" "$work" "$http"
