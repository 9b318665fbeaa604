package tests

import (
	"regexp"
	"testing"
)

// talkingToRE masks the switch's socket path in ovs-ofctl's final error
// line (each switch runs in its own directory).
var talkingToRE = regexp.MustCompile(`talking to \S+`)

// TestBundlesApplyGroupsFlowsAndPacketOutsInOrderLikeOpenVSwitch runs
// bundles that mix group mods, flow_mods and packet-outs (`ovs-ofctl
// bundle`) against Open vSwitch and gvs and requires the same output,
// tables and groups after each:
//   - a bundle adds a group and a flow using it, sends a packet-out
//     through the tables (which the new flow must see, and count), then
//     deletes every group, which deletes the flow too;
//   - a bundle whose last flow names a missing group fails with
//     OFPBAC_BAD_OUT_GROUP and OFPBFC_MSG_FAILED and leaves nothing: the
//     group it added first is not there afterwards;
//   - a bundled packet-out naming a missing group fails the bundle;
//   - a flow_mod for the read-only table 254 fails when it is added to
//     the bundle (OFPBRC_EPERM), so ovs-ofctl discards the bundle;
//   - a bundle deletes a flow and then the group it used, and adds a
//     group and then a flow using it.
func TestBundlesApplyGroupsFlowsAndPacketOutsInOrderLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	bundle := func(text string) []ofStep {
		return []ofStep{{tool: "file", args: []string{"flows.txt", text}}, ofctl("bundle", "br0", "flows.txt")}
	}
	state := []ofStep{
		ofctl("-O", "OpenFlow14", "dump-flows", "br0"),
		ofctl("-O", "OpenFlow14", "dump-groups", "br0"),
	}
	steps := func() []ofStep {
		var s []ofStep
		s = append(s, ofctl("add-flow", "br0", "priority=0,actions=drop"))
		s = append(s, bundle("group group_id=1,type=all,bucket=output:2\n"+
			"flow in_port=1 actions=group:1\n"+
			"packet-out in_port=1, packet=0001020304050010203040501234 actions=table\n"+
			"flow add in_port=3 actions=output:2\n")...)
		s = append(s, state...)
		s = append(s, bundle("group group_id=2,type=all,bucket=output:3\n"+
			"flow in_port=2 actions=group:2\n"+
			"flow in_port=4 actions=group:99\n")...)
		s = append(s, state...)
		s = append(s, bundle("group group_id=3,type=all,bucket=output:3\n"+
			"packet-out in_port=1, packet=0001020304050010203040501234 actions=group:3\n"+
			"packet-out in_port=1, packet=0001020304050010203040501234 actions=group:4\n")...)
		s = append(s, state...)
		s = append(s, ofStep{tool: "file", args: []string{"flows.txt", "add in_port=5 actions=output:1\nadd table=254 actions=drop\n"}},
			ofctl("--bundle", "add-flows", "br0", "flows.txt"))
		s = append(s, state...)
		s = append(s, bundle("flow delete in_port=1\n"+
			"group delete group_id=1\n"+
			"group group_id=5,type=indirect,bucket=output:1\n"+
			"flow in_port=6 actions=group:5\n")...)
		s = append(s, state...)
		s = append(s, bundle("group group_id=6,type=all,bucket=output:1\n"+
			"flow in_port=7 actions=group:6\n"+
			"packet-out in_port=1, packet=0001020304050010203040501234 actions=table\n"+
			"group delete\n")...)
		s = append(s, state...)
		return s
	}
	diffOneBridgeAgainstOpenVSwitch(t, steps, func(s string) string { return talkingToRE.ReplaceAllString(s, "talking to <switch>") })
}
