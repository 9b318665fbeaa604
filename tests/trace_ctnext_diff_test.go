package tests

import (
	"strings"
	"testing"
)

// ctTraceSteps are Open vSwitch's "conntrack - ofproto/trace" and
// patch-port clone checks (ofproto-dpif.at): ct() pipelines traced with
// the default resumed state and with --ct-next states, bad --ct-next
// arguments, and a patch port whose peer's first rule is not reversible
// (ct(), meter), where the peer's actions go into a datapath clone()
// unless the output is the last action.
func ctTraceSteps() []ofStep {
	const flows = `table=0,priority=100,arp,action=normal
table=0,priority=10,udp,action=ct(table=1,zone=0)
table=0,priority=10,tcp,action=ct(table=2,zone=1)
table=0,priority=1,action=drop
table=1,priority=10,in_port=1,ct_zone=0,ct_state=+trk+new,udp,action=ct(commit,zone=0),2
table=1,priority=10,in_port=1,ct_zone=0,ct_state=+trk+est,udp,action=2
table=1,priority=10,in_port=2,ct_zone=0,ct_state=+trk+est,udp,action=1
table=1,priority=1,action=drop
table=2,priority=10,in_port=1,tcp,ct_zone=1,ct_state=+trk+new,tcp,action=ct(commit,zone=1),ct(table=3,zone=2)
table=2,priority=10,in_port=1,tcp,ct_zone=1,ct_state=+trk+est,tcp,action=ct(table=3,zone=2)
table=2,priority=1,action=drop
table=3,priority=10,in_port=1,tcp,ct_zone=2,ct_state=+trk+new,tcp,action=ct(commit,zone=2),3
table=3,priority=10,in_port=1,tcp,ct_zone=2,ct_state=+trk+est,tcp,action=2
table=3,priority=10,in_port=1,tcp,ct_zone=2,ct_state=+trk+rpl,tcp,action=1
`
	trace := func(args ...string) ofStep { return appctl(append([]string{"ofproto/trace", "br0"}, args...)...) }
	s := []ofStep{
		{tool: "file", args: []string{"flows.txt", flows}},
		ofctl("add-flows", "br0", "flows.txt"),
		trace("in_port=2,udp"),
		trace("in_port=1,udp"),
		trace("in_port=1,tcp"),
		trace("in_port=1,tcp", "--ct-next", "trk,est", "--ct-next", "trk,est"),
		trace("in_port=1,tcp", "--ct-next", "trk,est"),
		trace("--ct-next", "est trk", "in_port=1,udp", "--ct-next", "trk,rpl,est"),
		trace("in_port=1,tcp", "--ct-next", "trk,new", "--ct-next", "trk,rpl,est"),
		trace("in_port=1,tcp", "--ct-next", "new,est"),
		trace("in_port=1,tcp", "--ct-next", "trk,inv,est"),
		trace("in_port=1,tcp", "--ct-next", "trk,bogus"),
		trace("in_port=1,tcp", "--ct-next"),
	}
	// A second bridge behind a patch port (ofproto-dpif.at "patch
	// ports - meter (clone)" and "no additional clone").
	s = append(s, ofStep{"ovs-vsctl", []string{"add-br", "br1", "--", "set", "bridge", "br1", "datapath_type=dummy", "fail-mode=secure",
		"--", "add-port", "br1", "p4", "--", "set", "interface", "p4", "type=dummy", "ofport_request=4",
		"--", "add-port", "br0", "patch0", "--", "set", "interface", "patch0", "type=patch", "options:peer=patch1", "ofport_request=10",
		"--", "add-port", "br1", "patch1", "--", "set", "interface", "patch1", "type=patch", "options:peer=patch0", "ofport_request=11"}})
	of13 := func(args ...string) ofStep { return ofctl(append([]string{"-O", "OpenFlow13"}, args...)...) }
	s = append(s,
		of13("add-meter", "br1", "meter=1 pktps stats bands=type=drop rate=2"),
		ofctl("del-flows", "br0"),
		of13("add-flow", "br0", "in_port=1,ip,actions=10,2"),
		of13("add-flow", "br1", "in_port=11,ip,actions=meter:1,4"),
		trace("in_port=1,tcp"),
		ofctl("del-flows", "br0"),
		of13("add-flow", "br0", "in_port=1,ip,actions=2,10"),
		trace("in_port=1,tcp"),
		ofctl("del-flows", "br0"),
		ofctl("del-flows", "br1"),
		ofctl("add-flow", "br0", "priority=10,tcp,action=push:NXM_OF_IN_PORT[],resubmit(,65),pop:NXM_OF_IN_PORT[]"),
		ofctl("add-flow", "br0", "table=65,priority=10,ip,in_port=1,action=10"),
		ofctl("add-flow", "br1", "priority=100,in_port=11,tcp,ct_state=-trk,action=ct(table=0,zone=1)"),
		ofctl("add-flow", "br1", "priority=100,in_port=11,tcp,ct_state=+trk+est,ct_zone=1,action=4"),
		trace("in_port=1,tcp", "--ct-next", "trk,est"),
		ofctl("add-flow", "br0", "table=65,priority=10,ip,in_port=1,action=10,2"),
		trace("in_port=1,tcp", "--ct-next", "trk,est"),
	)
	return s
}

// keepTraceLines reduces an ofproto/trace step to its command and the
// lines keep selects (trimmed, recirculation ids masked); other steps,
// and traces that failed, are kept whole.
func keepTraceLines(s string, keep func(line string) bool) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if !strings.Contains(lines[0], "ofproto/trace") || strings.Contains(lines[0], "[exit 2]") {
		return s
	}
	out := lines[:1]
	for _, l := range lines[1:] {
		if keep(l) {
			out = append(out, maskRecircID(strings.TrimSpace(l)))
		}
	}
	return strings.Join(out, "\n")
}

// ctTraceResult keeps, of a trace, the recirculation headers and each
// pass's Megaflow and Datapath actions.
func ctTraceResult(s string) string {
	return keepTraceLines(strings.ReplaceAll(s, "gvs-vswitchd", "ovs-vswitchd"), func(l string) bool {
		return strings.HasPrefix(l, "recirc(") || strings.HasPrefix(l, "Megaflow:") || strings.HasPrefix(l, "Datapath actions:")
	})
}

// TestTraceCtNextLikeOpenVSwitch: ofproto/trace follows ct()
// recirculations with the --ct-next states in order (then trk|new),
// refuses the states Open vSwitch refuses with its words, and wraps a
// patch peer's non-reversible actions in clone() exactly when Open
// vSwitch does; megaflows and datapath actions of every pass match.
func TestTraceCtNextLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, ctTraceSteps, ctTraceResult)
}
