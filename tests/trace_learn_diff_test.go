package tests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/ovsoracle"
)

// traceLearnSteps are Open vSwitch's learn.at "standard VLAN+MAC
// learning": a learn action traced with a generated packet installs the
// learned flow (a trace with a packet has side effects), a trace without
// one does not.
func traceLearnSteps() []ofStep {
	const arp = "in_port(3),eth(src=50:54:00:00:00:05,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0806),arp(sip=192.168.0.1,tip=192.168.0.2,op=1,sha=50:54:00:00:00:05,tha=00:00:00:00:00:00)"
	const arp6 = "in_port(1),eth(src=50:54:00:00:00:06,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0806),arp(sip=192.168.0.1,tip=192.168.0.2,op=1,sha=50:54:00:00:00:06,tha=00:00:00:00:00:00)"
	return []ofStep{
		ofctl("add-flow", "br0", "table=0 actions=learn(table=1, hard_timeout=60, NXM_OF_VLAN_TCI[0..11], NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[], output:NXM_OF_IN_PORT[]), resubmit(,1)"),
		ofctl("add-flow", "br0", "table=1 priority=0 actions=flood"),
		appctl("ofproto/trace", "ovs-dummy", arp6),
		ofctl("dump-flows", "br0", "table=1", "--no-stats", "--sort"),
		appctl("ofproto/trace", "ovs-dummy", arp, "-generate"),
		ofctl("dump-flows", "br0", "table=1", "--no-stats", "--sort"),
		// learn.at "TCPv6 port learning": a 128-bit load is learned as
		// two 64-bit loads.
		ofctl("del-flows", "br0"),
		ofctl("add-flow", "br0", "table=0 tcp6 actions=learn(table=1, hard_timeout=60, eth_type=0x86dd, nw_proto=6, NXM_NX_IPV6_SRC[]=NXM_NX_IPV6_DST[], ipv6_dst=2001:0db8:85a3:0000:0000:8a2e:0370:7334, NXM_OF_TCP_SRC[]=NXM_OF_TCP_DST[], NXM_OF_TCP_DST[]=NXM_OF_TCP_SRC[], load(0x20010db885a308d313198a2e03707348->NXM_NX_IPV6_DST[])), flood"),
		appctl("ofproto/trace", "ovs-dummy", "in_port(3),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:06),eth_type(0x86dd),ipv6(src=fec0::2,dst=fec0::1,label=0,proto=6,tclass=0,hlimit=255,frag=no),tcp(src=40000,dst=80)", "-generate"),
		ofctl("dump-flows", "br0", "--no-stats", "--sort"),
		// learn.at "fin_timeout feature": the learned flow carries it.
		ofctl("del-flows", "br0"),
		ofctl("add-flow", "br0", "actions=learn(fin_hard_timeout=10, fin_idle_timeout=5, NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[], output:NXM_OF_IN_PORT[])"),
		appctl("ofproto/trace", "ovs-dummy", "in_port(1),eth(src=50:54:00:00:00:05,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0806),arp(sip=192.168.0.1,tip=192.168.0.2,op=1,sha=50:54:00:00:00:05,tha=00:00:00:00:00:00)", "-generate"),
		ofctl("dump-flows", "br0", "table=1", "--no-stats"),
	}
}

// learnRefreshSteps are learn.at "learn refreshes hard_age": learning an
// existing flow again restarts its hard timeout, which dump-flows shows
// as a hard_age apart from its duration.
func learnRefreshSteps() []ofStep {
	const icmp = "in_port(3),eth(src=50:54:00:00:00:07,dst=50:54:00:00:00:05),eth_type(0x0800),ipv4(src=192.168.0.2,dst=192.168.0.1,proto=1,tos=0,ttl=64,frag=no),icmp(type=0,code=0)"
	return []ofStep{
		ofctl("add-flow", "br0", "table=0 actions=learn(table=1, hard_timeout=10, NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[], output:NXM_OF_IN_PORT[]), resubmit(,1)"),
		ofctl("add-flow", "br0", "table=1 priority=0 actions=flood"),
		appctl("ofproto/trace", "ovs-dummy", icmp, "-generate"),
		{tool: "sleep", args: []string{"1100ms"}},
		appctl("ofproto/trace", "ovs-dummy", icmp, "-generate"),
		ofctl("dump-flows", "br0", "table=1"),
	}
}

