package tests

import "testing"

// ipWriteSteps trace IPv4 and IPv6 header writes (set_field on
// addresses, mod_nw_tos, mod_nw_ttl, dec_ttl, mod_tp_dst) over ICMP, TCP
// and UDP packets: which fields the megaflow matches (nw_proto only where
// Open vSwitch reads it) and the set actions committed.
func ipWriteSteps() []ofStep {
	icmp := "in_port=1,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,dl_type=0x0800,nw_src=192.168.0.1,nw_dst=192.168.0.2,nw_proto=1,nw_tos=0,nw_ttl=128,nw_frag=no,icmp_type=8,icmp_code=0"
	tcp := "in_port=2,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,dl_type=0x0800,nw_src=192.168.0.1,nw_dst=192.168.0.2,nw_proto=6,nw_tos=0,nw_ttl=64,nw_frag=no,tp_src=1000,tp_dst=80"
	udp6 := "in_port=3,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,dl_type=0x86dd,ipv6_src=2001:db8::1,ipv6_dst=2001:db8::2,nw_proto=17,nw_tos=0,nw_ttl=64,nw_frag=no,udp_src=1000,udp_dst=53"
	s := []ofStep{
		ofctl("add-flow", "br0", "in_port=1,ip,actions=set_field:192.168.3.90->ip_src,mod_nw_tos:4,output:2"),
		ofctl("add-flow", "br0", "in_port=2,ip,actions=dec_ttl,mod_nw_ttl:9,output:1,mod_tp_dst:81,output:3"),
		ofctl("add-flow", "br0", "in_port=3,ipv6,actions=set_field:2001:db8::9->ipv6_src,dec_ttl,output:1"),
	}
	for _, f := range []string{icmp, tcp, udp6} {
		s = append(s, appctl("ofproto/trace", "br0", f))
	}
	return s
}

// TestIPHeaderWritesMaskLikeOpenVSwitch: IP header writes add to the
// megaflow only the fields Open vSwitch's translation reads.
func TestIPHeaderWritesMaskLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, ipWriteSteps, keepTraceResult)
}

// actionSetWriteSteps are ofproto-dpif.at's "write actions": a set_field
// in the action set, one in a later table's actions, and outputs around
// them.
func actionSetWriteSteps() []ofStep {
	return []ofStep{
		ofctl("-O", "OpenFlow12", "add-flow", "br0", "table=0,in_port=1,ip,actions=output:2,write_actions(set_field:192.168.3.90->ip_src,output:3),goto_table:1"),
		ofctl("-O", "OpenFlow12", "add-flow", "br0", "table=1,ip,actions=write_actions(output:LOCAL),goto_table:2"),
		ofctl("-O", "OpenFlow12", "add-flow", "br0", "table=2,ip,actions=set_field:192.168.3.91->ip_src,output:3"),
		appctl("ofproto/trace", "br0", "in_port=1,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,dl_type=0x0800,nw_src=192.168.0.1,nw_dst=192.168.0.2,nw_proto=1,nw_tos=0,nw_ttl=128,nw_frag=no,icmp_type=8,icmp_code=0"),
	}
}

// TestActionSetWritesMaskLikeOpenVSwitch: writes in the action set and
// in later tables match what Open vSwitch's megaflow matches.
func TestActionSetWritesMaskLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, actionSetWriteSteps, keepTraceResult)
}
