#!/bin/sh
# Runs every go test -fuzz target for FUZZTIME (default 10s).
#
# Go's fuzzing engine can end a run with "context deadline exceeded" when
# the time is up while it is still minimizing a new interesting input
# (not a failure of the code under test: no failing input is written). Such
# a run is repeated (up to twice: under load it can happen again); a real failure prints "Failing input" and fails.
set -e
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for pkg in $($GO list ./...); do
	for f in $($GO test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
		echo "== $pkg $f"
		for try in 1 2 3; do
			if $GO test -run '^$' -fuzz "^$f\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 1s "$pkg" >"$out" 2>&1; then
				cat "$out"
				break
			fi
			cat "$out"
			if grep -q 'Failing input' "$out" || ! grep -q 'context deadline exceeded' "$out" || [ "$try" = 3 ]; then
				exit 1
			fi
			echo "(the fuzzing engine ran out of time while minimizing: run again)"
		done
	done
done