// TestLearnRefreshRestartsTheHardTimeoutLikeOpenVSwitch: dump-flows
// shows the refreshed flow's hard_age, as Open vSwitch's.
func TestLearnRefreshRestartsTheHardTimeoutLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, learnRefreshSteps, func(s string) string {
		if strings.Contains(s, "ofproto/trace") {
			return "trace"
		}
		return ovsoracle.SortLines(ovsoracle.MaskAges(ovsoracle.MaskDurations(s)), 2)
	})
}

// TestTraceWithAPacketLearnsLikeOpenVSwitch: after the traces, table 1
// holds the same flows as in Open vSwitch (the traces' own text is
// compared elsewhere).
func TestTraceWithAPacketLearnsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, traceLearnSteps, func(s string) string {
		if strings.Contains(s, "ofproto/trace") {
			return "trace"
		}
		return s
	})
}

// deleteLearnedSteps are Open vSwitch's learn.at "delete_learned
// feature": flows go with the last rule whose learn(delete_learned)
// targets their table and cookie, whoever installed them, when it is
// deleted or modified to learn elsewhere, in cascades.
func deleteLearnedSteps() []ofStep {
	dump := ofctl("dump-flows", "br0", "--no-stats")
	steps := append([]ofStep{
		{tool: "file", args: []string{"flows.txt", `reg0=0x1 actions=learn(delete_learned,cookie=0x123)
reg0=0x2 actions=learn(delete_learned,cookie=0x123)
cookie=0x123, table=1, reg0=0x3 actions=drop
cookie=0x123, table=1, reg0=0x4 actions=drop
cookie=0x123, table=2, reg0=0x5 actions=drop
cookie=0x234, table=1, reg0=0x6 actions=drop
`}},
	}, dumpAfterEach(dump,
		ofctl("add-flows", "br0", "flows.txt"),
		ofctl("del-flows", "br0", "table=0 reg0=1"),
		ofctl("mod-flows", "br0", "table=0 reg0=2 actions=output:1,learn(delete_learned,cookie=0x123)"),
		ofctl("mod-flows", "br0", "table=0 reg0=2 actions=learn(delete_learned,cookie=0x234)"),
		ofctl("add-flow", "br0", "table=0 reg0=2 actions=learn(delete_learned,cookie=0x234),output:2"),
		ofctl("del-flows", "br0", "table=0"))...)
	steps = append(steps,
		ofStep{tool: "file", args: []string{"flows.txt", `reg0=0x1 actions=learn(table=1,delete_learned,cookie=0x123)
reg0=0x2 actions=learn(table=2,delete_learned,cookie=0x234)
cookie=0x123, table=1, reg0=0x3 actions=learn(table=3,delete_learned,cookie=0x345)
cookie=0x234, table=2, reg0=0x3 actions=learn(table=4,delete_learned,cookie=0x456)
cookie=0x345, table=3, reg0=0x4 actions=learn(table=5,delete_learned,cookie=0x567)
cookie=0x456, table=4, reg0=0x5 actions=learn(table=5,delete_learned,cookie=0x567)
cookie=0x567, table=5, reg0=0x6 actions=drop
cookie=0x567, table=5, reg0=0x7 actions=drop
cookie=0x567, table=5, reg0=0x8 actions=drop
`}},
		ofctl("del-flows", "br0"))
	return append(steps, dumpAfterEach(dump,
		ofctl("add-flows", "br0", "flows.txt"),
		ofctl("del-flows", "br0", "table=0 reg0=1"),
		ofctl("del-flows", "br0", "table=0 reg0=2"))...)
}

// dumpAfterEach puts dump after each step.
func dumpAfterEach(dump ofStep, steps ...ofStep) []ofStep {
	var out []ofStep
	for _, st := range steps {
		out = append(out, st, dump)
	}
	return out
}

// TestDeleteLearnedGoesByCookieLikeOpenVSwitch: the flows left after
// each step are Open vSwitch's.
func TestDeleteLearnedGoesByCookieLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	// The first line is the step's command; the flows are in hash order.
	diffOneBridgeAgainstOpenVSwitch(t, deleteLearnedSteps, func(s string) string { return ovsoracle.SortLines(s, 1) })
}

