#!/bin/bash
# Runs gvs's ctbench and Open vSwitch's `ovstest test-conntrack
# benchmark-zones` with the same arguments, alternating, in one run on the
# same machine, and prints both averages and the gvs/OVS ratios.
#
#   scripts/ctbench-vs-ovs.sh OVSTEST [ROUNDS] [N_CONNS N_ZONES ITERATIONS]...
#
# OVSTEST is tests/ovstest from an Open vSwitch source tree >= 3.4 (the
# release that keys connections by zone), built with
#   ./boot.sh && ./configure && make tests/ovstest
# (make the BUILT_SOURCES first if a parallel make misses a generated
# header). ROUNDS (default 3) runs of each; the argument triples default to
# issue 7's two workloads.
#
# The figures compared are the "Avg" rows: on both sides Open vSwitch's
# stopwatch average, an EWMA with weight 0.01 seeded with the first
# sample, so mostly the first iteration's time; one preemption in it
# (other work on the machine) moves a round's ratio a lot, so look at
# several rounds and at the load printed with them.
#
# CTBENCH=FILE uses a prebuilt ctbench instead of building this tree's;
# CTBENCH_FLAGS are passed to ctbench (e.g. -noreuse).
set -euo pipefail
ovstest=${1:?usage: $0 OVSTEST [ROUNDS] [N_CONNS N_ZONES ITERATIONS]...}
rounds=${2:-3}
shift $(($# >= 2 ? 2 : 1))
if [ $# -eq 0 ]; then
	set -- 10000 1000 5 1000 10000 20
fi
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
if [ -n "${CTBENCH:-}" ]; then
	# A prebuilt ctbench (e.g. of an earlier version, for a before/after).
	cp "$CTBENCH" "$bin/ctbench"
else
	(cd "$root" && go build -o "$bin/ctbench" ./tests/perf/ctbench)
fi

# avg prints the four averages (commit, lookup, flush full, flush empty)
# of one run's output.
avg() { awk -F'|' '/^\| Avg/ { for (i = 3; i <= 6; i++) { gsub(/[ us]/, "", $i); printf "%s ", $i } print "" }'; }

while [ $# -ge 3 ]; do
	args=("$1" "$2" "$3")
	shift 3
	echo "benchmark-zones ${args[*]} ($rounds rounds each, alternating; load: $(cut -d' ' -f1-3 /proc/loadavg))"
	printf '%-6s %14s %14s %16s %17s\n' "" "commit (us)" "lookup (us)" "flush full (us)" "flush empty (us)"
	for r in $(seq 1 "$rounds"); do
		o=$("$ovstest" test-conntrack benchmark-zones "${args[@]}" 2>&1 | avg)
		# shellcheck disable=SC2086
		g=$("$bin/ctbench" ${CTBENCH_FLAGS:-} benchmark-zones "${args[@]}" 2>&1 | avg)
		read -r oc ol of oe <<<"$o"
		read -r gc gl gf ge <<<"$g"
		printf '%-6s %14s %14s %16s %17s\n' "ovs" "$oc" "$ol" "$of" "$oe" "gvs" "$gc" "$gl" "$gf" "$ge"
		awk -v a="$gc $gl $gf $ge" -v b="$oc $ol $of $oe" 'BEGIN {
			split(a, g, " "); split(b, o, " ")
			printf "%-6s", "ratio"
			w[1] = 14; w[2] = 14; w[3] = 16; w[4] = 17
			for (i = 1; i <= 4; i++) printf " %*s", w[i], (o[i] > 0 ? sprintf("%.3f", g[i] / o[i]) : "n/a")
			print ""
		}'
	done
done
