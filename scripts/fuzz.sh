#!/usr/bin/env bash
# Runs every fuzz target of the repository for a short while, with a short
# minimisation time: at Go's default (-fuzzminimizetime 60s) a target whose
# seeds are large plans spends its whole budget minimising the first
# interesting input (the JMeter converter's target made 7 executions in 60 s).
#
#   scripts/fuzz.sh                 # every target, FUZZTIME each (default 10s)
#   FUZZTIME=60s scripts/fuzz.sh jmeter   # targets whose package path matches
#
# Prints one line per target: package, target, executions, new interesting
# inputs, and fails on the first crash (the failing input is written under the
# package's testdata/fuzz, as go test does, to be committed with the fix).
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-10s}
minimize=${FUZZMINIMIZETIME:-2s}
filter=${1:-}
fail=0
while read -r file name; do
  pkg=./$(dirname "$file")
  if [ -n "$filter" ] && [[ "$pkg" != *"$filter"* ]]; then continue; fi
  log=$(mktemp)
  ok=0
  for attempt in 1 2; do
    if go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" >"$log" 2>&1; then
      ok=1
      break
    fi
    # Go's fuzz coordinator gives up with "context deadline exceeded" when
    # its workers are starved of a core at the end of the time (a loaded
    # machine), without a failing input: try once more, and fail only on a
    # crash or on a second such stop.
    if ! grep -q 'context deadline exceeded' "$log" || grep -q 'Failing input written' "$log"; then
      break
    fi
    echo "retry $pkg $name: the fuzz engine stopped with 'context deadline exceeded' and no failing input" >&2
  done
  if [ "$ok" = 1 ]; then
    last=$(grep -E '^fuzz: elapsed' "$log" | tail -n 1)
    execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
    news=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$last")
    printf '%-40s %-24s %10s execs %6s new\n' "$pkg" "$name" "${execs:-?}" "${news:-?}"
  else
    echo "FAIL $pkg $name" >&2
    cat "$log" >&2
    fail=1
  fi
  rm -f "$log"
done < <(grep -rlE --include='*_test.go' '^func Fuzz' internal cmd 2>/dev/null | sort | while read -r f; do
  sed -nE 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/p' "$f" | while read -r n; do echo "$f $n"; done
done)
exit "$fail"
