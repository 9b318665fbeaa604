#!/bin/bash
# OVN's HA gateway failover, side by side: runs tests/ovn_failover_test.go's
# harness with Open vSwitch's ovs-vswitchd (netdev datapath) and with
# gvs-vswitchd as the three chassis' switch, both faults (the active
# gateway's switch killed, its underlay link set down), under OVN's
# default BFD timers and at bfd-min-rx=bfd-min-tx=100, and prints per run:
# pings lost of 400 (one every 20 ms), the outage from the fault to the
# first reply after it, when hv1's bfd_status showed the session down,
# whether a long-lived TCP transfer survived, who holds the gateway port
# and the source address a new connection shows outside. Then the zone
# flush a failover asks for, with 100,000 connections in another zone
# (tests/ctflush_harness_test.go). Needs root, OVN and Open vSwitch
# (scripts/install-deps.sh). The whole go test output goes to $LOG
# (default /tmp/failover-harness.log). Usage: run.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/go/bin:$PATH
GVS_FAILOVER_HARNESS=1 GVS_FAILOVER_ROUNDS="${1:-1}" \
  go test -count=1 -timeout 60m -run '^(TestOVNGatewayFailoverSideBySide|TestZoneFlushSideBySide)$' -v ./tests/ 2>&1 |
  tee "${LOG:-/tmp/failover-harness.log}" |
  grep -E '^\s+(ovn_failover|ctflush_harness)_test.go:[0-9]+: (round|zone|  )|^(ok|FAIL|--- FAIL)' |
  sed 's/^ *[a-z_]*_test.go:[0-9]*: //'
