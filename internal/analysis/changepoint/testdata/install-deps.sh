#!/usr/bin/env bash
# Installs Apache Otava, the reference the change-point test compares
# plateau's detector with (TestAgreesWithOtava): apache-otava from PyPI in
# its own virtualenv $OTAVA_VENV (default /opt/plateau-otava), so the system
# Python is untouched. About a minute (numpy, scipy). Needs python3-venv
# (Debian), which it installs when root.
#
# The test finds Otava through $OTAVA_PYTHON or $OTAVA_VENV/bin/python;
# under CI=true a missing Otava fails the test instead of skipping it.
set -euo pipefail
OTAVA_VERSION="${OTAVA_VERSION:-0.8.0}"
OTAVA_VENV="${OTAVA_VENV:-/opt/plateau-otava}"

if [ -x "$OTAVA_VENV/bin/python" ] &&
  "$OTAVA_VENV/bin/python" -c "from importlib.metadata import version; import sys; sys.exit(version('apache-otava') != '$OTAVA_VERSION')" 2>/dev/null; then
  exit 0
fi
if ! python3 -m venv --help >/dev/null 2>&1 || ! dpkg -s python3-venv >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
  fi
fi
python3 -m venv "$OTAVA_VENV"
"$OTAVA_VENV/bin/pip" install -q --disable-pip-version-check "apache-otava==$OTAVA_VERSION"
"$OTAVA_VENV/bin/python" -c "import otava.analysis; from importlib.metadata import version; print('apache-otava', version('apache-otava'))"
