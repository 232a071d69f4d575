#!/usr/bin/env bash
# h2load (nghttp2-client) is the peer the HTTP/2 benchmark compares with;
# nginx (installed by scripts/install-test-deps.sh) is the server.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --no-install-recommends nghttp2-client >/dev/null
