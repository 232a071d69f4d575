#!/usr/bin/env bash
# Installs what the Postman differential tests run: Node.js and npm (Debian
# packages) and newman, Postman's command-line collection runner, from npm
# into $NEWMAN_HOME (default /tmp/plateau-newman; the binary is
# $NEWMAN_HOME/node_modules/.bin/newman). Under CI=true a test that needs
# newman fails when it is missing.
set -euo pipefail
NEWMAN_HOME="${NEWMAN_HOME:-/tmp/plateau-newman}"
NEWMAN_VERSION="${NEWMAN_VERSION:-6.2.2}"
if ! command -v npm >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
if [ -x "$NEWMAN_HOME/node_modules/.bin/newman" ] &&
  [ "$("$NEWMAN_HOME/node_modules/.bin/newman" --version)" = "$NEWMAN_VERSION" ]; then
  exit 0
fi
mkdir -p "$NEWMAN_HOME"
npm install --silent --no-audit --no-fund --prefix "$NEWMAN_HOME" "newman@$NEWMAN_VERSION" >/dev/null
"$NEWMAN_HOME/node_modules/.bin/newman" --version
