package tests

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestCTFlushByTupleLikeOpenVSwitch sends NXT_CT_FLUSH with Debian's
// `ovs-ofctl ct-flush` (Open vSwitch 3.1's flush by zone and by original
// and reply tuple, which OVN uses to drop a removed load balancer
// backend's connections) and dpctl/flush-conntrack with tuples, and
// compares the connections left after each with Open vSwitch's: a
// partial match in one zone, the same match in every zone, a full
// original tuple, a tuple that matches nothing, and the errors for bad
// tuples.
func TestCTFlushByTupleLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	udp := func(sport, dport int) ofStep {
		return appctl("netdev-dummy/receive", "p1", fmt.Sprintf("in_port(1),eth(src=50:54:00:00:00:09,dst=50:54:00:00:00:0a),eth_type(0x0800),ipv4(src=10.1.1.1,dst=172.16.0.1,proto=17,tos=0,ttl=64,frag=no),udp(src=%d,dst=%d)", sport, dport))
	}
	dump := appctl("dpctl/dump-conntrack")
	steps := func() []ofStep {
		s := []ofStep{
			{tool: "file", args: []string{"flows.txt",
				"table=0,in_port=1,udp,tp_dst=80,action=ct(commit,zone=1,nat(dst=10.1.1.10:8080)),ct(commit,zone=2,nat(dst=10.1.1.10:8080)),2\n" +
					"table=0,in_port=1,udp,tp_dst=81,action=ct(commit,zone=1,nat(dst=10.1.1.11:8080)),2\n" +
					"table=0,in_port=1,udp,tp_dst=53,action=ct(commit,zone=1),ct(commit,zone=2),2\n"}},
			ofctl("add-flows", "br0", "flows.txt"),
		}
		for sport := 1000; sport < 1003; sport++ {
			s = append(s, udp(sport, 80), udp(sport, 81), udp(sport, 53))
		}
		return append(s,
			dump,
			// Backend 10.1.1.10:8080 of VIP 172.16.0.1:80, zone 1 only.
			ofctl("ct-flush", "br0", "zone=1", "ct_nw_dst=172.16.0.1,ct_nw_proto=17,ct_tp_dst=80", "ct_nw_src=10.1.1.10,ct_tp_src=8080"),
			dump,
			// The same backend in every zone (OVN's form: no zone).
			ofctl("ct-flush", "br0", "", "ct_nw_src=10.1.1.10,ct_nw_proto=17,ct_tp_src=8080"),
			dump,
			// One connection by its full original tuple.
			ofctl("ct-flush", "br0", "zone=2", "ct_nw_src=10.1.1.1,ct_nw_dst=172.16.0.1,ct_nw_proto=17,ct_tp_src=1001,ct_tp_dst=53"),
			dump,
			// Nothing matches: nothing changes, no error.
			ofctl("ct-flush", "br0", "ct_nw_src=10.9.9.9"),
			dump,
			// dpctl's form of the same, with its errors.
			appctl("dpctl/flush-conntrack", "zone=1", "ct_nw_dst=172.16.0.1,ct_nw_proto=17,ct_tp_dst=81"),
			dump,
			appctl("dpctl/flush-conntrack", "ct_nw_src=10.1.1.1,ct_nw_dst=172.16.0.1,ct_nw_proto=17,ct_tp_src=1,ct_tp_dst=2"),
			appctl("dpctl/flush-conntrack", "ct_nw_src=10.0.0.300"),
			appctl("dpctl/flush-conntrack", "icmp_id=1"),
			appctl("dpctl/flush-conntrack", "ct_tp_dst=1"),
			appctl("dpctl/flush-conntrack", "zone=x"),
			appctl("dpctl/flush-conntrack", "zone=2"),
			dump,
			// ct-flush-zone and a flush of everything.
			ofctl("ct-flush-zone", "br0", "1"),
			dump,
		)
	}
	// Connections are dumped in hash order, and ovs-appctl prints the
	// error and its own line in either order: compare lines sorted.
	sortLines := func(s string) string {
		s = strings.ReplaceAll(s, "gvs-vswitchd", "ovs-vswitchd")
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		slices.Sort(lines)
		return strings.Join(lines, "\n")
	}
	diffOneBridgeAgainstOpenVSwitch(t, steps, sortLines)
}

// TestCTFlushLogsLikeOpenVSwitch: with ct_dpif at DBG, NXT_CT_FLUSH and
// NXT_CT_FLUSH_ZONE log the flush in Open vSwitch's words (ovs-ofctl.at
// "ct-flush-zone" and "ct-flush" read them): a zone, everything, and
// tuples of either family and protocol with or without a zone.
func TestCTFlushLogsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	steps := func() []ofStep {
		return []ofStep{
			appctl("vlog/set", "ct_dpif:dbg"),
			ofctl("ct-flush-zone", "br0", "123"),
			ofctl("ct-flush", "br0", "zone=5", "ct_nw_src=10.1.1.1,ct_nw_dst=10.1.1.2,ct_nw_proto=17,ct_tp_src=1"),
			ofctl("ct-flush", "br0", "ct_nw_src=10.1.1.3,ct_nw_dst=10.1.1.4,ct_nw_proto=17,ct_tp_src=1"),
			ofctl("ct-flush", "br0", "", "ct_nw_src=10.1.1.3,ct_nw_dst=10.1.1.4,ct_nw_proto=17,ct_tp_src=1"),
			ofctl("ct-flush", "br0", "zone=5", "", "ct_nw_src=10.1.1.3,ct_nw_dst=10.1.1.4,ct_nw_proto=17,ct_tp_src=1"),
			ofctl("ct-flush", "br0", "ct_ipv6_src=fd00::1,ct_nw_proto=58,icmp_type=128,icmp_code=0,icmp_id=7"),
			ofctl("ct-flush", "br0", "zone=7"),
			ofctl("ct-flush", "br0"),
			{tool: "log", args: []string{`\|ct_dpif\|DBG\|`}},
		}
	}
	diffOneBridgeAgainstOpenVSwitch(t, steps)
}
