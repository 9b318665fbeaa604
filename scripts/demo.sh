#!/bin/bash
# Demo: two network namespaces ping each other through gvs-vswitchd.
#
# It starts gvs-vswitchd (embedded OVSDB) in run/demo and creates
# namespaces gvs-demo-a (10.250.0.1) and gvs-demo-b (10.250.0.2) with
# veths whose root-side ends become ports of bridge gvsdemo0, added with
# Open vSwitch's ovs-vsctl. Then:
#   1. NORMAL switching: a new bridge forwards as a learning switch (its
#      one flow is actions=NORMAL); a ping each way, the MAC table
#      (fdb/show) and the megaflows (dpctl/dump-flows);
#   2. OpenFlow: the flows replaced with ovs-ofctl by explicit port to
#      port forwarding; a ping each way and the flows' counters;
#   3. ofproto/trace of a packet through those flows.
# Everything is removed at the end. Needs root, iproute2, ping and
# Debian's openvswitch-switch and openvswitch-common (ovs-vsctl, ovs-ofctl,
# ovs-appctl); gvs's gvs-vsctl, gvs-ofctl and gvs-appctl in bin/ do the
# same job.
set -euo pipefail
cd "$(dirname "$0")/.."
RUN=$(pwd)/run/demo
export OVS_RUNDIR=$RUN OVS_DBDIR=$RUN OVS_LOGDIR=$RUN
appctl() { ovs-appctl -t gvs-vswitchd "$@"; }
say() { printf '\n== %s\n' "$*"; }

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
./bin/gvs-vswitchd --version | head -n 1
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
ovs-vsctl show
A=$(ovs-vsctl get interface gvsdemo-a ofport)
B=$(ovs-vsctl get interface gvsdemo-b ofport)

say "1. NORMAL switching (the bridge's default flow)"
ovs-ofctl dump-flows gvsdemo0
ip netns exec gvs-demo-a ping -c 3 -i 0.2 10.250.0.2
ip netns exec gvs-demo-b ping -c 3 -i 0.2 10.250.0.1
appctl fdb/show gvsdemo0
appctl dpctl/dump-flows

say "2. OpenFlow: port $A <-> port $B"
ovs-ofctl del-flows gvsdemo0
ovs-ofctl add-flow gvsdemo0 "in_port=$A,actions=output:$B"
ovs-ofctl add-flow gvsdemo0 "in_port=$B,actions=output:$A"
ip netns exec gvs-demo-a ping -c 3 -i 0.2 10.250.0.2
ip netns exec gvs-demo-b ping -c 3 -i 0.2 10.250.0.1
ovs-ofctl dump-flows gvsdemo0
appctl dpctl/dump-flows

say "3. ofproto/trace"
appctl ofproto/trace gvsdemo0 "in_port=$A,icmp,nw_src=10.250.0.1,nw_dst=10.250.0.2"
sleep 6 # interface statistics are written back every 5 s, as Open vSwitch does
ovs-vsctl list interface gvsdemo-a | grep -E '^(name|ofport|statistics) '
