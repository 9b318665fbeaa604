package tests

import "testing"

// TestMaskedXregWriteSurvivesCtRecirculationLikeOpenVSwitch follows the
// shape of OVN's router pipeline with a load balancer and SNAT in
// separate zones: a select group (dp_hash) commits the load balancer's
// DNAT with a ct_mark bit, a masked write to xreg4 (reg9 is its low half)
// before ct(table=...,nat) in the same zone must still match
// reg9=0x10/0x10 after the recirculation, and the SNAT is committed in
// the second zone; flow counters and connections as in Open vSwitch.
func TestMaskedXregWriteSurvivesCtRecirculationLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	steps := func() []ofStep {
		return []ofStep{
			{tool: "file", args: []string{"flows.txt",
				"table=0,in_port=1,ip,actions=ct(table=1,zone=3,nat)\n" +
					"table=1,ct_state=+new+trk,ip,actions=set_field:3->reg11,group:1\n" +
					"table=1,ct_state=-new+trk,ip,actions=resubmit(,2)\n" +
					"table=2,ct_mark=0x2/0x2,ip,actions=set_field:0x10/0x10->xreg4,ct(table=3,zone=3,nat)\n" +
					"table=3,priority=162,ip,reg9=0x10/0x10,actions=set_field:0/0x10->xreg4,ct(commit,table=4,zone=2,nat(src=10.9.9.9))\n" +
					"table=3,priority=161,ip,actions=ct(commit,table=4,zone=3,nat(src=10.9.9.9))\n" +
					"table=4,priority=0,actions=output:2\n"}},
			ofctl("-O", "OpenFlow15", "add-group", "br0", "group_id=1,type=select,selection_method=dp_hash,bucket=bucket_id=0,weight:100,actions=ct(commit,table=2,zone=NXM_NX_REG11[0..15],nat(dst=10.1.1.3),exec(load:1->NXM_NX_CT_MARK[1]))"),
			ofctl("add-flows", "br0", "flows.txt"),
			appctl("netdev-dummy/receive", "p1", "in_port(1),eth(src=50:54:00:00:00:09,dst=50:54:00:00:00:0a),eth_type(0x0800),ipv4(src=10.1.1.1,dst=10.1.1.2,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)"),
			appctl("netdev-dummy/receive", "p1", "in_port(1),eth(src=50:54:00:00:00:09,dst=50:54:00:00:00:0a),eth_type(0x0800),ipv4(src=10.1.1.1,dst=10.1.1.2,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)"),
			{tool: "wait", args: []string{"revalidator/wait"}},
			appctl("dpctl/dump-conntrack"),
			ofctl("--no-stats", "dump-flows", "br0"),
			ofctl("dump-flows", "br0", "table=3"),
		}
	}
	diffOneBridgeAgainstOpenVSwitch(t, steps)
}
