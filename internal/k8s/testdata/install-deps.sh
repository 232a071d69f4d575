#!/usr/bin/env bash
# Run by scripts/install-test-deps.sh. Builds the Kubernetes control plane
# for TestIndexedJobOnControlPlane only when asked (PLATEAU_K8S_TEST=1): cold
# it takes 16-20 minutes on 2 cores; with ~/.cache/plateau-k8s kept between
# CI runs, no time at all. Without it the test skips.
set -euo pipefail
if [ "${PLATEAU_K8S_TEST:-}" = 1 ]; then
  "$(dirname "$0")/../../../scripts/build-k8s-test-bins.sh"
fi
