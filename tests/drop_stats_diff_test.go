package tests

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// dropStatsSteps drop packets for each reason Open vSwitch counts
// (drop-stats.at): the pipeline's own drop (a megaflow whose datapath
// action is the explicit drop), translation too deep, too many
// resubmits, too much stack, too many MPLS labels; the coverage counters
// are read after each.
func dropStatsSteps() []ofStep {
	icmp := "in_port(1),packet_type(ns=0,id=0),eth(src=3a:6d:d2:09:9c:ab,dst=1e:2c:e9:2a:66:9e),ipv4(src=192.168.10.10,dst=192.168.10.30,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)"
	recv := appctl("netdev-dummy/receive", "p1", icmp)
	read := func(c string) ofStep { return appctl("coverage/read-counter", "drop_action_"+c) }
	settle := appctl("time/warp", "1000")
	var resubmits, deep strings.Builder
	for i := 1; i <= 64; i++ {
		fmt.Fprintf(&resubmits, "in_port=%d,actions=resubmit:%d,resubmit:%d,local\n", i, i+1, i+1)
	}
	resubmits.WriteString("in_port=65,actions=local\n")
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&deep, "in_port=%d,actions=resubmit:%d,resubmit:%d,local\n", i, i+1, i+1)
	}
	deep.WriteString("in_port=13,actions=" + strings.Repeat("push:NXM_NX_REG0[],", 7) + "push:NXM_NX_REG0[]\n")
	return []ofStep{
		ofctl("add-flow", "br0", "in_port=1,actions=drop"),
		recv, recv, recv,
		appctl("dpctl/dump-flows"),
		settle, read("of_pipeline"),
		ofctl("del-flows", "br0"),
		{tool: "file", args: []string{"loop.txt", "table=0,in_port=1,actions=goto_table:1\ntable=1,in_port=1,actions=goto_table:2\ntable=2,in_port=1,actions=resubmit(,1)\n"}},
		ofctl("-O", "OpenFlow13", "add-flows", "br0", "loop.txt"),
		appctl("revalidator/purge"), recv,
		settle, read("recursion_too_deep"),
		ofctl("del-flows", "br0"),
		{tool: "file", args: []string{"resubmits.txt", resubmits.String()}},
		ofctl("add-flows", "br0", "resubmits.txt"),
		appctl("revalidator/purge"), recv,
		settle, read("too_many_resubmit"),
		ofctl("del-flows", "br0"),
		{tool: "file", args: []string{"deep.txt", deep.String()}},
		ofctl("add-flows", "br0", "deep.txt"),
		appctl("revalidator/purge"), recv,
		settle, read("stack_too_deep"),
		ofctl("del-flows", "br0"),
		{tool: "file", args: []string{"mpls.txt", "table=0,in_port=1,actions=push_mpls:0x8847,resubmit:3\n" +
			"table=0,in_port=3,actions=push_mpls:0x8847,set_field:10->mpls_label,set_field:15->mpls_label,resubmit:4\n" +
			"table=0,in_port=4,actions=push_mpls:0x8847,set_field:11->mpls_label,resubmit:5\n" +
			"table=0,in_port=5,actions=push_mpls:0x8847,set_field:12->mpls_label,resubmit:6\n" +
			"table=0,in_port=6,actions=push_mpls:0x8847,set_field:13->mpls_label,output:2\n"}},
		ofctl("-O", "OpenFlow13", "add-flows", "br0", "mpls.txt"),
		appctl("revalidator/purge"), recv,
		settle, read("too_many_mpls_labels"), read("of_pipeline"),
	}
}

// TestDropStatisticsLikeOpenVSwitch: translations that forward nothing
// end in the explicit drop action, and the datapath counts the packets
// it drops under Open vSwitch's drop_action_* coverage counters.
func TestDropStatisticsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	used := regexp.MustCompile(`used:[0-9.]+s`)
	diffOneBridgeAgainstOpenVSwitch(t, dropStatsSteps, func(s string) string { return used.ReplaceAllString(s, "used:<t>") })
}

// recursionSteps are ofproto-dpif.at's "backward resubmit without
// trace": 66 tables resubmitting backwards run past the translation
// depth; the switch logs the warning and then the packet's whole trace.
func recursionSteps() []ofStep {
	var fl strings.Builder
	fl.WriteString("table=0,actions=resubmit(,66)\n")
	for i := 2; i <= 66; i++ {
		fmt.Fprintf(&fl, "table=%d,actions=resubmit(,%d)\n", i, i-1)
	}
	fl.WriteString("table=1,actions=local\n")
	return []ofStep{
		{tool: "file", args: []string{"flows.txt", fl.String()}},
		ofctl("add-flows", "br0", "flows.txt"),
		appctl("netdev-dummy/receive", "p1", "in_port(1),eth(src=50:54:00:00:00:09,dst=50:54:00:00:00:0a),eth_type(0x1234)"),
		{tool: "sleep", args: []string{"1s"}},
		logStep(`ofproto_dpif_xlate\||^ *resubmit|^ *\d+\. |packet is dropped|^Flow: |^Final flow|^Megaflow|^Datapath actions`),
	}
}

// TestRecursionTooDeepLogsTheTraceLikeOpenVSwitch: the warning and the
// trace logged for a packet whose translation recursed too deep are Open
// vSwitch's, line for line.
func TestRecursionTooDeepLogsTheTraceLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	// Both logs must hold the warning and the 66 resubmits of the trace
	// (an empty match on both sides would compare equal).
	full := 0
	diffOneBridgeAgainstOpenVSwitch(t, recursionSteps, func(s string) string {
		if strings.HasPrefix(s, "$ log ") && strings.Contains(s, "ofproto_dpif_xlate|WARN|over max translation depth 64 on bridge br0") &&
			strings.Count(s, "resubmit(,") == 66 && strings.Contains(s, "packet is dropped") {
			full++
		}
		return s
	})
	if full != 2 {
		t.Errorf("%d of the 2 logs hold the warning and the whole trace", full)
	}
}
