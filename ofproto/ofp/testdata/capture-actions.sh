#!/bin/sh
# Re-records the action corpus from Debian's Open vSwitch (packages
# openvswitch-common and openvswitch-switch): for every flow in
# testdata/actions_flows.txt, the flow mod ovs-ofctl add-flow sends with
# -O OpenFlow10/13/15 and what ovs-ofctl ofp-print prints for it
# (testdata/actions_golden.txt), and what ovs-vswitchd dumps when the flow
# is added in one version and dumped in another (testdata/actions_dump.txt).
# Review the diff before committing.
set -eu
cd "$(dirname "$0")/.."
command -v ovs-ofctl >/dev/null || { echo "capture-actions.sh: ovs-ofctl not installed" >&2; exit 1; }
exec go test -count=1 -run '^(TestActionGoldenMatchesOVSOfctl|TestActionDumpGoldenMatchesOVS)$' . -args -update-actions
