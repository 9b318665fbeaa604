#!/bin/sh
# Runs Open vSwitch 3.1 (dummy datapath) as an oracle and replays ovs-appctl
# commands read from stdin, one per line. Lines starting with "!" are run by
# the shell instead (setup; then 1 s for OVS to re-read the kernel). For
# each appctl command it prints a transcript block:
#   $ <command>
#   <stdout>
#   [stderr: <stderr>]   (only on failure, with "exit N")
# Usage: oracle.sh [netns] < script
# Embedded by oracle.go (RunOracle), which the ofproto/router and
# ofproto/tnlneigh transcript tests use; it can also be run by hand.
set -u
NS=${1:-}
run() { if [ -n "$NS" ]; then ip netns exec "$NS" "$@"; else "$@"; fi; }
D=$(mktemp -d)
export OVS_RUNDIR=$D OVS_DBDIR=$D OVS_LOGDIR=$D
cleanup() {
	for p in ovs-vswitchd ovsdb-server; do
		[ -f "$D/$p.pid" ] && kill "$(cat "$D/$p.pid")" 2>/dev/null
	done
	sleep 0.2
	rm -rf "$D"
}
trap cleanup EXIT
ovsdb-tool create "$D/conf.db" /usr/share/openvswitch/vswitch.ovsschema >/dev/null
run ovsdb-server --remote=punix:"$D/db.sock" --pidfile --detach --log-file "$D/conf.db" || exit 1
run ovs-vswitchd --enable-dummy --disable-system --pidfile --detach --log-file unix:"$D/db.sock" || exit 1
run ovs-vsctl --db=unix:"$D/db.sock" add-br br0 -- set bridge br0 datapath_type=dummy \
	-- add-port br0 p0 -- set Interface p0 type=dummy || exit 1
while IFS= read -r line; do
	case "$line" in
	"") continue ;;
	"#"*) continue ;;
	"!"*) run sh -c "${line#!}" >/dev/null 2>&1; sleep 1; continue ;;
	esac
	printf '$ %s\n' "$line"
	# shellcheck disable=SC2086
	out=$(run ovs-appctl $line 2>"$D/err"; echo "exit $?")
	rc=${out##*exit }
	out=${out%exit *}
	printf '%s' "$out"
	if [ "$rc" != 0 ]; then
		printf '[stderr: %s]\n[exit %s]\n' "$(cat "$D/err")" "$rc"
	fi
done
