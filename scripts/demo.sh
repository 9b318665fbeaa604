#!/bin/bash
# Demo: two network namespaces ping each other through gvs-vswitchd.
#
# It starts gvs-vswitchd (embedded OVSDB) in run/demo, creates namespaces
# gvs-demo-a (10.250.0.1) and gvs-demo-b (10.250.0.2) with veths whose
# root-side ends become ports of bridge gvsdemo0 (added with Open vSwitch's
# ovs-vsctl), installs datapath flows between the two ports with
# `ovs-appctl dpctl/add-flow` (the OpenFlow switch is not built yet), pings
# both ways, shows the megaflows and removes everything. Needs root,
# iproute2, ping and Debian's openvswitch-common (ovs-vsctl, ovs-appctl).
set -euo pipefail
cd "$(dirname "$0")/.."
RUN=$(pwd)/run/demo
export OVS_RUNDIR=$RUN OVS_DBDIR=$RUN OVS_LOGDIR=$RUN
appctl() { ovs-appctl -t gvs-vswitchd "$@"; }

cleanup() {
  appctl exit >/dev/null 2>&1 || true
  for h in a b; do
    ip link del gvsdemo-$h 2>/dev/null || true
    ip netns del gvs-demo-$h 2>/dev/null || true
  done
}
trap cleanup EXIT
cleanup
rm -rf "$RUN"; mkdir -p "$RUN"

./bin/gvs-vswitchd --detach --log-file
ovs-vsctl init
ovs-vsctl add-br gvsdemo0
for h in a:10.250.0.1 b:10.250.0.2; do
  n=${h%%:*}; addr=${h#*:}
  ip netns add gvs-demo-$n
  ip link add gvsdemo-$n type veth peer name gvsdemo-${n}i
  ip link set gvsdemo-${n}i netns gvs-demo-$n
  ip -n gvs-demo-$n addr add $addr/24 dev gvsdemo-${n}i
  ip -n gvs-demo-$n link set gvsdemo-${n}i up
  ip link set gvsdemo-$n up
  ovs-vsctl add-port gvsdemo0 gvsdemo-$n
done
appctl dpctl/show
A=$(appctl dpctl/show | sed -n 's/^  port \([0-9]*\): gvsdemo-a$/\1/p')
B=$(appctl dpctl/show | sed -n 's/^  port \([0-9]*\): gvsdemo-b$/\1/p')
appctl dpctl/add-flow "recirc_id(0),in_port($A)" "$B"
appctl dpctl/add-flow "recirc_id(0),in_port($B)" "$A"
ip netns exec gvs-demo-a ping -c 3 -i 0.2 10.250.0.2
ip netns exec gvs-demo-b ping -c 3 -i 0.2 10.250.0.1
appctl dpctl/dump-flows
sleep 6 # interface statistics are written back every 5 s, as Open vSwitch does
ovs-vsctl list interface gvsdemo-a | grep -E '^(name|ofport|statistics) '
