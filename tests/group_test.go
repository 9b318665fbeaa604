package tests

import (
	"strings"
	"testing"
)

// groupSession exercises groups and meters: add/modify/delete of all,
// indirect, fast-failover and select groups, flows that use them, packets
// through them, group and meter dumps and features.
func groupSession() []ofStep {
	return []ofStep{
		ofctl("del-flows", "br0"),
		ofctl("-O", "OpenFlow13", "add-group", "br0", "group_id=1,type=all,bucket=output:2,bucket=output:3"),
		ofctl("-O", "OpenFlow13", "add-group", "br0", "group_id=2,type=indirect,bucket=mod_dl_src:00:00:00:00:00:02,output:3"),
		ofctl("-O", "OpenFlow13", "add-group", "br0", "group_id=3,type=ff,bucket=watch_port:2,output:2,bucket=watch_port:3,output:3"),
		ofctl("-O", "OpenFlow13", "add-group", "br0", "group_id=1,type=all,bucket=output:2"),
		ofctl("-O", "OpenFlow13", "add-flow", "br0", "in_port=1,udp,actions=group:1"),
		ofctl("-O", "OpenFlow13", "add-flow", "br0", "in_port=1,tcp,actions=group:2"),
		ofctl("-O", "OpenFlow13", "add-flow", "br0", "in_port=1,icmp,actions=group:9"),
		ofctl("-O", "OpenFlow13", "dump-groups", "br0"),
		ofctl("-O", "OpenFlow15", "dump-groups", "br0"),
		ofctl("-O", "OpenFlow13", "dump-group-features", "br0"),
		ofctl("-O", "OpenFlow13", "mod-group", "br0", "group_id=2,type=indirect,bucket=output:2"),
		ofctl("-O", "OpenFlow13", "mod-group", "br0", "group_id=7,type=indirect,bucket=output:2"),
		appctl("netdev-dummy/receive", "p1", pktFrom1),
		settle,
		appctl("dpctl/dump-flows"),
		ofctl("-O", "OpenFlow13", "dump-flows", "br0"),
		ofctl("-O", "OpenFlow13", "del-groups", "br0", "group_id=1"),
		ofctl("-O", "OpenFlow13", "--no-stats", "dump-flows", "br0"),
		ofctl("-O", "OpenFlow13", "dump-groups", "br0"),
		ofctl("-O", "OpenFlow13", "add-meter", "br0", "meter=1,pktps,band=type=drop,rate=10"),
		ofctl("-O", "OpenFlow13", "add-meter", "br0", "meter=1,pktps,band=type=drop,rate=10"),
		ofctl("-O", "OpenFlow13", "dump-meters", "br0"),
		ofctl("-O", "OpenFlow13", "meter-features", "br0"),
		ofctl("-O", "OpenFlow13", "del-meters", "br0"),
		ofctl("-O", "OpenFlow13", "dump-meters", "br0"),
		// Meters are enforced: 6 packets in well under a second through
		// a 1 pps meter with a burst of 3 pass 3 and drop 3. A flow using
		// a missing meter is refused; deleting a meter deletes its flows.
		ofctl("del-flows", "br0"),
		ofctl("-O", "OpenFlow13", "add-meter", "br0", "meter=2,pktps,burst,band=type=drop,rate=1,burst_size=3"),
		ofctl("-O", "OpenFlow13", "add-meter", "br0", "meter=3,kbps,band=type=drop,rate=1000"),
		ofctl("-O", "OpenFlow13", "add-flow", "br0", "in_port=1,actions=meter:2,output:2"),
		ofctl("-O", "OpenFlow13", "add-flow", "br0", "in_port=3,actions=meter:4,output:2"),
		ofctl("-O", "OpenFlow13", "add-flow", "br0", "in_port=3,actions=meter:3,output:2"),
		appctl("ofproto/trace", "br0", "in_port=1,udp"),
		appctl("netdev-dummy/receive", "p1", pktFrom1),
		appctl("netdev-dummy/receive", "p1", pktFrom1),
		appctl("netdev-dummy/receive", "p1", pktFrom1),
		appctl("netdev-dummy/receive", "p1", pktFrom1),
		appctl("netdev-dummy/receive", "p1", pktFrom1),
		appctl("netdev-dummy/receive", "p1", pktFrom1),
		settle,
		ofctl("-O", "OpenFlow13", "meter-stats", "br0", "meter=2"),
		ofctl("-O", "OpenFlow13", "meter-stats", "br0", "meter=3"),
		ofctl("-O", "OpenFlow13", "dump-flows", "br0"),
		appctl("dpctl/dump-flows"),
		ofctl("-O", "OpenFlow13", "del-meter", "br0", "meter=2"),
		ofctl("-O", "OpenFlow13", "--no-stats", "dump-flows", "br0"),
		ofctl("-O", "OpenFlow13", "del-meters", "br0"),
		ofctl("-O", "OpenFlow13", "--no-stats", "dump-flows", "br0"),
		ofctl("-O", "OpenFlow13", "del-groups", "br0"),
		ofctl("-O", "OpenFlow13", "dump-groups", "br0"),
		// check_pkt_larger: the rest of the pipeline is translated for
		// both outcomes into the datapath's check_pkt_len.
		ofctl("del-flows", "br0"),
		ofctl("add-flow", "br0", "in_port=1,actions=check_pkt_larger(100)->NXM_NX_REG0[0],resubmit(,1)"),
		ofctl("add-flow", "br0", "table=1,reg0=0x1/0x1,actions=mod_dl_src:00:00:00:00:00:01,output:2"),
		ofctl("add-flow", "br0", "table=1,reg0=0x0/0x1,actions=output:3"),
		appctl("ofproto/trace", "br0", "in_port=1,udp"),
		appctl("netdev-dummy/receive", "p1", pktFrom1),
		settle,
		appctl("dpctl/dump-flows"),
		// learn with delete_learned and limit. The megaflows of the
		// sections above go first, so that the first packet is an upcall
		// (whose learn takes effect at once) in both switches, not a hit
		// on a revalidated megaflow (whose learn waits for a statistics
		// push).
		ofctl("del-flows", "br0"),
		appctl("dpctl/del-flows"),
		ofctl("add-flow", "br0", "in_port=1,actions=learn(table=1,delete_learned,limit=1,NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[],output:NXM_OF_IN_PORT[]),output:2"),
		ofctl("add-flow", "br0", "in_port=3,actions=learn(table=2,NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[],output:NXM_OF_IN_PORT[]),output:2"),
		appctl("netdev-dummy/receive", "p1", pktFrom1),
		pause,
		appctl("netdev-dummy/receive", "p1", strings.Replace(pktFrom1, "src=50:54:00:00:00:01", "src=50:54:00:00:00:09", 1)),
		pause,
		appctl("netdev-dummy/receive", "p3", pktUDPFrom3),
		settle,
		ofctl("--no-stats", "dump-flows", "br0"),
		ofctl("del-flows", "br0", "in_port=1"),
		ofctl("del-flows", "br0", "in_port=3"),
		ofctl("--no-stats", "dump-flows", "br0"),
	}
}

// TestGroupsAndMetersLikeOpenVSwitch runs the group and meter session
// against gvs and Open vSwitch and requires the same transcript.
func TestGroupsAndMetersLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffAgainstOpenVSwitch(t, groupSession)
}
