#!/bin/sh
# Regenerates dump.txt: for each flow of flows.txt, what Debian's Open
# vSwitch prints for it with `ovs-ofctl -O OpenFlow15 dump-flows --no-stats`
# after `ovs-ofctl -O OpenFlow15 add-flow` on a dummy-datapath bridge.
# dump.txt holds, per flow, "in <flow>" and "15 <dump line or error>".
# Starts a private ovsdb-server and ovs-vswitchd in a temporary directory
# and stops them (by pid) on exit.
set -eu
cd "$(dirname "$0")"
D=$(mktemp -d)
cleanup() {
	for p in "$D/vsd.pid" "$D/ovsdb.pid"; do
		[ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null || true
	done
	rm -rf "$D"
}
trap cleanup EXIT
ovsdb-tool create "$D/conf.db" /usr/share/openvswitch/vswitch.ovsschema
ovsdb-server --remote=punix:"$D/db.sock" --pidfile="$D/ovsdb.pid" --unixctl="$D/ovsdb.ctl" \
	--log-file="$D/ovsdb.log" --detach "$D/conf.db"
OVS_RUNDIR=$D ovs-vswitchd --enable-dummy --disable-system unix:"$D/db.sock" --pidfile="$D/vsd.pid" \
	--unixctl="$D/vsd.ctl" --log-file="$D/vsd.log" --detach
ovs-vsctl --db=unix:"$D/db.sock" add-br br0 -- set bridge br0 datapath_type=dummy
B=unix:$D/br0.mgmt
i=0
while [ ! -S "$D/br0.mgmt" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
: > dump.txt
while IFS= read -r flow; do
	ovs-ofctl -O OpenFlow15 del-flows "$B"
	if out=$(ovs-ofctl -O OpenFlow15 add-flow "$B" "$flow" 2>&1); then
		out=$(ovs-ofctl -O OpenFlow15 dump-flows --no-stats "$B")
	else
		out="error: $(printf '%s' "$out" | tail -1)"
	fi
	printf 'in %s\n15 %s\n' "$flow" "$out" >> dump.txt
done < flows.txt
