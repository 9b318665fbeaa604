package tests

import (
	"fmt"
	"strings"
	"testing"
)

// bundleTrace traces a packet from LOCAL with the given Ethernet source
// and L3/L4 fields.
func bundleTrace(src, rest string) ofStep {
	return appctl("ofproto/trace", "br0", "in_port=LOCAL,dl_src="+src+",dl_dst=50:54:00:00:00:06"+rest)
}

// bundleSteps are Open vSwitch's "bundle action with ports up and down"
// and "bundle_load action with ports down" checks, widened: every hash
// field set and both algorithms over many flows (the member each flow
// gets is Open vSwitch's), members going down and up by port_mod, a
// bundle with no live member, and multipath with each algorithm.
func bundleSteps() []ofStep {
	flows := []string{
		"eth_src,50,active_backup,ofport,members:1,2",
		"eth_src,50,hrw,ofport,members:1,2,3",
		"symmetric_l4,60,hrw,ofport,members:1,2,3",
		"symmetric_l3l4,7,hrw,ofport,members:3,2,1",
		"symmetric_l3l4+udp,0,hrw,ofport,members:1,2,3",
		"nw_src,5,hrw,ofport,members:1,2,3",
		"nw_dst,5,hrw,ofport,members:2,3",
		"symmetric_l3,60,hrw,ofport,members:1,3",
	}
	pkts := []string{
		"", // no L3: the L3 hashes fall back or hash nothing
		",tcp,nw_src=10.0.0.1,nw_dst=10.0.0.2,tp_src=1000,tp_dst=80",
		",tcp,nw_src=10.0.0.2,nw_dst=10.0.0.1,tp_src=80,tp_dst=1000",
		",udp,nw_src=192.168.1.7,nw_dst=10.9.8.7,udp_src=53,udp_dst=5353",
		",icmp,nw_src=172.16.0.1,nw_dst=172.16.0.9,icmp_type=8,icmp_code=0",
		",tcp6,ipv6_src=2001:db8::1,ipv6_dst=2001:db8::2,tp_src=443,tp_dst=55555",
		",udp,nw_src=10.0.0.1,nw_dst=10.0.0.2,nw_frag=first,udp_src=1,udp_dst=2",
	}
	srcs := []string{"50:54:00:00:00:05", "50:54:00:00:00:07", "00:11:22:33:44:55", "fe:ff:ff:ff:ff:01"}
	var s []ofStep
	for _, f := range flows {
		s = append(s, ofctl("add-flow", "br0", "actions=bundle("+f+")"), ofctl("dump-flows", "br0", "--no-stats"))
		for _, src := range srcs {
			for _, p := range pkts {
				s = append(s, bundleTrace(src, p))
			}
		}
	}
	// Members going down and up (port_mod), as bundle.at.
	s = append(s, ofctl("add-flow", "br0", "actions=bundle(eth_src,50,active_backup,ofport,members:1,2)"))
	for _, m := range [][2]string{{"p1", "up"}, {"p2", "up"}, {"p1", "down"}, {"p2", "down"}, {"p1", "up"}, {"p2", "up"}} {
		s = append(s, ofctl("mod-port", "br0", m[0], m[1]), bundleTrace("50:54:00:00:00:05", ""))
	}
	s = append(s, ofctl("add-flow", "br0", "actions=bundle(symmetric_l4,60,hrw,ofport,members:1,2,3)"))
	for _, m := range [][2]string{{"p2", "down"}, {"p3", "down"}, {"p1", "down"}, {"p2", "up"}} {
		s = append(s, ofctl("mod-port", "br0", m[0], m[1]))
		for _, p := range pkts[1:4] {
			s = append(s, bundleTrace("50:54:00:00:00:05", p))
		}
	}
	// bundle_load with no live member loads OFPP_NONE.
	s = append(s, ofctl("add-flow", "br0", "actions=bundle_load(eth_src,50,hrw,ofport,OXM_OF_ETH_SRC[0..15],members:1,2)"),
		ofctl("mod-port", "br0", "p1", "down"), ofctl("mod-port", "br0", "p2", "down"),
		bundleTrace("50:54:00:00:00:05", ""))
	s = append(s, ofctl("mod-port", "br0", "p2", "up"), bundleTrace("50:54:00:00:00:05", ""),
		ofctl("add-flow", "br0", "actions=bundle_load(symmetric_l3l4,3,active_backup,ofport,NXM_NX_REG1[16..31],members:3,1,2),output:NXM_NX_REG1[16..31]"),
		bundleTrace("50:54:00:00:00:05", pkts[1]))
	// multipath, every algorithm, several link counts.
	for _, alg := range []string{"modulo_n", "hash_threshold", "hrw", "iter_hash"} {
		for _, n := range []int{1, 3, 4, 70} {
			for _, fields := range []string{"eth_src", "symmetric_l4", "symmetric_l3l4+udp", "nw_dst"} {
				s = append(s, ofctl("add-flow", "br0", fmt.Sprintf("actions=multipath(%s,50,%s,%d,5,NXM_NX_REG0[0..7]),output:NXM_NX_REG0[0..7]", fields, alg, n)))
				for _, src := range srcs[:2] {
					for _, p := range pkts[1:6] {
						s = append(s, bundleTrace(src, p))
					}
				}
			}
		}
	}
	// Real packets: multipath picks one of three links (table 1 sends
	// each to a port), then bundle(hrw) over live members; the megaflows
	// (hash fields exact) are Open vSwitch's.
	s = append(s, ofctl("del-flows", "br0"), appctl("dpctl/del-flows"),
		ofctl("mod-port", "br0", "p1", "up"), ofctl("mod-port", "br0", "p2", "up"), ofctl("mod-port", "br0", "p3", "up"),
		ofctl("add-flow", "br0", "in_port=1,actions=multipath(symmetric_l3l4+udp,7,hash_threshold,3,0,NXM_NX_REG0[0..1]),resubmit(,1)"),
		ofctl("add-flow", "br0", "table=1,reg0=0,actions=output:2"),
		ofctl("add-flow", "br0", "table=1,reg0=1,actions=output:3"),
		ofctl("add-flow", "br0", "table=1,reg0=2,actions=output:LOCAL"),
		ofctl("add-flow", "br0", "in_port=2,actions=bundle(symmetric_l4,60,hrw,ofport,members:1,3)"))
	for i := 0; i < 6; i++ {
		for _, port := range []string{"1", "2"} {
			s = append(s, appctl("netdev-dummy/receive", "p"+port, fmt.Sprintf(
				"in_port(%s),eth(src=50:54:00:00:00:0%d,dst=50:54:00:00:00:09),eth_type(0x0800),ipv4(src=10.0.%d.1,dst=10.0.0.2,proto=17,tos=0,ttl=64,frag=no),udp(src=%d,dst=53)",
				port, i, i, 1000+i)))
		}
	}
	return append(s, appctl("dpctl/dump-flows"))
}

// TestBundleAndMultipathLikeOpenVSwitch: the bundle, bundle_load and
// multipath actions choose the member or link Open vSwitch chooses for
// every hash field set and algorithm, follow the members' liveness, and
// give the same final flow, megaflow and datapath actions.
func TestBundleAndMultipathLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, bundleSteps)
}

var _ = strings.Contains
