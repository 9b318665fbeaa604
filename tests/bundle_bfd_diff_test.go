package tests

import "testing"

// bundleBFDSteps: a bundle member's liveness follows its BFD session as
// Open vSwitch's may_enable: BFD enabled on p1 with no peer (session
// down, not forwarding) takes p1 out of active_backup, bfd/set-forwarding
// forces it in or lets the session decide, and disabling BFD brings it
// back. A fast-failover group watching p1 and the OpenFlow port status
// (LIVE) follow the same.
func bundleBFDSteps() []ofStep {
	trace := func() ofStep { return bundleTrace("50:54:00:00:00:05", "") }
	grp := appctl("ofproto/trace", "br0", "in_port=3,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:06")
	ports := ofctl("-O", "OpenFlow13", "dump-ports-desc", "br0")
	s := []ofStep{
		ofctl("-O", "OpenFlow13", "add-group", "br0", "group_id=1,type=ff,bucket=watch_port:1,output:1,bucket=watch_port:2,output:2"),
		ofctl("-O", "OpenFlow13", "add-flow", "br0", "in_port=3,actions=group:1"),
		ofctl("add-flow", "br0", "in_port=LOCAL,actions=bundle(eth_src,50,active_backup,ofport,members:1,2)"),
		trace(), grp, ports,
		vsctl("set", "interface", "p1", "bfd:enable=true"),
		appctl("revalidator/wait"), trace(), grp, ports,
		appctl("bfd/set-forwarding", "p1", "true"),
		appctl("revalidator/wait"), trace(), grp, ports,
		appctl("bfd/set-forwarding", "p1", "normal"),
		appctl("revalidator/wait"), trace(), grp, ports,
		vsctl("set", "interface", "p1", "bfd:enable=false"),
		appctl("revalidator/wait"), trace(), grp, ports,
	}
	return s
}

// TestBundleMembersFollowBFDLikeOpenVSwitch: bundle and fast-failover
// choices follow BFD forwarding as in Open vSwitch 3.1.
func TestBundleMembersFollowBFDLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, bundleBFDSteps)
}
