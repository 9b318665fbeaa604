#!/bin/sh
# Re-captures testdata/captures.txt: runs Debian's ovs-ofctl (package
# openvswitch-common) against the recording listener in
# ofproto/ofp/internal/ofrecord for every command listed in
# capture_test.go (captureCmds), writes what each side sent as hex to
# testdata/captures.txt and what ovs-ofctl ofp-print prints for each message
# to testdata/ofp-print.txt.
# Review the diff before committing.
set -eu
cd "$(dirname "$0")/.."
command -v ovs-ofctl >/dev/null || { echo "capture.sh: ovs-ofctl not installed (apt-get install openvswitch-common)" >&2; exit 1; }
exec go test -count=1 -run '^TestCapturesMatchOVSOfctl$' . -args -update
