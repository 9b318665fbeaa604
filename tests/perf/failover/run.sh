#!/bin/bash
# Runs OVN's HA gateway failover (tests/ovn_failover_test.go) with Open
# vSwitch's ovs-vswitchd (netdev datapath) and with gvs-vswitchd as the
# three chassis' switch, both faults (the active gateway's switch killed,
# its underlay link set down), under OVN's default BFD timers and at
# bfd-min-rx=bfd-min-tx=100, and prints per run: pings lost of 400 (one
# every 20 ms), the outage from the fault to the first reply after it,
# when hv1's bfd_status showed the session down, whether a long-lived TCP
# transfer survived, who holds the gateway port and the source address a
# new connection shows outside. Needs root, OVN and Open vSwitch
# (scripts/install-deps.sh). Usage: run.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/go/bin:$PATH
GVS_FAILOVER_HARNESS=1 GVS_FAILOVER_ROUNDS="${1:-1}" \
  go test -count=1 -timeout 60m -run '^TestOVNGatewayFailoverSideBySide$' -v ./tests/ 2>&1 |
  grep -E '^\s+ovn_failover_test.go:[0-9]+: (round|\s*$)|^(ok|FAIL|---)' | sed 's/^ *ovn_failover_test.go:[0-9]*: //'
