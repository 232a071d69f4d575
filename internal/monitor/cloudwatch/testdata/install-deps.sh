#!/usr/bin/env bash
# moto's server (https://pypi.org/project/moto/) emulates the CloudWatch API
# on loopback for the cloudwatch monitor's tests: no AWS account is needed.
# Installed into its own virtual environment, linked as moto_server.
set -euo pipefail
if command -v moto_server >/dev/null; then exit 0; fi
python3 -m venv /opt/plateau-moto
/opt/plateau-moto/bin/pip install -q 'moto[server]==5.2.5'
ln -sf /opt/plateau-moto/bin/moto_server /usr/local/bin/moto_server
