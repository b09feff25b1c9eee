#!/bin/sh
# Makes the `prometheus` server available to the tests that scrape a real Baton cluster with it
# (server/testing/prometheus-harness.ts) without installing it as a service; prints its path.
set -eu
exec sh "$(dirname "$0")/ensure-prometheus-tool.sh" prometheus
