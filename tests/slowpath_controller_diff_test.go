package tests

import (
	"testing"
	"time"

	"github.com/gvs-project/gvs/cmd/vswitchd"
	"github.com/gvs-project/gvs/internal/nstest"
)

// TestSlowPathFlowsSendTheirPacketInsLikeOpenVSwitch: a flow whose
// megaflow is slow-pathed (debug_slow; a rewrite of ARP fields, which
// Open vSwitch slow-paths because the kernel has no set(arp)) still sends
// one packet-in per packet for its controller actions, as Open vSwitch's
// ofproto-dpif.at "controller with slow-path action" and "controller"
// (its ARP part) check; gvs sent none once such flows were slow-pathed.
func TestSlowPathFlowsSendTheirPacketInsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	const arp = "in_port(1),eth(src=80:88:88:88:88:88,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0806),arp(sip=192.168.0.1,tip=192.168.0.2,op=1,sha=50:54:00:00:00:05,tha=00:00:00:00:00:00)"
	const tcp = "in_port(2),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=192.168.0.1,dst=192.168.0.2,proto=6,tos=0,ttl=64,frag=no),tcp(src=8,dst=9),tcp_flags(0x010)"
	steps := []ofStep{
		{tool: "file", args: []string{"flows.txt",
			"in_port=2,actions=debug_slow,controller\n" +
				"in_port=1,arp,actions=load:2->OXM_OF_ARP_OP[],controller,load:0xc0a88001->OXM_OF_ARP_SPA[],controller\n"}},
		ofctl("add-flows", "br0", "flows.txt"),
	}
	for i := 0; i < 3; i++ {
		steps = append(steps, appctl("netdev-dummy/receive", "p2", tcp), appctl("netdev-dummy/receive", "p1", arp))
	}
	steps = append(steps, appctl("dpctl/dump-flows"))
	const want = 9 // three packets of each: one and two packet-ins
	session := func(env []string, target string) []string {
		setUpOneBridge(t, env)
		mon := startTool(t, env, "ovs-ofctl", "monitor", "br0", "65534", "-P", "nxt_packet_in")
		time.Sleep(500 * time.Millisecond)
		out := runSteps(t, env, target, steps)
		return append(out, "monitor:\n"+mon.packetIns(want))
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	wantOut := session(ovsEnv, "ovs-vswitchd")
	stopOVS()
	// debug_slow is a test action: Open vSwitch's --enable-dummy.
	_, gvsEnv := startDaemonWith(t, func(c *vswitchd.Config) { c.EnableDummy = true })
	got := session(gvsEnv, "gvs-vswitchd")
	for i := range wantOut {
		w, g := flowUsedRE.ReplaceAllString(wantOut[i], "used:?"), flowUsedRE.ReplaceAllString(got[i], "used:?")
		if g != w {
			t.Errorf("step %d differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", i, w, g)
		}
	}
}
