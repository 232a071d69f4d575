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
#           lib/ext/ApacheJMeter_*.jar and their dependencies in lib/; with
#           the JMeter Plugins' Custom Thread Groups (kg.apc
#           jmeter-plugins-casutg 2.10) in lib/ext.
#   k6      1.8.1 built from the Go module proxy (go install go.k6.io/k6)
#           into $K6_BIN_DIR (default /usr/local/bin). Cold: about 8 minutes
#           and 370 MB of modules on 2 shared cores (docs/ci.md).
#   Locust  2.47.0 from PyPI into a virtualenv $LOCUST_VENV (default
#           /opt/plateau-locust), linked as /usr/local/bin/locust. About a
#           minute.
#   Gatling 3.9.5 (a version that writes the text simulation.log the
#           importer reads) from Maven Central into $GATLING_HOME/lib
#           (default /tmp/plateau-gatling): gatling-charts-highcharts and
#           its dependencies; simulations are compiled with javac against
#           them and run with io.gatling.app.Gatling.
#
# Usage: install-deps.sh [apt] [jmeter] [k6] [locust] [gatling]   (no argument = all)
# Tests find JMeter through $JMETER_HOME or /tmp/plateau-jmeter, k6 and
# Locust through $K6/$LOCUST or PATH. Under CI=true a test whose tool is
# missing fails instead of skipping.
set -euo pipefail
JMETER_VERSION="${JMETER_VERSION:-5.6.3}"
JMETER_HOME="${JMETER_HOME:-/tmp/plateau-jmeter}"
JPGC_CASUTG_VERSION="${JPGC_CASUTG_VERSION:-2.10}"
K6_VERSION="${K6_VERSION:-1.8.1}"
K6_BIN_DIR="${K6_BIN_DIR:-/usr/local/bin}"
LOCUST_VERSION="${LOCUST_VERSION:-2.47.0}"
LOCUST_VENV="${LOCUST_VENV:-/opt/plateau-locust}"
GATLING_VERSION="${GATLING_VERSION:-3.9.5}"
GATLING_HOME="${GATLING_HOME:-/tmp/plateau-gatling}"

step_apt() {
  local need=()
  for p in nginx procps default-jdk-headless maven python3-venv; do
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
  step_jmeter_core
  step_jmeter_plugins
}

step_jmeter_core() {
  # ApacheJMeter_java holds the JSR223 and BeanShell samplers real plans use
  # (the converter's differential harness runs them).
  if [ -f "$JMETER_HOME/bin/ApacheJMeter.jar" ] && [ -f "$JMETER_HOME/bin/jmeter.properties" ] &&
    [ -f "$JMETER_HOME/lib/ext/ApacheJMeter_java-${JMETER_VERSION}.jar" ]; then
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
    <dependency><groupId>org.apache.jmeter</groupId><artifactId>ApacheJMeter_java</artifactId><version>${JMETER_VERSION}</version></dependency>
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

# The JMeter Plugins' Custom Thread Groups (jpgc-casutg: Concurrency,
# Arrivals, Free-Form Arrivals, Ultimate and Stepping thread groups) and
# their common library, from Maven Central, into JMeter's lib/ext and lib:
# the declared phases of plans that use them are tested against JMeter
# running them. Their own logging jars are left out (JMeter brings its own).
step_jmeter_plugins() {
  if [ -f "$JMETER_HOME/lib/ext/jmeter-plugins-casutg-${JPGC_CASUTG_VERSION}.jar" ]; then
    return 0
  fi
  local work
  work="$(mktemp -d)"
  cat >"$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>plateau</groupId><artifactId>jmeter-plugins</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>kg.apc</groupId><artifactId>jmeter-plugins-casutg</artifactId><version>${JPGC_CASUTG_VERSION}</version>
      <exclusions><exclusion><groupId>org.apache.jmeter</groupId><artifactId>*</artifactId></exclusion></exclusions></dependency>
  </dependencies>
</project>
POM
  (cd "$work" && mvn -B -q dependency:copy-dependencies -DoutputDirectory="$work/deps")
  mkdir -p "$JMETER_HOME/lib/ext"
  cp "$work"/deps/jmeter-plugins-cmn-jmeter-*.jar "$JMETER_HOME/lib/"
  cp "$work"/deps/jmeter-plugins-casutg-*.jar "$work"/deps/jmeter-plugins-charts-*.jar "$JMETER_HOME/lib/ext/"
  rm -rf "$work"
  test -f "$JMETER_HOME/lib/ext/jmeter-plugins-casutg-${JPGC_CASUTG_VERSION}.jar"
}

# k6 is a Go module: build it with the Go that builds plateau.
step_k6() {
  if [ -x "$K6_BIN_DIR/k6" ] && "$K6_BIN_DIR/k6" version 2>/dev/null | grep -q "v$K6_VERSION"; then
    return 0
  fi
  command -v go >/dev/null || { echo "install-deps.sh: k6 needs Go on PATH" >&2; return 1; }
  mkdir -p "$K6_BIN_DIR"
  GOBIN="$K6_BIN_DIR" GOFLAGS=-buildvcs=false CGO_ENABLED=0 go install "go.k6.io/k6@v$K6_VERSION"
  "$K6_BIN_DIR/k6" version
}

# Locust from PyPI, in its own virtualenv so the system Python is untouched.
step_locust() {
  if [ -x "$LOCUST_VENV/bin/locust" ] && "$LOCUST_VENV/bin/locust" --version 2>/dev/null | grep -q "$LOCUST_VERSION"; then
    ln -sf "$LOCUST_VENV/bin/locust" /usr/local/bin/locust
    return 0
  fi
  python3 -m venv "$LOCUST_VENV"
  "$LOCUST_VENV/bin/pip" install -q --disable-pip-version-check "locust==$LOCUST_VERSION"
  ln -sf "$LOCUST_VENV/bin/locust" /usr/local/bin/locust
  locust --version
}

# Gatling from Maven Central, as JMeter: the charts module pulls in the
# engine, the HTTP module, the Java DSL and the report generator.
step_gatling() {
  if [ -f "$GATLING_HOME/lib/gatling-app-${GATLING_VERSION}.jar" ]; then
    return 0
  fi
  local work
  work="$(mktemp -d)"
  cat >"$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>plateau</groupId><artifactId>gatling-home</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>io.gatling.highcharts</groupId><artifactId>gatling-charts-highcharts</artifactId><version>${GATLING_VERSION}</version></dependency>
  </dependencies>
</project>
POM
  mkdir -p "$GATLING_HOME/lib"
  (cd "$work" && mvn -B -q dependency:copy-dependencies -DoutputDirectory="$GATLING_HOME/lib")
  rm -rf "$work"
  test -f "$GATLING_HOME/lib/gatling-app-${GATLING_VERSION}.jar"
}

STEPS=("$@")
[ ${#STEPS[@]} -eq 0 ] && STEPS=(apt jmeter k6 locust gatling)
for s in "${STEPS[@]}"; do "step_$s"; done
