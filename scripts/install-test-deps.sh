#!/usr/bin/env bash
# Installs the system packages plateau's tests start for real: PostgreSQL,
# nginx, Prometheus with the node, postgres and mysqld exporters, MariaDB, Chromium (report browser test), iproute2
# (network namespaces). Needs root. Each package folder may add its own
# testdata/install-deps.sh, which is run too (JMeter, k6 and Locust for the
# importers; Node.js and newman for the Postman wire tests; Apache Otava
# from PyPI for the change-point test; …).
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
  postgresql postgresql-contrib nginx prometheus-node-exporter chromium iproute2 procps \
  prometheus prometheus-postgres-exporter prometheus-mysqld-exporter mariadb-server >/dev/null
for s in $(find internal -path '*/testdata/install-deps.sh' | sort); do
  echo "running $s"
  bash "$s"
done
