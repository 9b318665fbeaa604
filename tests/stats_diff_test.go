package tests

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// statsSteps send packets through a megaflow and through a patch port
// by packet-out, then dump the datapath flows, the rules and the
// tables: the packet that made the megaflow is the rules' and the
// tables', not the megaflow's (Open vSwitch's datapaths count only the
// packets a flow matched), a patch peer's lookups are its own bridge's,
// and groups count what went through them. Then translations that fail
// on the depth, resubmit and stack limits.
func statsSteps() []ofStep {
	const pkt = "in_port(1),eth(src=50:54:00:00:00:09,dst=50:54:00:00:00:0a),eth_type(0x1234)"
	of13 := func(args ...string) ofStep { return ofctl(append([]string{"-O", "OpenFlow13"}, args...)...) }
	s := []ofStep{
		ofctl("add-flow", "br0", "in_port=1,actions=mod_vlan_vid:3,output:2"),
		appctl("netdev-dummy/receive", "p1", pkt),
		appctl("netdev-dummy/receive", "p1", pkt),
		appctl("netdev-dummy/receive", "p1", pkt),
		settle,
		appctl("dpif/dump-flows", "br0"),
		ofctl("dump-flows", "br0"),
		of13("dump-tables", "br0"),
		// A packet-out through a patch port into a bridge that misses.
		{"ovs-vsctl", []string{"add-br", "br1", "--", "set", "bridge", "br1", "datapath_type=dummy", "fail-mode=secure",
			"--", "add-port", "br0", "patch0", "--", "set", "interface", "patch0", "type=patch", "options:peer=patch1", "ofport_request=10",
			"--", "add-port", "br1", "patch1", "--", "set", "interface", "patch1", "type=patch", "options:peer=patch0", "ofport_request=11"}},
		of13("packet-out", "br0", "CONTROLLER", "output:10", "50540000000a5054000000091234"),
		of13("packet-out", "br0", "CONTROLLER", "output:10", "50540000000a5054000000091234"),
		of13("dump-tables", "br0"),
		of13("dump-tables", "br1"),
		ofctl("del-flows", "br0"),
		// Group statistics: an all group counts once per packet and in
		// every bucket; a select group in the bucket it picked.
		of13("add-group", "br0", "group_id=1,type=all,bucket=output:2,bucket=output:3"),
		of13("add-group", "br0", "group_id=2,type=select,bucket=output:2,weight=2000,bucket=output:3,weight=0"),
		of13("add-flow", "br0", "in_port=1,actions=group:1"),
		of13("add-flow", "br0", "in_port=2,actions=write_actions(group:2)"),
		appctl("netdev-dummy/receive", "p1", pkt),
		appctl("netdev-dummy/receive", "p1", pkt),
		appctl("netdev-dummy/receive", "p2", strings.Replace(pkt, "in_port(1)", "in_port(2)", 1)),
		appctl("netdev-dummy/receive", "p2", strings.Replace(pkt, "in_port(1)", "in_port(2)", 1)),
		appctl("netdev-dummy/receive", "p2", strings.Replace(pkt, "in_port(1)", "in_port(2)", 1)),
		settle,
		of13("dump-group-stats", "br0"),
		ofctl("del-flows", "br0"),
		of13("del-groups", "br0"),
	}
	// Open vSwitch's "backward resubmit" and "exponential resubmit
	// chain" pipelines.
	var back, chain []string
	back = append(back, "table=0,actions=resubmit(,66)")
	for i := 2; i <= 66; i++ {
		back = append(back, fmt.Sprintf("table=%d,actions=resubmit(,%d)", i, i-1))
	}
	back = append(back, "table=1,actions=local")
	for i := 1; i <= 64; i++ {
		chain = append(chain, fmt.Sprintf("in_port=%d,actions=resubmit:%d,resubmit:%d,local", i, i+1, i+1))
	}
	chain = append(chain, "in_port=65,actions=local")
	s = append(s, ofStep{tool: "file", args: []string{"flows.txt", strings.Join(back, "\n") + "\n"}},
		ofctl("add-flows", "br0", "flows.txt"),
		appctl("ofproto/trace", "br0", "eth_dst=ff:ff:ff:ff:ff:ff"),
		ofctl("del-flows", "br0"),
		ofctl("add-flow", "br0", "actions=resubmit:1,resubmit:2,output:3"),
		appctl("ofproto/trace", "br0", "eth_dst=ff:ff:ff:ff:ff:ff"),
		ofctl("del-flows", "br0"),
		ofStep{tool: "file", args: []string{"flows.txt", strings.Join(chain, "\n") + "\n"}},
		ofctl("add-flows", "br0", "flows.txt"),
		appctl("ofproto/trace", "br0", "in_port=1"),
		ofctl("del-flows", "br0"),
		ofStep{tool: "file", args: []string{"flows.txt", stackChain()}},
		ofctl("add-flows", "br0", "flows.txt"),
		appctl("ofproto/trace", "br0", "in_port=1"),
	)
	return s
}

