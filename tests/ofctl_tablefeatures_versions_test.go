package tests

import (
	"slices"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

// of11Known are the steps where gvs-ofctl still prints differently from
// ovs-ofctl in OpenFlow 1.1 or 1.2 ("VERSION|args"), and why.
var of11Known = map[string]string{}

// of11MatchCommands send flow matches, which gvs-ofctl refuses in
// OpenFlow 1.1 (ofp has no ofp11_match encoding).
var of11MatchCommands = []string{"dump-flows", "dump-aggregate", "add-flow", "add-flows", "mod-flows", "del-flows", "diff-flows", "replace-flows"}

// withVersion rewrites an online step to use only OpenFlow version v.
func withVersion(st onlineStep, v string) onlineStep {
	var args []string
	for i := 0; i < len(st.args); i++ {
		if st.args[i] == "-O" {
			i++
			continue
		}
		args = append(args, st.args[i])
	}
	return onlineStep{args: append([]string{"-O", v}, args...), stdin: st.stdin}
}

// TestGvsOfctlOpenFlow11And12MatchOVSOfctl runs the online steps of
// TestGvsOfctlOnlineCommandsMatchOVSOfctl with -O OpenFlow11 and -O
// OpenFlow12 instead of their own versions, with Debian's ovs-ofctl and
// with gvs-ofctl against Open vSwitch and gvs-vswitchd, and requires the
// same output, errors, exit status and flow table afterwards.
func TestGvsOfctlOpenFlow11And12MatchOVSOfctl(t *testing.T) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	gvsOfctl := gvsOfctlBinary(t)
	for _, sw := range []string{"Open vSwitch", "gvs-vswitchd"} {
		t.Run(sw, func(t *testing.T) {
			env := ofctlSwitch(t, sw)
			dir, reset := onlineFixture(t, env)
			state := onlineStep{args: []string{"--no-stats", "--sort", "dump-flows", "br0"}}
			seen := map[string]bool{}
			for _, v := range []string{"OpenFlow11", "OpenFlow12"} {
				for _, base := range onlineSteps() {
					st := withVersion(base, v)
					key := v + "|" + strings.Join(st.args[2:], " ")
					if seen[key] || slices.Contains(st.args, "--bundle") {
						continue // bundles need OpenFlow 1.3+ in both tools
					}
					if v == "OpenFlow11" && slices.ContainsFunc(st.args, func(a string) bool { return slices.Contains(of11MatchCommands, a) }) &&
						!slices.Contains(st.args, "nosuchbr") && !slices.Contains(st.args, "tcp:127.0.0.1:1") && !slices.Contains(st.args, "unix:refused.sock") {
						continue
					}
					seen[key] = true
					var got [2]string
					for i, bin := range []string{"ovs-ofctl", gvsOfctl} {
						reset()
						got[i] = runOnline(t, env, dir, bin, st) + "table after:\n" + runOnline(t, env, dir, "ovs-ofctl", state)
					}
					if _, known := of11Known[key]; known == (got[0] == got[1]) {
						if known {
							t.Errorf("%s: known difference gone, drop it from of11Known", key)
							continue
						}
						t.Errorf("%v differs\n--- ovs-ofctl:\n%s--- gvs-ofctl:\n%s", st.args, got[0], got[1])
					}
				}
			}
			// What gvs-ofctl says instead of sending an OpenFlow 1.1 match.
			for _, st := range []onlineStep{oc("-O", "OpenFlow11", "dump-flows", "br0"), oc("-O", "OpenFlow11", "add-flow", "br0", "actions=drop")} {
				reset()
				got := runOnline(t, env, dir, gvsOfctl, st)
				want := "stdout:\nstderr:\nofctl: OpenFlow 1.1 flow matches (ofp11_match) are not supported by gvs-ofctl; use OpenFlow10 or OpenFlow12 or later\nexit 1\n"
				if got != want {
					t.Errorf("%v: got\n%s", st.args, got)
				}
			}
		})
	}
}
