#!/usr/bin/env bash
# h2load (nghttp2-client) is the peer the HTTP/2 benchmarks compare with
# (BenchmarkH2VsH2load, bench/h2/run.py); nginx (installed by
# scripts/install-test-deps.sh) is the server. bench/h2/run.py also makes
# a certificate with openssl and counts system calls with strace.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --no-install-recommends nghttp2-client openssl strace >/dev/null
