package tests

import "testing"

// TestCtLabelFromOpenFlow10SetFieldLikeOpenVSwitch commits a connection
// with exec(set_field:1->ct_label) sent by ovs-ofctl over OpenFlow 1.0
// (which carries the 128-bit write as two 64-bit loads), then matches the
// reply on ct_label=1, as Open vSwitch's "conntrack - ct_label datapath
// flow" test does: the datapath ct action carries one label (label=0x1),
// the reply is forwarded, and the megaflows, rule counters and conntrack
// entry are the same in gvs as in Open vSwitch.
func TestCtLabelFromOpenFlow10SetFieldLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	steps := func() []ofStep {
		return []ofStep{
			{tool: "file", args: []string{"flows.txt",
				"table=0,in_port=1,udp,tp_src=1,action=ct(commit,exec(set_field:1->ct_label)),2\n" +
					"table=0,in_port=2,ct_state=-trk,udp,action=ct(table=0)\n" +
					"table=0,in_port=2,ct_state=+trk,ct_label=1,udp,action=1\n" +
					"table=0,in_port=1,udp,tp_src=3,action=ct(commit,exec(set_field:0x5/0xf->ct_label,set_field:0x30/0xf0->ct_label,set_field:7->ct_mark)),2\n"}},
			ofctl("add-flows", "br0", "flows.txt"),
			appctl("netdev-dummy/receive", "p1", "in_port(1),eth(src=50:54:00:00:00:09,dst=50:54:00:00:00:0a),eth_type(0x0800),ipv4(src=10.1.1.1,dst=10.1.1.2,proto=17,tos=0,ttl=64,frag=no),udp(src=1,dst=2)"),
			appctl("netdev-dummy/receive", "p2", "in_port(2),eth(src=50:54:00:00:00:0a,dst=50:54:00:00:00:09),eth_type(0x0800),ipv4(src=10.1.1.2,dst=10.1.1.1,proto=17,tos=0,ttl=64,frag=no),udp(src=2,dst=1)"),
			appctl("netdev-dummy/receive", "p1", "in_port(1),eth(src=50:54:00:00:00:09,dst=50:54:00:00:00:0a),eth_type(0x0800),ipv4(src=10.1.1.1,dst=10.1.1.2,proto=17,tos=0,ttl=64,frag=no),udp(src=3,dst=4)"),
			appctl("dpctl/dump-flows"),
			appctl("dpctl/dump-conntrack"),
			appctl("revalidator/purge"),
			ofctl("--no-stats", "dump-flows", "br0"),
			ofctl("dump-flows", "br0", "in_port=2"),
		}
	}
	diffOneBridgeAgainstOpenVSwitch(t, steps)
}