// stackChain is Open vSwitch's "stack too deep" pipeline: 4,096 paths
// to a rule that pushes a register eight times.
func stackChain() string {
	var fl []string
	for i := 1; i <= 12; i++ {
		fl = append(fl, fmt.Sprintf("in_port=%d,actions=resubmit:%d,resubmit:%d,local", i, i+1, i+1))
	}
	push := "push:NXM_NX_REG0[]"
	return strings.Join(append(fl, "in_port=13,actions="+strings.Repeat(push+",", 7)+push), "\n") + "\n"
}

// traceErrors keeps, of a trace, the command, its error reports and its
// last line; other steps whole.
func traceErrors(s string) string {
	last := s[strings.LastIndexByte(strings.TrimRight(s, "\n"), '\n')+1:]
	return keepTraceLines(s, func(l string) bool {
		return strings.Contains(l, ">>>>") || l == strings.TrimRight(last, "\n")
	})
}

// TestStatisticsAndTranslationLimitsLikeOpenVSwitch requires Open
// vSwitch's datapath flow, rule and table counters for statsSteps, and
// its words when a translation goes too deep or resubmits too often.
func TestStatisticsAndTranslationLimitsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, statsSteps, traceErrors)
}

// finTimeoutSteps are Open vSwitch's "fin_timeout" check: a SYN through
// the rule leaves its timeouts alone, a FIN reduces them to the
// action's, on the packet that makes the megaflow and on one the
// megaflow counts alike; the megaflow matches nw_proto.
func finTimeoutSteps() []ofStep {
	const (
		syn = "0021853763af0026b98cb0f908004500003c2e2440004006465dac11370dac11370b828b0016751e267b00000000a00216d017360000020405b40402080a2d25085f0000000001030307"
		fin = "0021853763af0026b98cb0f90800451000342e3e40004006463bac11370dac11370b828b0016751e319dfc96399b801100717ae800000101080a2d250a9408579588"
	)
	return []ofStep{
		ofctl("add-flow", "br0", "idle_timeout=60,actions=fin_timeout(idle_timeout=5)"),
		ofctl("add-flow", "br0", "in_port=1,idle_timeout=60,hard_timeout=90,actions=fin_timeout(idle_timeout=7,hard_timeout=30),2"),
		appctl("ofproto/trace", "br0", "in_port=1,tcp,tcp_flags=fin"),
		appctl("netdev-dummy/receive", "br0", syn),
		settle,
		ofctl("dump-flows", "br0"),
		appctl("netdev-dummy/receive", "br0", fin),
		appctl("netdev-dummy/receive", "p1", syn),
		appctl("netdev-dummy/receive", "p1", syn),
		settle,
		ofctl("dump-flows", "br0"),
		appctl("netdev-dummy/receive", "p1", fin),
		settle,
		ofctl("dump-flows", "br0"),
	}
}

