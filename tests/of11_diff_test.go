package tests

import "testing"

// of11Steps adds, dumps, modifies and deletes flows over OpenFlow 1.1,
// whose flow mods and flow stats requests carry the standard match
// (ofp11_match): every field it has, flows it cannot express, and dumps
// of flows added in other versions.
func of11Steps() []onlineStep {
	o11 := func(args ...string) onlineStep { return oc(append([]string{"-O", "OpenFlow11"}, args...)...) }
	return []onlineStep{
		o11("dump-flows", "br0"),
		o11("add-flow", "br0", "in_port=1,dl_src=00:00:00:00:00:01/ff:ff:ff:00:00:00,dl_dst=00:00:00:00:00:02,dl_vlan=7,dl_vlan_pcp=3,tcp,nw_src=10.0.0.0/8,nw_dst=10.1.2.3,nw_tos=8,tp_src=1,tp_dst=80,actions=output:2"),
		o11("add-flow", "br0", "priority=5,icmp,icmp_type=8,icmp_code=0,metadata=0x5/0xff,actions=drop"),
		o11("add-flow", "br0", "table=1,priority=6,mpls,mpls_label=17,mpls_tc=3,actions=drop"),
		o11("add-flow", "br0", "priority=7,dl_vlan=0xffff,arp,arp_spa=1.1.1.0/24,arp_op=2,actions=drop"),
		o11("add-flow", "br0", "priority=8,dl_vlan=5,udp,tp_src=53,actions=drop"),
		o11("add-flow", "br0", "priority=9,in_port=LOCAL,dl_dst=01:00:00:00:00:00/01:00:00:00:00:00,actions=output:1"),
		o11("add-flow", "br0", "priority=10,sctp,tp_dst=5,actions=drop"),
		o11("add-flow", "br0", "priority=11,ip,nw_dst=10.0.0.0/255.0.255.0,actions=drop"),
		o11("add-flow", "br0", "priority=12,dl_vlan_pcp=5,actions=drop"),
		o11("add-flow", "br0", "priority=13,rarp,nw_src=2.2.2.2,actions=drop"),
		// Matches OpenFlow 1.1 cannot carry.
		o11("add-flow", "br0", "priority=14,reg0=5,actions=drop"),
		o11("add-flow", "br0", "priority=14,tcp,tp_dst=0x50/0xfff0,actions=drop"),
		o11("add-flow", "br0", "priority=14,vlan_tci=0x1000/0x1000,actions=drop"),
		o11("dump-flows", "br0"),
		oc("-O", "OpenFlow13", "add-flow", "br0", "priority=20,reg0=5,ip,nw_ttl=9,actions=drop"),
		o11("dump-flows", "br0"),
		oc("dump-flows", "br0"),
		oc("-O", "OpenFlow13", "dump-flows", "br0"),
		o11("dump-flows", "br0", "tcp,tp_dst=80"),
		o11("dump-flows", "br0", "out_port=2"),
		o11("dump-flows", "br0", "table=1"),
		o11("dump-flows", "br0", "reg0=5"),
		o11("dump-aggregate", "br0", "metadata=0x5/0xff"),
		o11("dump-aggregate", "br0"),
		o11("mod-flows", "br0", "icmp,actions=output:3"),
		o11("--strict", "mod-flows", "br0", "priority=8,dl_vlan=5,udp,tp_src=53,actions=output:3"),
		o11("dump-flows", "br0", "ip"),
		o11("--strict", "del-flows", "br0", "priority=5,icmp,icmp_type=8,icmp_code=0,metadata=0x5/0xff"),
		o11("del-flows", "br0", "out_port=2"),
		o11("del-flows", "br0", "table=1"),
		o11("dump-flows", "br0"),
		o11("--no-stats", "dump-flows", "br0", "arp"),
		o11("del-flows", "br0"),
		oc("dump-flows", "br0"),
	}
}

// TestOpenFlow11FlowsMatchOpenVSwitch runs the OpenFlow 1.1 flow session
// with ovs-ofctl and gvs-ofctl against Open vSwitch (dummy datapath) and
// gvs-vswitchd: the same transcripts (durations and ages masked).
func TestOpenFlow11FlowsMatchOpenVSwitch(t *testing.T) {
	t.Parallel()
	compareOfctlSessions(t, of11Steps(), true)
}