// learnLimitSteps are learn.at "limit": a learn with limit=1 keeps one
// learned flow; once it is deleted the next packet learns again.
func learnLimitSteps() []ofStep {
	recv := func(src string) ofStep {
		return appctl("netdev-dummy/receive", "p1", "in_port(1),eth(src=50:54:00:00:00:"+src+",dst=50:54:00:00:00:ff),eth_type(0x1234)")
	}
	return []ofStep{
		ofctl("add-flow", "br0", "table=0 in_port=1 actions=learn(table=1,dl_dst=dl_src,cookie=0x1,limit=1),2"),
		recv("01"), recv("02"),
		{tool: "wait", args: []string{"revalidator/wait"}},
		ofctl("dump-flows", "br0", "table=1", "--no-stats"),
		ofctl("del-flows", "br0", "table=1"),
		{tool: "wait", args: []string{"revalidator/wait"}},
		recv("02"), recv("01"),
		{tool: "wait", args: []string{"revalidator/wait"}},
		ofctl("dump-flows", "br0", "table=1", "--no-stats"),
	}
}

// TestLearnLimitLikeOpenVSwitch: the learned flows are Open vSwitch's.
func TestLearnLimitLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, learnLimitSteps)
}

// learnResultSteps are learn.at "limit result_dst" and "different limits":
// a learn with result_dst writes whether its flow is in its table, and the
// pipeline reads it (each result counts in a table 1 flow); a limit counts
// the flows of the learned table with the learn's cookie.
func learnResultSteps() []ofStep {
	recv := func(port string, dst int) ofStep {
		return appctl("netdev-dummy/receive", "p"+port, fmt.Sprintf("in_port(%s),eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:ff),"+
			"eth_type(0x0800),ipv4(src=192.168.0.1,dst=192.168.0.2,proto=17,tos=0,ttl=64,frag=no),udp(src=1,dst=%d)", port, dst))
	}
	steps := []ofStep{
		{tool: "file", args: []string{"flows.txt", `table=0 in_port=1 udp,actions=learn(table=11,dl_type=0x0800,nw_proto=17,udp_src=udp_dst,limit=1,result_dst=reg0[0]),resubmit(,1)
table=0 in_port=2 udp,actions=learn(table=12,cookie=0x5,dl_type=0x0800,nw_proto=17,udp_src=udp_dst,limit=3,result_dst=reg0[0]),resubmit(,1)
table=0 in_port=3 udp,actions=learn(table=12,cookie=0x5,dl_type=0x0800,nw_proto=17,udp_src=udp_dst,limit=4,result_dst=reg0[0]),resubmit(,1)
table=1 cookie=1,reg0=1,in_port=1 actions=drop
table=1 cookie=2,reg0=1,in_port=2 actions=drop
table=1 cookie=3,reg0=1,in_port=3 actions=drop
table=1 cookie=1,reg0=0,in_port=1 actions=drop
table=1 cookie=2,reg0=0,in_port=2 actions=drop
table=1 cookie=3,reg0=0,in_port=3 actions=drop
`}},
		ofctl("add-flows", "br0", "flows.txt"),
	}
	// Ports 2 and 3 learn into the same table with the same cookie: port
	// 3's limit of 4 counts port 2's three flows.
	for dst := 1001; dst <= 1005; dst++ {
		steps = append(steps, recv("1", dst), recv("2", dst), recv("3", dst+100))
	}
	// A packet whose flow is already learned finds it: result 1 again.
	steps = append(steps, recv("1", 1001), settle, settle,
		ofctl("dump-flows", "br0", "table=1"),
		ofctl("dump-flows", "br0", "table=11", "--no-stats"),
		ofctl("dump-flows", "br0", "table=12", "--no-stats"))
	return steps
}

// TestLearnResultAndLimitsLikeOpenVSwitch: the results, their counts and
// the learned flows are Open vSwitch's.
func TestLearnResultAndLimitsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, learnResultSteps, ovsoracle.MaskDurations, func(s string) string { return ovsoracle.SortLines(s, 1) })
}
