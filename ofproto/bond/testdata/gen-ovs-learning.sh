#!/bin/bash
# Regenerates ovs-learning.pcap: the gratuitous learning packets Open
# vSwitch 3.1's ovs-vswitchd (Debian's package) sends on the new active
# member of an active-backup bond after bond/set-active-member, for a MAC
# learned on another port in VLAN 0 and one in VLAN 10, captured by
# netdev-dummy's tx_pcap. Needs ovsdb-server, ovsdb-tool, ovs-vsctl,
# ovs-appctl, ovs-ofctl and ovs-vswitchd.
set -euo pipefail
out=$(cd "$(dirname "$0")" && pwd)/ovs-learning.pcap
. "$(dirname "$0")/../../../scripts/lib/ovs-sandbox.sh"
ovs_sandbox
ovs-vsctl --db=unix:"$dir/db.sock" --timeout=10 add-br br0 -- set bridge br0 datapath_type=dummy \
  -- add-bond br0 bond0 p1 p2 bond_mode=active-backup \
  -- set interface p1 type=dummy ofport_request=1 options:tx_pcap="$dir/p1.pcap" \
  -- set interface p2 type=dummy ofport_request=2 options:tx_pcap="$dir/p2.pcap" \
  -- add-port br0 p3 -- set interface p3 type=dummy ofport_request=3
ovs-appctl netdev-dummy/set-admin-state up >/dev/null
ovs-ofctl add-flow br0 actions=NORMAL
ovs-appctl netdev-dummy/receive p3 'in_port(3),eth(src=50:54:00:00:00:07,dst=ff:ff:ff:ff:ff:ff),eth_type(0x1234)'
ovs-appctl netdev-dummy/receive p3 'in_port(3),eth(src=50:54:00:00:00:08,dst=ff:ff:ff:ff:ff:ff),eth_type(0x8100),vlan(vid=10,pcp=0),encap(eth_type(0x1234))'
sleep 0.5
other=p2; [ "$(ovs-appctl bond/show bond0 | grep -B0 -A1 '^member p2' | grep -c 'active member')" = 1 ] && other=p1
ovs-appctl bond/set-active-member bond0 $other >/dev/null
sleep 1
cp "$dir/$other.pcap" "$out"
echo "wrote $out (active member $other, $(stat -c %s "$out") bytes)"
