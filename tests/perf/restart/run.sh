#!/bin/bash
# What a restart of the switch costs, side by side: runs
# tests/restart_ct_test.go's TestRestartLossSideBySide with gvs-vswitchd
# (handover with --handover, plain restart, restart with
# --conntrack-state, kill -9) and Open vSwitch's ovs-vswitchd on the
# netdev datapath (ovs-appctl exit + start with flow-restore-wait,
# kill -9), each behind the same ct(commit)/+est
# firewall between two namespaces, and prints per run: UDP datagrams lost
# of a 1/ms stream, the longest gap between arrivals, and whether a TCP
# connection whose far side speaks first carried on. Needs root and Open
# vSwitch (scripts/install-deps.sh). The whole go test output goes to $LOG
# (default /tmp/restart-harness.log).
set -euo pipefail
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/go/bin:$PATH
GVS_RESTART_HARNESS=1 \
  go test -count=1 -timeout 10m -run '^TestRestartLossSideBySide$' -v ./tests/ 2>&1 |
  tee "${LOG:-/tmp/restart-harness.log}" |
  grep -E '^\s+restart_ct_test.go:[0-9]+:   |^(ok|FAIL|--- FAIL)' |
  sed 's/^ *[a-z_]*_test.go:[0-9]*: //'
