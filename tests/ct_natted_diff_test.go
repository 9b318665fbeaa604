package tests

import (
	"slices"
	"strings"
	"testing"
)

// TestNATedPacketReenteringItsZoneLikeOpenVSwitch is OVN's "SNAT in
// separate zone from DNAT" in OpenFlow terms: zone 1 holds a connection
// whose original tuple is a load balancer's translated one (p3's packet,
// SNATed) and the load balancer's DNAT connection (p1's packet, ct_mark
// 2). The load balanced packet on p2 goes through ct(nat) of zone 1
// again: Open vSwitch finds the load balancer's connection by the
// untranslated tuple (ct_mark 2: out of p3), not the other connection
// (out of p1); gvs found the other one.
func TestNATedPacketReenteringItsZoneLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	const (
		pkt        = "eth(src=50:54:00:00:00:09,dst=50:54:00:00:00:0a),eth_type(0x0800),ipv4(src=10.1.1.1,dst=172.16.0.1,proto=17,tos=0,ttl=64,frag=no),udp(src=4000,dst=80)"
		translated = "eth(src=50:54:00:00:00:09,dst=50:54:00:00:00:0a),eth_type(0x0800),ipv4(src=10.1.1.1,dst=10.1.1.3,proto=17,tos=0,ttl=64,frag=no),udp(src=4000,dst=53)"
	)
	steps := func() []ofStep {
		return []ofStep{
			{tool: "file", args: []string{"flows.txt",
				"table=0,in_port=3,udp,actions=ct(commit,zone=1,nat(src=10.9.9.9))\n" +
					"table=0,in_port=1,udp,actions=ct(commit,zone=1,nat(dst=10.1.1.3:53),exec(set_field:0x2/0x2->ct_mark))\n" +
					"table=0,in_port=2,udp,actions=ct(table=5,zone=1,nat)\n" +
					"table=5,udp,actions=ct(table=6,zone=1,nat)\n" +
					"table=6,priority=10,ct_mark=0x2/0x2,udp,actions=output:3\n" +
					"table=6,priority=0,actions=output:1\n"}},
			ofctl("add-flows", "br0", "flows.txt"),
			appctl("netdev-dummy/receive", "p3", "in_port(3),"+translated),
			appctl("netdev-dummy/receive", "p1", "in_port(1),"+pkt),
			appctl("netdev-dummy/receive", "p2", "in_port(2),"+pkt),
			{tool: "wait", args: []string{"revalidator/wait"}},
			appctl("dpctl/dump-conntrack"),
			ofctl("dump-flows", "br0", "table=6"),
		}
	}
	// Connections are dumped in hash order.
	sorted := func(s string) string {
		lines := strings.Split(s, "\n")
		slices.Sort(lines)
		return strings.Join(lines, "\n")
	}
	diffOneBridgeAgainstOpenVSwitch(t, steps, sorted)
}
