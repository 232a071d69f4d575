#!/bin/sh
# Installs what the report's tests need beyond Go: Debian's chromium for the
# headless browser test (internal/report/html), and DejaVu fonts so charts
# and screenshots render with the metrics the chart package assumes.
# CI calls this before `go test`; it needs root (apt-get).
set -eu
export DEBIAN_FRONTEND=noninteractive
if command -v chromium >/dev/null 2>&1 && fc-list 2>/dev/null | grep -qi dejavu; then
	exit 0
fi
apt-get update
apt-get install -y --no-install-recommends chromium fonts-dejavu-core
