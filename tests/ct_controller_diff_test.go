package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

// ctACLFlows is Open vSwitch's "conntrack - controller" pipeline: a
// stateful ACL that looks replies up by their connection's original tuple
// (resubmit(,3,ct)), commits with ct_mark and ct_label moved from
// registers, and sends what passes to the controller.
const ctACLFlows = `table=0,priority=100,arp,action=normal
table=0,priority=10,in_port=1,ip,action=set_field:1->reg4,set_field:1->reg3,ct(zone=NXM_NX_REG4[0..15],table=1)
table=0,priority=10,in_port=2,ip,action=set_field:1->reg4,set_field:2->reg3,ct(zone=NXM_NX_REG4[0..15],table=1)
table=0,priority=1,action=drop
table=1 reg3=1, ip, ct_state=-rel-rpl+trk-inv action=set_field:1->reg0,resubmit(,3),goto_table:5
table=1 reg3=1, ip, ct_state=-rel+rpl+trk-inv action=set_field:2->reg0,resubmit(,3,ct),goto_table:4
table=1 reg3=2, ip, ct_state=-rel-rpl+trk-inv action=set_field:2->reg0,resubmit(,3),goto_table:5
table=1 reg3=2, ip, ct_state=-rel+rpl+trk-inv action=set_field:1->reg0,resubmit(,3,ct),goto_table:4
table=1 ip, ct_state=+rel+trk-inv, action=move:NXM_NX_CT_MARK[]->NXM_NX_REG0[],resubmit(,3,ct),goto_table:4
table=1 priority=0, action=drop
table=3 priority=10, reg0=1, udp, udp_dst=2 action=set_field:1234->reg1,set_field:1->reg2
table=3 priority=0, action=set_field:1235->reg1,set_field:0->reg2
table=4 priority=100 reg2=1, action=goto_table:5
table=4 priority=0 action=move:NXM_NX_REG3[]->NXM_NX_REG0[],resubmit(,3),goto_table:5
table=5 reg2=0 priority=1000 action=drop
table=5 priority=10 reg2=1 ct_state=+new-rel, ip, action=ct(zone=NXM_NX_REG4[0..15],commit,exec(move:NXM_NX_REG3[0..31]->NXM_NX_CT_MARK[0..31],move:NXM_NX_REG1[0..31]->NXM_NX_CT_LABEL[96..127])),goto_table:6
table=5 priority=10 reg2=1 ct_state=+new+rel, ip, action=ct(zone=NXM_NX_REG4[0..15],commit,exec(move:NXM_NX_REG1[0..31]->NXM_NX_CT_LABEL[96..127])),goto_table:6
table=5 priority=0 action=goto_table:6
table=6 action=controller
`

// TestConntrackACLWithOriginalTupleLookupLikeOpenVSwitch runs that
// pipeline on Open vSwitch and on gvs with the same three packets (a
// reply before any connection, a new connection, its reply) and compares
// the packet-ins ovs-ofctl monitor prints (their metadata carries the
// Ethertype and the connection's tuple, mark and label), the conntrack
// entry and the megaflows.
func TestConntrackACLWithOriginalTupleLookupLikeOpenVSwitch(t *testing.T) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	const (
		reply  = "in_port(2),eth(src=50:54:00:00:00:0a,dst=50:54:00:00:00:09),eth_type(0x0800),ipv4(src=10.1.1.2,dst=10.1.1.1,proto=17,tos=0,ttl=64,frag=no),udp(src=2,dst=1)"
		opener = "in_port(1),eth(src=50:54:00:00:00:09,dst=50:54:00:00:00:0a),eth_type(0x0800),ipv4(src=10.1.1.1,dst=10.1.1.2,proto=17,tos=0,ttl=64,frag=no),udp(src=1,dst=2)"
	)
	steps := []ofStep{
		{tool: "file", args: []string{"flows.txt", ctACLFlows}},
		ofctl("add-flows", "br0", "flows.txt"),
		appctl("netdev-dummy/receive", "p2", reply),
		appctl("netdev-dummy/receive", "p1", opener),
		appctl("netdev-dummy/receive", "p2", reply),
		appctl("dpctl/dump-conntrack"),
		appctl("dpctl/dump-flows"),
		appctl("revalidator/purge"),
		ofctl("dump-flows", "br0"),
	}
	session := func(env []string, target string) []string {
		setUpOneBridge(t, env)
		mon := startTool(t, env, "ovs-ofctl", "monitor", "br0", "65534", "-P", "nxt_packet_in")
		time.Sleep(500 * time.Millisecond)
		out := runSteps(t, env, target, steps)
		return append(out, "monitor:\n"+mon.packetIns(2))
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	want := session(ovsEnv, "ovs-vswitchd")
	stopOVS()
	_, gvsEnv := startDaemon(t)
	got := session(gvsEnv, "gvs-vswitchd")
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", i, want[i], got[i])
		}
	}
	if m := want[len(want)-1]; !strings.Contains(m, "ct_mark=0x1,ct_label=0x4d2000000000000000000000000") {
		t.Errorf("Open vSwitch's packet-ins are not what its test suite expects:\n%s", m)
	}
}
