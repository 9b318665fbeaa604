package tests

import "testing"

// TestZeroTunMetadataMatchesLikeOpenVSwitch is ovs-ofctl.at "diff-flows -
// tunnel metadata": ovs-ofctl encodes tun_metadata0=0 as a field with no
// bytes (a value's length is its bytes after leading zeros), which the
// switch takes as an exact zero over the mapped length; flows of other
// lengths and masks mixed with it dump and compare as Open vSwitch's.
func TestZeroTunMetadataMatchesLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	steps := func() []ofStep {
		return []ofStep{
			ofctl("add-tlv-map", "br0", "{class=0xffff,type=0,len=4}->tun_metadata0,{class=0xffff,type=1,len=8}->tun_metadata1"),
			{tool: "file", args: []string{"flows.txt", "priority=0,tun_metadata0=0,actions=drop\n" +
				"priority=1,tun_metadata1=0xef/0xff,tun_metadata0=0xabcd,actions=drop\n" +
				"priority=2,tun_metadata0=0xffffffff,actions=drop\n" +
				"priority=3,tun_metadata1=0/0xff00,actions=drop\n"}},
			ofctl("add-flows", "br0", "flows.txt"),
			ofctl("dump-flows", "br0", "--no-stats", "--sort"),
			ofctl("-O", "OpenFlow15", "dump-flows", "br0", "--no-stats", "--sort"),
			{tool: "file", args: []string{"flows.txt", "priority=2,tun_metadata0=0xffffffff,actions=drop\n" +
				"priority=0,tun_metadata0=0,actions=drop\n" +
				"priority=3,tun_metadata1=0/0xff00,actions=drop\n"}},
			ofctl("diff-flows", "br0", "flows.txt"),
			ofctl("del-flows", "br0", "--strict", "priority=0,tun_metadata0=0"),
			ofctl("dump-flows", "br0", "--no-stats", "--sort"),
		}
	}
	diffOneBridgeAgainstOpenVSwitch(t, steps)
}
