#!/bin/sh
# Regenerates the golden corpus for package ofptext from Debian's ovs-ofctl.
# Each line of flows.txt is parsed on its own (so each gets the protocol
# ovs-ofctl would choose for it alone) by `ovs-ofctl parse-flows` (default
# protocols) and `ovs-ofctl -O OpenFlow15 parse-flows`. golden.txt holds, per
# flow, three lines: "in <flow>", "nx <ofp-print line>", "15 <ofp-print line>"
# (or "error: <ovs-ofctl message>").
set -eu
cd "$(dirname "$0")"
# run FILE [OPTIONS]: the flow mod line, or "error: MESSAGE" with
# ovs-ofctl's "ovs-ofctl: FILE:LINE: " prefix removed.
run() {
	f=$1
	shift
	if out=$(ovs-ofctl "$@" parse-flows "$f" 2>&1); then
		printf '%s\n' "$out" | grep 'FLOW_MOD'
	else
		printf 'error: %s\n' "$(printf '%s\n' "$out" | tail -1 | sed 's/^ovs-ofctl: [^:]*:[0-9]*: //')"
	fi
}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
: > golden.txt
while IFS= read -r flow; do
	printf '%s\n' "$flow" > "$tmp"
	nx=$(run "$tmp")
	of15=$(run "$tmp" -O OpenFlow15)
	printf 'in %s\nnx %s\n15 %s\n' "$flow" "$nx" "$of15" >> golden.txt
done < flows.txt
