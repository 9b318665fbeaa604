package tests

import "testing"

// TestTraceReportsMovedAndPoppedFieldsLikeOpenVSwitch: ofproto/trace
// prints "-> FIELD is now VALUE" after a move and a stack pop (whole
// fields formatted, parts in hex), as Open vSwitch's
// xlate_report_subfield; OVN's ARP requests are built by moving xxreg0's
// words into arp_spa and arp_tpa, and a flow that rewrites ARP fields is
// slow-pathed as Open vSwitch's commit_set_arp_action makes it.
func TestTraceReportsMovedAndPoppedFieldsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	steps := func() []ofStep {
		return []ofStep{
			ofctl("add-flow", "br0", "in_port=1,udp,actions=set_field:0xac100164->reg0,set_field:0xac100101->reg1,set_field:ff:ff:ff:ff:ff:ff->eth_dst,move:NXM_NX_XXREG0[64..95]->NXM_OF_IP_SRC[],move:NXM_NX_XXREG0[96..127]->NXM_OF_IP_DST[],output:2"),
			ofctl("add-flow", "br0", "in_port=1,arp,actions=set_field:0xac100164->reg0,set_field:0xac100101->reg1,set_field:ff:ff:ff:ff:ff:ff->eth_dst,move:NXM_NX_XXREG0[64..95]->NXM_OF_ARP_SPA[],move:NXM_NX_XXREG0[96..127]->NXM_OF_ARP_TPA[],set_field:1->arp_op,output:2"),
			ofctl("add-flow", "br0", "in_port=1,icmp,actions=push:NXM_NX_REG0[],push:NXM_OF_IP_SRC[],pop:NXM_NX_REG2[],pop:NXM_NX_REG3[0..15],move:NXM_OF_IP_SRC[0..7]->NXM_NX_REG4[8..15],output:2"),
			appctl("ofproto/trace", "br0", "in_port=1,udp,dl_src=00:00:02:01:02:03,nw_src=172.16.1.110,nw_dst=172.16.1.100"),
			appctl("ofproto/trace", "br0", "in_port=1,arp,dl_src=00:00:02:01:02:03,dl_dst=00:00:00:00:00:00,arp_spa=172.16.1.110,arp_tpa=172.16.1.100,arp_op=1,arp_sha=00:00:02:01:02:03"),
			appctl("ofproto/trace", "br0", "in_port=1,icmp,reg0=0x12345678,nw_src=10.0.0.1,nw_dst=10.0.0.2"),
		}
	}
	diffOneBridgeAgainstOpenVSwitch(t, steps)
}
