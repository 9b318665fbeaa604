#!/bin/sh
# Re-captures testdata/captures.txt: runs Debian's ovs-ofctl (package
# openvswitch-common) against the recording listener in
# ofproto/ofp/internal/ofrecord for every command listed in
# capture_test.go (captureCmds), writes what each side sent as hex to
# testdata/captures.txt and what ovs-ofctl ofp-print prints for each message
# to testdata/ofp-print.txt. It also re-records testdata/stats_captures.txt:
# ovs-ofctl's stats commands through a recording proxy in front of a real
# ovs-vswitchd (package openvswitch-switch, dummy datapath) and its replies
# (stats_capture_test.go), and testdata/async_captures.txt: packet-out,
# bundles, TLV maps, conntrack flushes and monitor sessions (packet-ins,
# flow-removed, port-status, NXT_RESUME) through the same kind of proxy,
# plus the switch's answers to role and async-config requests
# (async_capture_test.go), and testdata/flowmonitor_captures.txt: ovs-ofctl
# monitor watch:... sessions through the proxy (flowmonitor_test.go).
# Review the diff before committing.
set -eu
cd "$(dirname "$0")/.."
command -v ovs-ofctl >/dev/null || { echo "capture.sh: ovs-ofctl not installed (apt-get install openvswitch-common)" >&2; exit 1; }
exec go test -count=1 -run '^(TestCapturesMatchOVSOfctl|TestRecordStatsCaptures|TestRecordAsyncCaptures|TestRecordFlowMonitorCaptures)$' . -args -update
