package tests

import (
	"testing"

	"github.com/gvs-project/gvs/internal/ovsoracle"
)

// prefixSteps are Open vSwitch's "flow classifier - prefix lookup" and
// "megaflow - IPv6 classification" checks, widened: the Flow_Table
// prefixes column of table 0 is changed between traces (unset, one
// IPv4 field, the IPv6 addresses, "none", a field that cannot be
// tracked) while table 1, without a Flow_Table row, keeps the defaults.
// Every trace's megaflow shows which address bits the lookup had to
// un-wildcard.
func prefixSteps() []ofStep {
	const flows = `table=0 in_port=1 priority=16,tcp,nw_dst=10.1.0.0/255.255.0.0,action=output(3)
table=0 in_port=1 priority=32,tcp,nw_dst=10.1.2.0/255.255.255.0,tp_src=79,action=output(2)
table=0 in_port=1 priority=33,tcp,nw_dst=10.1.2.15,tp_dst=80,action=drop
table=0 in_port=1 priority=0,ip,action=drop
table=0 in_port=2 priority=16,tcp,nw_src=10.1.0.0/255.255.0.0,action=output(1)
table=0 in_port=2 priority=0,ip,action=drop
table=0 in_port=3 priority=10,ipv6,ipv6_src=2001:db8:3c4d:1:2:3:4:5,action=output(2)
table=0 in_port=3 priority=10,ipv6,ipv6_dst=2001:db8::/32,action=resubmit(,1)
table=1 priority=10,tcp,nw_dst=10.1.2.0/24,action=output(1)
table=1 priority=10,ipv6,ipv6_src=2001:db8:3c4d::/48,action=output(1)
`
	vsctl := func(args ...string) ofStep { return ofStep{"ovs-vsctl", args} }
	trace := func(f string) ofStep { return appctl("ofproto/trace", "br0", f) }
	const v4 = "dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,dl_type=0x0800,nw_src=192.168.0.1,nw_proto=6,nw_tos=0,nw_ttl=128,tp_src=8,tp_dst=80"
	traces := []ofStep{
		trace("in_port=1," + v4 + ",nw_dst=192.168.0.2"),
		trace("in_port=1," + v4 + ",nw_dst=10.1.3.16"),
		trace("in_port=1," + v4 + ",nw_dst=10.1.2.15"),
		trace("in_port=2,dl_type=0x0800,nw_src=10.2.0.1,nw_dst=10.1.2.1,nw_proto=6,tp_src=1,tp_dst=2"),
		trace("in_port=3,ipv6,ipv6_src=2001:db8:3c4d:5:4:3:2:1,ipv6_dst=fe80::2,nw_proto=99"),
		trace("in_port=3,ipv6,ipv6_src=2001:db8:3c4e::1,ipv6_dst=2001:db8:1::1,nw_proto=99"),
		trace("in_port=3,ipv6,ipv6_src=2001:db8:3c4d:1:2:3:4:5,ipv6_dst=2001:db9::1,nw_proto=99"),
	}
	s := []ofStep{
		vsctl("set", "Bridge", "br0", "flow_tables:0=@N1", "--", "--id=@N1", "create", "Flow_Table", "name=t0"),
		{tool: "file", args: []string{"flows.txt", flows}},
		ofctl("add-flows", "br0", "flows.txt"),
	}
	s = append(s, traces...)
	for _, p := range []string{"prefixes=nw_dst", "prefixes=ipv6_src,ipv6_dst", "prefixes=ipv6_dst,nw_src,tun_id", "prefixes=none", "prefixes=ipv6_label", "prefixes=[]"} {
		s = append(s, vsctl("set", "Flow_Table", "t0", p), appctl("revalidator/wait"))
		s = append(s, traces...)
	}
	return s
}

// TestPrefixesColumnLikeOpenVSwitch: a Flow_Table's prefixes column
// decides, as in Open vSwitch, which address fields the lookup tracks
// in prefix tries, so every trace ends with Open vSwitch's megaflow and
// datapath actions.
func TestPrefixesColumnLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, prefixSteps, traceResult, func(s string) string { return ovsoracle.MaskUUIDs(s) })
}
