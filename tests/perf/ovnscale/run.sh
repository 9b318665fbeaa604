#!/bin/bash
# OVN at scale on one chassis, Open vSwitch and gvs side by side (issue 20):
# a generated topology is loaded into OVN's northbound database in one
# `ovn-nbctl --wait=hv` transaction while ovn-controller and the switch
# run, and the script times it (northd, ovn-controller and the switch
# installing every flow) and reads what the switch holds afterwards: its
# OpenFlow flows and groups on br-int and the resident memory of the
# switch's processes (ovs-vswitchd plus ovsdb-server for Open vSwitch;
# gvs-vswitchd with its embedded database for gvs).
#
# Topology (sizes from the environment): LS logical switches, each with
# LSP_PER_LS ports and ACL_PER_LS stateful ACLs, one router per switch,
# every router on one join switch; LB load balancers (3 backends each)
# spread over the switches; one port of every switch bound to the chassis
# (an internal port of br-int), so that every datapath is local.
# Defaults: LS=50 LSP_PER_LS=10 ACL_PER_LS=100 LB=200 (500 ports, 50
# routers, 5,000 ACLs, 200 load balancers).
#
# Each switch runs in a network namespace this script makes, with its
# files in a directory of its own; OVN's databases and northd run in the
# host namespace. Every process started here is stopped at the end, by
# PID. Needs root, Open vSwitch and OVN (scripts/install-deps.sh).
# usage: tests/perf/ovnscale/run.sh [ovs|gvs]...   (default: ovs gvs)
# QUIET=SECONDS (default 15): how long the resident memory is watched
# after the topology, for its lowest ("once quiet").
set -euo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/go/bin:$PATH
LS=${LS:-50} LSP_PER_LS=${LSP_PER_LS:-10} ACL_PER_LS=${ACL_PER_LS:-100} LB=${LB:-200}
work=$(mktemp -d /tmp/ovnscale.XXXXXX)
go build -o "$work/gvs-vswitchd" ./cmd/gvs-vswitchd

pids=""
nss=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	sleep 1
	for n in $nss; do ip netns del "$n" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

# rss PID...: the processes' resident memory in MiB.
rss() {
	local kb=0 p v
	for p in "$@"; do
		v=$(awk '/^VmRSS:/ {print $2}' "/proc/$p/status")
		kb=$((kb + v))
	done
	echo $((kb / 1024))
}

# topology: the ovn-nbctl commands, one logical switch per line.
topology() {
	local i j k
	echo "-- --may-exist ls-add join"
	for i in $(seq 1 "$LS"); do
		local a=$((i / 256)) b=$((i % 256)) cmd=""
		cmd+="-- ls-add ls$i -- lr-add lr$i"
		cmd+=" -- lrp-add lr$i lr$i-ls$i 00:00:0a:$(printf %02x $a):$(printf %02x $b):01 10.$a.$b.1/24"
		cmd+=" -- lsp-add ls$i ls$i-lr$i -- lsp-set-type ls$i-lr$i router -- lsp-set-addresses ls$i-lr$i router -- lsp-set-options ls$i-lr$i router-port=lr$i-ls$i"
		cmd+=" -- lrp-add lr$i lr$i-join 00:00:0b:$(printf %02x $a):$(printf %02x $b):01 100.64.$a.$b/16"
		cmd+=" -- lsp-add join join-lr$i -- lsp-set-type join-lr$i router -- lsp-set-addresses join-lr$i router -- lsp-set-options join-lr$i router-port=lr$i-join"
		for j in $(seq 1 "$LSP_PER_LS"); do
			cmd+=" -- lsp-add ls$i p${i}_$j -- lsp-set-addresses p${i}_$j \"00:00:0c:$(printf %02x $b):$(printf %02x $j):01 10.$a.$b.$((j + 10))\""
		done
		for k in $(seq 1 "$ACL_PER_LS"); do
			j=$(((k - 1) % LSP_PER_LS + 1))
			cmd+=" -- acl-add ls$i to-lport $((1000 + k % 100)) 'outport == \"p${i}_$j\" && ip4.src == 192.168.$((k % 256)).0/24 && tcp.dst == $((1000 + k))' allow-related"
		done
		echo "$cmd"
	done
	for k in $(seq 1 "$LB"); do
		i=$(((k - 1) % LS + 1))
		local a=$((i / 256)) b=$((i % 256))
		echo "-- lb-add lb$k 172.16.$((k / 256)).$((k % 256)):80 10.$a.$b.11:8080,10.$a.$b.12:8080,10.$a.$b.13:8080 tcp -- ls-lb-add ls$i lb$k"
	done
}

