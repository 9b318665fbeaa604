#!/bin/sh
# gen.sh regenerates the golden datapath flow lines in this directory from a
# real Open vSwitch (ovs-vswitchd --enable-dummy, datapath_type=dummy).
#
# Needs openvswitch-switch (3.1) installed. Everything runs in a temporary
# directory under /tmp and is torn down at the end. Outputs:
#   terse.txt    lines of `ovs-appctl dpctl/dump-flows`
#   verbose.txt  lines of `ovs-appctl dpctl/dump-flows -m`
# with the ufid and the packets/bytes/used statistics removed, so each line
# is "<flow>, actions:<actions>". Lines starting with '#' name a scenario.
set -eu

OUT=$(cd "$(dirname "$0")" && pwd)
D=$(mktemp -d /tmp/gvs-odpgen.XXXXXX)
export OVS_RUNDIR="$D" OVS_LOGDIR="$D" OVS_DBDIR="$D" OVS_SYSCONFDIR="$D" OVS_PKGDATADIR=/usr/share/openvswitch

cleanup() {
	for p in ovs-vswitchd ovsdb-server; do
		if [ -f "$D/$p.pid" ]; then kill "$(cat "$D/$p.pid")" 2>/dev/null || true; fi
	done
	sleep 0.2
	rm -rf "$D"
}
trap cleanup EXIT INT TERM

ovsdb-tool create "$D/conf.db" /usr/share/openvswitch/vswitch.ovsschema
ovsdb-server --detach --no-chdir --pidfile="$D/ovsdb-server.pid" --log-file="$D/ovsdb-server.log" \
	--remote=punix:"$D/db.sock" "$D/conf.db"
VSCTL="ovs-vsctl --db=unix:$D/db.sock"
$VSCTL --no-wait init
ovs-vswitchd --enable-dummy --disable-system --detach --no-chdir --pidfile="$D/ovs-vswitchd.pid" \
	--log-file="$D/ovs-vswitchd.log" unix:"$D/db.sock"
APPCTL="ovs-appctl -t $D/ovs-vswitchd.$(cat "$D/ovs-vswitchd.pid").ctl"

$VSCTL set Open_vSwitch . other_config:max-idle=600000 other_config:vlan-limit=0
$VSCTL add-br br0 -- set bridge br0 datapath_type=dummy fail-mode=secure \
	protocols=OpenFlow10,OpenFlow13,OpenFlow15
for i in 1 2 3; do
	$VSCTL add-port br0 p$i -- set interface p$i type=dummy ofport_request=$i
done
OFCTL="ovs-ofctl -O OpenFlow15"
BR="unix:$D/br0.mgmt"

: >"$OUT/terse.txt"
: >"$OUT/verbose.txt"

strip() {
	# Drop "ufid:..., " and the statistics; keep flow and actions.
	sed -e '/^flow-dump from/d' -e 's/^ufid:[^ ]* //' -E -e 's/ packets:[0-9]+, bytes:[0-9]+, used:[^,]+,( flags:[^,]+,)?//' | sort
}

# scenario NAME FLOWS PACKET... : install FLOWS (ovs-ofctl add-flows syntax,
# ';'-separated), receive each PACKET on p1 (netdev-dummy/receive syntax; a
# PACKET "pN:..." is received on port N), and record the megaflows.
scenario() {
	name=$1 flows=$2
	shift 2
	$OFCTL del-flows "$BR"
	$APPCTL revalidator/purge >/dev/null
	if ! echo "$flows" | tr ';' '\n' | $OFCTL add-flows "$BR" - 2>"$D/err"; then
		echo "gen.sh: scenario $name: add-flows failed: $(grep -v '^0000' "$D/err")" >&2
		return 0
	fi
	for pkt in "$@"; do
		port=p1
		case $pkt in p[0-9]:*) port=${pkt%%:*} pkt=${pkt#*:} ;; esac
		$APPCTL netdev-dummy/receive "$port" "$pkt" >/dev/null
	done
	$APPCTL revalidator/wait >/dev/null || true
	echo "# $name" >>"$OUT/terse.txt"
	echo "# $name" >>"$OUT/verbose.txt"
	$APPCTL dpctl/dump-flows --no-names | strip >>"$OUT/terse.txt"
	$APPCTL dpctl/dump-flows -m --no-names | strip >>"$OUT/verbose.txt"
}

. "$OUT/scenarios.sh"
