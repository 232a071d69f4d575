#!/bin/sh
# Installs what the monitor tests need from Debian packages: a PostgreSQL
# server (Debian's server package ships pg_stat_statements) and the
# Prometheus node exporter. The JDK
# (javac, java, jstat) is expected on the machine already; it is installed
# here too when missing. Safe to run repeatedly; needs root (or sudo).
set -eu

SUDO=""
if [ "$(id -u)" != 0 ]; then
	SUDO="sudo"
fi

need=""
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need="$need postgresql"
command -v prometheus-node-exporter >/dev/null 2>&1 || need="$need prometheus-node-exporter"
command -v javac >/dev/null 2>&1 && command -v jstat >/dev/null 2>&1 || need="$need default-jdk-headless"

if [ -n "$need" ]; then
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	# shellcheck disable=SC2086 # word splitting of the package list is intended
	$SUDO apt-get install -y -qq --no-install-recommends $need
fi

# The packages may start services on machines with an init system; the
# tests start their own instances on free loopback ports, so stop those.
if command -v service >/dev/null 2>&1; then
	$SUDO service postgresql stop >/dev/null 2>&1 || true
	$SUDO service prometheus-node-exporter stop >/dev/null 2>&1 || true
fi
exit 0
