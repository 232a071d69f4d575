#!/usr/bin/env bash
# Installs what the importer's tests that use real tools need. Each test that
# needs a tool skips with a message when it is missing, so this script is an
# enabler, not a requirement.
#
#   nginx   Debian package; the access-log test runs its own instance on
#           127.0.0.1 with a temporary config (the distro service is stopped).
#   procps  vmstat.
#   JDK     jstat and java (default-jdk-headless).
#   JMeter  5.6.3 assembled from Maven Central artifacts into $JMETER_HOME
#           (default /tmp/plateau-jmeter): bin/ from ApacheJMeter_config,
#           lib/ext/ApacheJMeter_*.jar and their dependencies in lib/.
#
# Usage: install-deps.sh [apt] [jmeter]   (no argument = both)
# Tests find JMeter through $JMETER_HOME or /tmp/plateau-jmeter.
set -euo pipefail
JMETER_VERSION="${JMETER_VERSION:-5.6.3}"
JMETER_HOME="${JMETER_HOME:-/tmp/plateau-jmeter}"

step_apt() {
  local need=()
  for p in nginx procps default-jdk-headless maven; do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
  done
  if [ ${#need[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y --no-install-recommends "${need[@]}"
    # the package starts a system nginx on :80; the tests run their own.
    (service nginx stop || nginx -s stop) >/dev/null 2>&1 || true
  fi
}

step_jmeter() {
  if [ -f "$JMETER_HOME/bin/ApacheJMeter.jar" ] && [ -f "$JMETER_HOME/bin/jmeter.properties" ]; then
    return 0
  fi
  local work
  work="$(mktemp -d)"
  cat >"$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>plateau</groupId><artifactId>jmeter-home</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.jmeter</groupId><artifactId>ApacheJMeter</artifactId><version>${JMETER_VERSION}</version></dependency>
    <dependency><groupId>org.apache.jmeter</groupId><artifactId>ApacheJMeter_config</artifactId><version>${JMETER_VERSION}</version></dependency>
    <dependency><groupId>org.apache.jmeter</groupId><artifactId>ApacheJMeter_core</artifactId><version>${JMETER_VERSION}</version></dependency>
    <dependency><groupId>org.apache.jmeter</groupId><artifactId>ApacheJMeter_http</artifactId><version>${JMETER_VERSION}</version></dependency>
    <dependency><groupId>org.apache.jmeter</groupId><artifactId>ApacheJMeter_components</artifactId><version>${JMETER_VERSION}</version></dependency>
    <dependency><groupId>org.apache.jmeter</groupId><artifactId>ApacheJMeter_functions</artifactId><version>${JMETER_VERSION}</version></dependency>
  </dependencies>
</project>
POM
  (cd "$work" && mvn -B -q dependency:copy-dependencies -DoutputDirectory="$work/deps")
  mkdir -p "$JMETER_HOME/bin" "$JMETER_HOME/lib/ext"
  # bin/: jmeter.properties, reportgenerator.properties, report-template/ …
  (cd "$JMETER_HOME" && unzip -q -o "$work/deps/ApacheJMeter_config-${JMETER_VERSION}.jar" 'bin/*' || true)
  cp "$work/deps/ApacheJMeter-${JMETER_VERSION}.jar" "$JMETER_HOME/bin/ApacheJMeter.jar"
  for j in "$work"/deps/*.jar; do
    case "$(basename "$j")" in
      ApacheJMeter-*|ApacheJMeter_config-*) ;;
      ApacheJMeter_*) cp "$j" "$JMETER_HOME/lib/ext/" ;;
      *) cp "$j" "$JMETER_HOME/lib/" ;;
    esac
  done
  rm -rf "$work"
  test -f "$JMETER_HOME/bin/jmeter.properties"
}

STEPS=("$@")
[ ${#STEPS[@]} -eq 0 ] && STEPS=(apt jmeter)
for s in "${STEPS[@]}"; do "step_$s"; done
