package tests

import (
	"regexp"
	"testing"
)

// ndNA is a neighbour advertisement for fd01::1 whose target link-layer
// address option (and Ethernet source) is the solicited-node multicast
// MAC, as OVN's pinctrl composes one before its actions set them.
const ndNA = "f000000102033333ff00000186dd6000000000203afffd010000000000000000000000000001fd0100000000000000000000000000028800ec6460000000fd01000000000000000000000000000102013333ff000001"

// ndSetSteps rewrite nd_tll, nd_sll and nd_target with set_field: in a
// trace, on a received packet (the megaflow and where the packet went),
// and in a packet-out (OVN's nd_na answer).
func ndSetSteps() []ofStep {
	na := "in_port=1,icmp6,icmpv6_type=136,icmpv6_code=0,ipv6_src=fd01::1,ipv6_dst=fd01::2,nd_target=fd01::1,nd_tll=33:33:ff:00:00:01"
	ns := "in_port=1,icmp6,icmpv6_type=135,icmpv6_code=0,ipv6_src=fd01::2,ipv6_dst=ff02::1:ff00:1,nd_target=fd01::1,nd_sll=f0:00:00:01:02:03"
	return []ofStep{
		ofctl("add-flow", "br0", "in_port=1,icmp6,icmp_type=136,actions=set_field:00:00:00:00:01:01->nd_tll,output:2"),
		ofctl("add-flow", "br0", "in_port=1,icmp6,icmp_type=135,actions=set_field:fd01::9->nd_target,set_field:00:00:00:00:02:02->nd_sll,output:2"),
		appctl("ofproto/trace", "br0", na), appctl("ofproto/trace", "br0", ns),
		appctl("netdev-dummy/receive", "p1", ndNA),
		appctl("dpctl/dump-flows"),
		ofctl("dump-ports", "br0", "2"),
		ofctl("-O", "OpenFlow13", "packet-out", "br0", "in_port=controller packet="+ndNA+" actions=set_field:00:00:00:00:01:01->eth_src,set_field:00:00:00:00:01:01->nd_tll,output:3"),
		ofctl("dump-ports", "br0", "3"),
	}
}

// TestNeighbourDiscoverySetFieldLikeOpenVSwitch: set_field on nd_tll,
// nd_sll and nd_target becomes set(nd(...)) in a slow-path megaflow, and
// a packet-out rewrites the option (OVN's neighbour advertisements for
// router ports come this way; before, the option kept the multicast MAC
// and hosts learned their router at 33:33:ff:...).
func TestNeighbourDiscoverySetFieldLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	used := regexp.MustCompile(`used:[0-9.]+s|duration=[0-9.]+s`)
	diffOneBridgeAgainstOpenVSwitch(t, ndSetSteps, keepTraceResult, func(s string) string { return used.ReplaceAllString(s, "used:<t>") })
}
