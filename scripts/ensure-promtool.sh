#!/bin/sh
# Makes `promtool` available to the metrics lint test (server/http/metrics-promtool.test.ts) and
# the alert rules tests (ops/prometheus/) without installing Prometheus; prints its path.
set -eu
exec sh "$(dirname "$0")/ensure-prometheus-tool.sh" promtool