// TestFinTimeoutLikeOpenVSwitch: fin_timeout reduces the timeouts of
// its rule when a FIN goes through it, as in Open vSwitch.
func TestFinTimeoutLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, finTimeoutSteps, traceResult)
}

// dumpFilterSteps make megaflows of different shapes and list them with
// dpctl/dump-flows filters in Open vSwitch's syntax (an OpenFlow flow,
// "key(value)" taken as key=value, in_port a datapath port) and bad
// ones. A partly masked field prints the first packet's value under the
// mask (tcp(dst=17/0xfff0)), as Open vSwitch's userspace datapath.
func dumpFilterSteps() []ofStep {
	const (
		tcp = "in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=6,tos=0,ttl=64,frag=no),tcp(src=100,dst=17)"
		udp = "in_port(2),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=17,tos=0,ttl=64,frag=no),udp(src=100,dst=16)"
	)
	s := []ofStep{
		ofctl("add-flow", "br0", "priority=75,tcp,tp_dst=0/0xfff0,actions=drop"),
		ofctl("add-flow", "br0", "priority=50,tcp,actions=output:3"),
		ofctl("add-flow", "br0", "priority=40,in_port=2,actions=output:1"),
		appctl("netdev-dummy/receive", "p1", tcp),
		appctl("netdev-dummy/receive", "p2", udp),
	}
	for _, f := range []string{"in_port(1),tcp", "tcp", "in_port=2", "udp,nw_src=10.0.0.1", "tcp,tp_dst=16", "tcp,tp_dst=17", "ip", "in_port(1),eth_type(0x0800)", "bogus=1"} {
		s = append(s, appctl("dpctl/dump-flows", "filter="+f))
	}
	return s
}

// TestDumpFlowsFilterLikeOpenVSwitch: dpctl/dump-flows filter= selects
// the megaflows Open vSwitch's does.
func TestDumpFlowsFilterLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	// An error's lines come in either order through CombinedOutput
	// (ovs-appctl writes the reply, then its own line, to stderr).
	diffOneBridgeAgainstOpenVSwitch(t, dumpFilterSteps, func(s string) string {
		s = strings.ReplaceAll(s, "gvs-vswitchd", "ovs-vswitchd")
		if !strings.Contains(s, "[exit 2]") {
			return s
		}
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		slices.Sort(lines[1:])
		return strings.Join(lines, "\n")
	})
}

// modifyInPlaceSteps are Open vSwitch's "in place modification (vlan)"
// check: when the flow tables change so that an installed megaflow's
// mask still covers what the new translation needs, the revalidator
// changes its actions in place and it keeps its statistics.
func modifyInPlaceSteps() []ofStep {
	const pkt = "in_port(1),eth(src=50:54:00:00:00:09,dst=50:54:00:00:00:0a),eth_type(0x1234)"
	send3 := []ofStep{appctl("netdev-dummy/receive", "p1", pkt), appctl("netdev-dummy/receive", "p1", pkt), appctl("netdev-dummy/receive", "p1", pkt)}
	s := []ofStep{
		ofctl("-O", "OpenFlow11", "mod-table", "br0", "all", "drop"),
		ofctl("add-flow", "br0", "in_port=1,actions=output:2"),
	}
	s = append(s, send3...)
	s = append(s, appctl("dpif/dump-flows", "br0"), ofctl("del-flows", "br0"), appctl("revalidator/wait"), appctl("revalidator/wait"))
	s = append(s, send3...)
	s = append(s, appctl("dpif/dump-flows", "br0"), ofctl("add-flow", "br0", "in_port=1,vlan_tci=0x0000/0x1fff,actions=output:2"),
		appctl("revalidator/wait"), appctl("revalidator/wait"))
	s = append(s, send3...)
	return append(s, appctl("dpif/dump-flows", "br0"))
}

func TestRevalidationModifiesMegaflowsInPlaceLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, modifyInPlaceSteps)
}
