#!/usr/bin/env bash
# Installs what the JMeter converter's end-to-end test runs: JDK, Maven and
# JMeter 5.6.3 assembled from Maven Central into $JMETER_HOME (default
# /tmp/plateau-jmeter). The importer's script already knows how; this
# delegates to it so the two tests share one JMeter. Under CI=true the test
# fails when JMeter is missing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bash "$here/../../../importer/testdata/install-deps.sh" apt jmeter