run_one() {
	local sw=$1 dir="$work/$1" ns="ovnscale-$1-$$"
	mkdir -p "$dir"
	ip netns add "$ns"
	ip netns exec "$ns" ip link set lo up
	nss="$nss $ns"
	local inns="ip netns exec $ns"
	export OVS_RUNDIR=$dir OVS_DBDIR=$dir OVS_LOGDIR=$dir OVS_SYSCONFDIR=$dir OVN_RUNDIR=$dir OVN_LOGDIR=$dir
	daemon() { # NAME ARGS...: a detached daemon, its pid remembered
		local name=$1
		shift
		"$@" --pidfile="$dir/$name.pid" --log-file="$dir/$name.log" --detach --no-chdir
		pids="$(cat "$dir/$name.pid") $pids"
	}
	local swpids
	case $sw in
	ovs)
		ovsdb-tool create "$dir/conf.db" /usr/share/openvswitch/vswitch.ovsschema
		daemon ovsdb-server $inns ovsdb-server "$dir/conf.db" --remote=punix:"$dir/db.sock" --unixctl="$dir/ovsdb-server.ctl" -vconsole:off
		daemon ovs-vswitchd $inns ovs-vswitchd --disable-system unix:"$dir/db.sock" --unixctl="$dir/ovs-vswitchd.ctl" -vconsole:off
		swpids="$(cat "$dir/ovs-vswitchd.pid") $(cat "$dir/ovsdb-server.pid")"
		;;
	gvs)
		# HEAP_PROFILE=FILE: gvs serves pprof (in its namespace) and the
		# live heap after the topology is saved to FILE.
		daemon gvs-vswitchd $inns "$work/gvs-vswitchd" --rundir="$dir" --dbdir="$dir" --logdir="$dir" \
			${HEAP_PROFILE:+--metrics-address=127.0.0.1:9911}
		swpids=$(cat "$dir/gvs-vswitchd.pid")
		;;
	esac
	for db in nb sb; do
		ovsdb-tool create "$dir/$db.db" /usr/share/ovn/ovn-$db.ovsschema
		daemon ovsdb-$db ovsdb-server "$dir/$db.db" --remote=punix:"$dir/$db.sock" --unixctl="$dir/$db.ctl" -vconsole:off
	done
	daemon northd ovn-northd --ovnnb-db=unix:"$dir/nb.sock" --ovnsb-db=unix:"$dir/sb.sock" -vconsole:off
	vsctl() { ovs-vsctl --db=unix:"$dir/db.sock" --timeout=60 "$@"; }
	nbctl() { ovn-nbctl --db=unix:"$dir/nb.sock" --timeout=900 "$@"; }
	vsctl --no-wait init
	vsctl set open . external_ids:system-id=hv1 external_ids:ovn-remote=unix:"$dir/sb.sock" \
		external_ids:ovn-encap-type=geneve external_ids:ovn-encap-ip=127.0.0.1 \
		external_ids:ovn-bridge-datapath-type=netdev
	daemon controller $inns ovn-controller unix:"$dir/db.sock" -vconsole:off
	local i=0
	until vsctl list-br | grep -qx br-int; do
		i=$((i + 1))
		[ $i -lt 300 ] || { echo "$sw: ovn-controller did not create br-int" >&2; exit 1; }
		sleep 0.1
	done
	local base
	base=$(rss $swpids)
	for i in $(seq 1 "$LS"); do
		vsctl add-port br-int vif$i -- set interface vif$i type=internal external_ids:iface-id=p${i}_1
	done
	nbctl --wait=hv sync
	local t0 flows groups all
	# The whole topology in one transaction that waits for the chassis:
	# northd, ovn-controller and the switch installing every flow.
	all=$(topology | tr '\n' ' ')
	t0=$(date +%s.%N)
	eval "ovn-nbctl --db=unix:$dir/nb.sock --timeout=900 --wait=hv $all"
	local sync
	sync=$(echo "$(date +%s.%N) - $t0" | bc)
	flows=$(ovs-ofctl -O OpenFlow15 dump-aggregate unix:"$dir/br-int.mgmt" | sed -n 's/.*flow_count=\([0-9]*\).*/\1/p')
	groups=$(ovs-ofctl -O OpenFlow15 dump-groups unix:"$dir/br-int.mgmt" | grep -c group_id || true)
	# DUMP_FLOWS=PREFIX keeps br-int's flows in PREFIX.SWITCH (after the
	# RSS is read: a dump allocates), HEAP_PROFILE gvs's heap.
	sleep 2
	local rssnow
	rssnow=$(rss $swpids)
	if [ -n "${HEAP_PROFILE:-}" ] && [ "$sw" = gvs ]; then
		$inns curl -s -o "$HEAP_PROFILE" "http://127.0.0.1:9911/debug/pprof/heap?gc=1"
		$inns curl -s "http://127.0.0.1:9911/metrics" | grep -E '^go_(memstats|gc|sched_gomaxprocs|threads)' >"$HEAP_PROFILE.metrics" || true
	fi
	if [ -n "${DUMP_FLOWS:-}" ]; then
		ovs-ofctl -O OpenFlow15 --no-stats dump-flows unix:"$dir/br-int.mgmt" >"$DUMP_FLOWS.$sw"
	fi
	# Then the lowest over QUIET seconds of nothing to do (gvs returns its
	# collector's headroom after --gc-trim-after, 10 s).
	local quiet=$rssnow r
	for _ in $(seq 1 "${QUIET:-15}"); do
		sleep 1
		r=$(rss $swpids)
		if [ "$r" -lt "$quiet" ]; then quiet=$r; fi
	done
	printf '%s\tovn-nbctl --wait=hv %.1f s\tflows %s\tgroups %s\tRSS %s MiB (before the topology %s MiB)\t%s B/flow\tonce quiet %s MiB, %s B/flow\n' \
		"$sw" "$sync" "$flows" "$groups" "$rssnow" "$base" \
		"$(( (rssnow - base) * 1048576 / (flows > 0 ? flows : 1) ))" \
		"$quiet" "$(( (quiet - base) * 1048576 / (flows > 0 ? flows : 1) ))"
	for p in $(cat "$dir"/*.pid); do kill "$p" 2>/dev/null || true; done
	sleep 1
}

echo "LS=$LS LSP_PER_LS=$LSP_PER_LS ACL_PER_LS=$ACL_PER_LS LB=$LB $(ovn-controller --version | head -1), $(ovs-vswitchd --version | head -1), gvs $(git rev-parse --short HEAD)"
for sw in "${@:-ovs gvs}"; do
	for s in $sw; do run_one "$s"; done
done
