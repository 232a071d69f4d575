#!/usr/bin/env bash
# Installs DuckDB (PyPI `duckdb`) into a virtual environment for the export
# tests, which read the written Parquet and CSV files with it. Tests find the
# interpreter through $DUCKDB_PYTHON, then /tmp/plateau-duckdb-venv/bin/python.
set -euo pipefail
VENV="${DUCKDB_VENV:-/tmp/plateau-duckdb-venv}"
DUCKDB_VERSION="${DUCKDB_VERSION:-2.0.1}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q "duckdb==$DUCKDB_VERSION"
"$VENV/bin/python" -c 'import duckdb; print("duckdb", duckdb.__version__)'
