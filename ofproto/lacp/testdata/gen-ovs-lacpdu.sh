#!/bin/bash
# Regenerates ovs-lacpdu.pcap: the first LACPDUs Open vSwitch 3.1's
# ovs-vswitchd (Debian's package) sends on a dummy bond member, captured
# by netdev-dummy's tx_pcap. Run from anywhere; needs ovsdb-server,
# ovsdb-tool, ovs-vsctl, ovs-appctl, ovs-vswitchd.
set -euo pipefail
out=$(cd "$(dirname "$0")" && pwd)/ovs-lacpdu.pcap
. "$(dirname "$0")/../../../scripts/lib/ovs-sandbox.sh"
ovs_sandbox
ovs-vsctl --db=unix:"$dir/db.sock" --timeout=10 add-br br0 -- set bridge br0 datapath_type=dummy other-config:hwaddr=aa:55:aa:55:00:00 \
  -- add-bond br0 bond0 p1 p2 lacp=active bond_mode=balance-tcp other_config:lacp-time=fast \
  -- set interface p1 type=dummy ofport_request=1 options:tx_pcap="$dir/p1.pcap" other_config:lacp-aggregation-key=7 \
  -- set interface p2 type=dummy ofport_request=2 options:tx_pcap="$dir/p2.pcap" other_config:lacp-aggregation-key=7
ovs-appctl netdev-dummy/set-admin-state up >/dev/null
sleep 2.5
cp "$dir/p1.pcap" "$out"
echo "wrote $out ($(stat -c %s "$out") bytes)"
