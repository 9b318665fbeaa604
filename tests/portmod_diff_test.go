package tests

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/cmd/vswitchd"
	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/internal/ovsoracle"
)

// portModSteps brings ports up and down and sets their OpenFlow
// configuration with mod-port in every version (as Open vSwitch's
// "ofproto - mod-port" tests), shows the result, and traces what the
// configuration does to forwarding: no-forward skips output, noflood
// leaves FLOOD (not ALL), no-receive drops what comes in.
func portModSteps() []ofStep {
	var s []ofStep
	for _, c := range []string{"up", "noflood", "flood", "no-receive", "no-forward", "no-packet-in", "forward", "packet-in", "up", "receive", "down", "up"} {
		s = append(s, ofctl("mod-port", "br0", "br0", c), ofctl("show", "br0"))
	}
	for _, v := range []string{"OpenFlow11", "OpenFlow12", "OpenFlow14", "OpenFlow15"} {
		for _, c := range []string{"no-receive", "no-forward", "no-packet-in", "down", "up", "receive", "forward", "packet-in"} {
			s = append(s, ofctl("-O", v, "mod-port", "br0", "p1", c), ofctl("-O", v, "show", "br0"))
		}
	}
	s = append(s,
		ofctl("mod-port", "br0", "p9", "up"),
		ofctl("add-flow", "br0", "in_port=1,actions=output:2"),
		ofctl("add-flow", "br0", "in_port=2,actions=flood"),
		ofctl("add-flow", "br0", "in_port=3,actions=all"),
		ofctl("add-flow", "br0", "in_port=LOCAL,actions=in_port"),
		ofctl("mod-port", "br0", "p2", "no-forward"),
		appctl("ofproto/trace", "br0", "in_port=1,udp,nw_src=10.0.0.1,nw_dst=10.0.0.2"),
		// Floods leave one port each, so that the order of outputs
		// (Open vSwitch's is its hash order) does not matter.
		ofctl("mod-port", "br0", "br0", "no-forward"),
		appctl("ofproto/trace", "br0", "in_port=3,udp,nw_src=10.0.0.1,nw_dst=10.0.0.2"),
		appctl("ofproto/trace", "br0", "in_port=LOCAL,udp,nw_src=10.0.0.1,nw_dst=10.0.0.2"),
		ofctl("mod-port", "br0", "p3", "noflood"),
		appctl("ofproto/trace", "br0", "in_port=2,udp,nw_src=10.0.0.1,nw_dst=10.0.0.2"),
		appctl("ofproto/trace", "br0", "in_port=3,udp,nw_src=10.0.0.1,nw_dst=10.0.0.2"),
		ofctl("mod-port", "br0", "p2", "forward"),
		ofctl("mod-port", "br0", "br0", "forward"),
		ofctl("mod-port", "br0", "p1", "no-receive"),
		appctl("ofproto/trace", "br0", "in_port=1,udp,nw_src=10.0.0.1,nw_dst=10.0.0.2"),
		ofctl("mod-port", "br0", "p1", "receive"),
		appctl("ofproto/trace", "br0", "in_port=1,udp,nw_src=10.0.0.1,nw_dst=10.0.0.2"),
	)
	return s
}

// TestModPortLikeOpenVSwitch: port_mod in OpenFlow 1.0 to 1.5 changes the
// configuration and state that `show` reports exactly as Open vSwitch,
// refuses an unknown port the same way, and NO_FWD, NO_FLOOD and NO_RECV
// give the same datapath actions and megaflows.
func TestModPortLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, portModSteps)
}

// setUpOneBridge creates br0 with dummy ports p1, p2 and p3: Open
// vSwitch floods in the hash order of its ports, gvs in port order, and
// for these four ports the two agree.
func setUpOneBridge(t testing.TB, env []string) {
	run(t, env, "ovs-vsctl", "--timeout=20", "init")
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail-mode=secure",
		"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=1",
		"--", "add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy", "ofport_request=2",
		"--", "add-port", "br0", "p3", "--", "set", "interface", "p3", "type=dummy", "ofport_request=3")
}

// daemonAsOVS names the daemon in replies and errors as Open vSwitch's
// ("gvs-vswitchd: ..." reads "ovs-vswitchd: ..."), for comparisons.
func daemonAsOVS(s string) string { return strings.ReplaceAll(s, "gvs-vswitchd", "ovs-vswitchd") }

// diffOneBridgeAgainstOpenVSwitch is diffAgainstOpenVSwitch on the bridge
// of setUpOneBridge.
func diffOneBridgeAgainstOpenVSwitch(t *testing.T, steps func() []ofStep, normalize ...func(string) string) {
	t.Helper()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	setUpOneBridge(t, ovsEnv)
	want := runSteps(t, ovsEnv, "ovs-vswitchd", steps())
	stopOVS()
	_, gvsEnv := startDaemon(t)
	setUpOneBridge(t, gvsEnv)
	got := runSteps(t, gvsEnv, "gvs-vswitchd", steps())
	for i := range want {
		for _, f := range normalize {
			want[i], got[i] = f(want[i]), f(got[i])
		}
		if got[i] != want[i] {
			t.Errorf("step %d differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", i, want[i], got[i])
		}
	}
}

// queueSteps are Open vSwitch's "queue stats" and "queue configuration"
// checks: every port has its default queue 0 with unknown counters.
func queueSteps() []ofStep {
	var s []ofStep
	for _, v := range []string{"OpenFlow10", "OpenFlow11", "OpenFlow12", "OpenFlow13", "OpenFlow14"} {
		for _, a := range [][]string{{}, {"LOCAL"}, {"LOCAL", "0"}, {"ANY", "0"}, {"LOCAL", "5"}, {"ANY", "5"}, {"10"}, {"1"}} {
			s = append(s, ofctl(append([]string{"-O", v, "queue-stats", "br0"}, a...)...))
		}
	}
	for _, v := range []string{"OpenFlow10", "OpenFlow11", "OpenFlow12", "OpenFlow14"} {
		for _, a := range [][]string{{"1"}, {"10"}} {
			s = append(s, ofctl(append([]string{"-O", v, "queue-get-config", "br0"}, a...)...))
		}
	}
	s = append(s,
		ofctl("queue-get-config", "br0"),
		ofctl("-O", "OpenFlow12", "queue-get-config", "br0", "ANY"),
		ofctl("-O", "OpenFlow14", "queue-get-config", "br0", "any"),
		ofctl("-O", "OpenFlow14", "queue-get-config", "br0", "1", "2"),
		ofctl("-O", "OpenFlow14", "queue-get-config", "br0", "1", "0"),
	)
	return s
}

// TestQueueStatsAndConfigLikeOpenVSwitch: queue-stats and
// queue-get-config print what they print against Open vSwitch, errors
// (OFPQOFC_BAD_PORT, OFPQOFC_BAD_QUEUE) included.
func TestQueueStatsAndConfigLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	// Open vSwitch lists ports in the hash order of its port map, gvs in
	// port order: compare the lines of each reply as a set.
	diffOneBridgeAgainstOpenVSwitch(t, queueSteps, func(s string) string {
		lines := strings.Split(s, "\n")
		slices.Sort(lines)
		return strings.Join(lines, "\n")
	})
}

// tableMissSteps set OpenFlow 1.1's table-miss behaviours with mod-table
// and trace a packet through them: drop (the default without a
// controller), controller (a packet-in through Open vSwitch's miss rule;
// none for a port with no-packet-in), continue to the next tables (from
// goto_table too), drop.
func tableMissSteps() []ofStep {
	tr := appctl("ofproto/trace", "br0", "in_port=1,udp,nw_src=10.0.0.1,nw_dst=10.0.0.2")
	return []ofStep{
		tr,
		ofctl("-O", "OpenFlow11", "mod-table", "br0", "0", "controller"),
		tr,
		ofctl("mod-port", "br0", "p1", "no-packet-in"),
		tr,
		ofctl("mod-port", "br0", "p1", "packet-in"),
		ofctl("-O", "OpenFlow11", "mod-table", "br0", "all", "continue"),
		tr,
		ofctl("-O", "OpenFlow13", "add-flow", "br0", "table=3,priority=5,udp,actions=output:2"),
		tr,
		ofctl("-O", "OpenFlow13", "add-flow", "br0", "table=0,priority=5,udp,actions=goto_table:1"),
		tr,
		ofctl("-O", "OpenFlow12", "mod-table", "br0", "1", "drop"),
		tr,
		// (After a table is set to drop, ovs-ofctl warns about Open
		// vSwitch's table features replies: avoid mod-table all.)
		ofctl("-O", "OpenFlow11", "mod-table", "br0", "0", "drop"),
		ofctl("-O", "OpenFlow13", "del-flows", "br0"),
		tr,
		ofctl("-O", "OpenFlow12", "mod-table", "br0", "0", "controller"),
		tr,
		ofctl("-O", "OpenFlow14", "mod-table", "br0", "0", "evict"),
		ofctl("-O", "OpenFlow14", "mod-table", "br0", "1", "vacancy:20,80"),
		ofctl("-O", "OpenFlow14", "dump-table-desc", "br0"),
		ofctl("-O", "OpenFlow15", "dump-table-desc", "br0"),
		ofctl("-O", "OpenFlow14", "mod-table", "br0", "0", "noevict"),
		ofctl("-O", "OpenFlow14", "mod-table", "br0", "1", "novacancy"),
		ofctl("-O", "OpenFlow14", "dump-table-desc", "br0"),
		tr,
	}
}

// TestTableMissBehavioursLikeOpenVSwitch: OpenFlow 1.1 and 1.2's
// OFPTC_TABLE_MISS_{CONTROLLER,CONTINUE,DROP} give the same traces,
// megaflows and datapath actions as in Open vSwitch.
func TestTableMissBehavioursLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, tableMissSteps, maskRecircID)
}

// maskRecircID masks the recirculation id of a trace's userspace action:
// Open vSwitch allocates a new one for every trace, gvs reuses the id of
// the same frozen state.
func maskRecircID(s string) string { return ovsoracle.MaskRecircIDs(s) }

// TestTableMissSendsPacketInsToOpenFlow10Monitors: while an OpenFlow 1.0
// connection (controller id 0) is open, a table miss sends the packet to
// it, as Open vSwitch does; when it closes, misses are dropped again (the
// megaflow is revalidated). Both switches print the same trace and the
// monitor receives the same packet-in.
func TestTableMissSendsPacketInsToOpenFlow10Monitors(t *testing.T) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	session := func(env []string, target string) (string, string) {
		setUpOneBridge(t, env)
		trace := func() string {
			return run(t, env, "ovs-appctl", "-t", target, "ofproto/trace", "br0", "in_port=1,tcp,nw_src=1.1.1.1,nw_dst=2.2.2.2")
		}
		before := trace()
		mon := startTool(t, env, "ovs-ofctl", "monitor", "br0", "65534", "-P", "nxt_packet_in")
		waitFor(t, "the monitor to connect", func() bool { return strings.Contains(trace(), "packet-in") })
		during := trace()
		run(t, env, "ovs-appctl", "-t", target, "netdev-dummy/receive", "p1",
			"in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=1.1.1.1,dst=2.2.2.2,proto=6,tos=0,ttl=64,frag=no),tcp(src=8,dst=9)")
		waitFor(t, "the packet-in", func() bool {
			b, _ := os.ReadFile(mon.log)
			return strings.Contains(string(b), "NXT_PACKET_IN")
		})
		log := mon.stop(t)
		waitFor(t, "misses to be dropped again", func() bool { return strings.Contains(trace(), "Datapath actions: drop") })
		time.Sleep(100 * time.Millisecond)
		return maskRecircID(before + "---\n" + during + "---\n" + trace()), maskMonitor(log)
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	wantTrace, wantMon := session(ovsEnv, "ovs-vswitchd")
	stopOVS()
	_, gvsEnv := startDaemon(t)
	gotTrace, gotMon := session(gvsEnv, "gvs-vswitchd")
	if gotTrace != wantTrace {
		t.Errorf("traces differ\n--- Open vSwitch:\n%s\n--- gvs:\n%s", wantTrace, gotTrace)
	}
	if gotMon != wantMon {
		t.Errorf("monitor output differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", wantMon, gotMon)
	}
	if !strings.Contains(gotMon, "(via no_match)") {
		t.Errorf("no table-miss packet-in:\n%s", gotMon)
	}
}

// adminStateSteps bring dummy ports down and up with
// netdev-dummy/set-admin-state (one port, then all) and check what the
// bridge shows, and run the commands that list datapaths, pause and
// resume revalidation and set the flow limit.
func adminStateSteps() []ofStep {
	return []ofStep{
		appctl("dpif/dump-dps"),
		appctl("dpctl/dump-dps"),
		appctl("upcall/set-flow-limit", "5000"),
		appctl("revalidator/pause"),
		appctl("revalidator/resume"),
		appctl("netdev-dummy/set-admin-state", "p1", "down"),
		{tool: "sleep", args: []string{"200ms"}},
		ofctl("show", "br0"),
		appctl("netdev-dummy/set-admin-state", "nope", "up"),
		appctl("netdev-dummy/set-admin-state", "p1", "sideways"),
		appctl("netdev-dummy/set-admin-state", "up"),
		{tool: "sleep", args: []string{"200ms"}},
		ofctl("show", "br0"),
		appctl("netdev-dummy/set-admin-state", "down"),
		{tool: "sleep", args: []string{"200ms"}},
		ofctl("-O", "OpenFlow13", "dump-ports-desc", "br0"),
		appctl("netdev-dummy/set-admin-state", "up"),
	}
}

// TestDummyAdminStateAndUpcallCommandsLikeOpenVSwitch: the commands
// print what Open vSwitch prints, errors included, and a dummy port
// brought down shows PORT_DOWN and LINK_DOWN.
func TestDummyAdminStateAndUpcallCommandsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, adminStateSteps, func(s string) string {
		// ovs-appctl names its -t target in errors.
		return strings.ReplaceAll(s, "ovs-appctl: gvs-vswitchd:", "ovs-appctl: ovs-vswitchd:")
	})
}

// megaflowSteps install a datapath flow with megaflows disabled (it
// matches every field of the packet) and enabled again (only what the
// pipeline looked at).
func megaflowSteps() []ofStep {
	tcp := "in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=1.1.1.1,dst=2.2.2.2,proto=6,tos=0,ttl=64,frag=no),tcp(src=8,dst=9)"
	arp := "in_port(2),eth(src=50:54:00:00:00:07,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0806),arp(sip=2.2.2.2,tip=1.1.1.1,op=1,sha=50:54:00:00:00:07,tha=00:00:00:00:00:00)"
	v6 := "in_port(3),eth(src=50:54:00:00:00:08,dst=50:54:00:00:00:07),eth_type(0x86dd),ipv6(src=2001:db8::1,dst=2001:db8::2,label=0,proto=17,tclass=0,hlimit=64,frag=no),udp(src=53,dst=5353)"
	vlan := "in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x8100),vlan(vid=10,pcp=0),encap(eth_type(0x0800),ipv4(src=1.1.1.1,dst=2.2.2.2,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0))"
	vlan3 := strings.Replace(vlan, "in_port(1)", "in_port(3)", 1)
	dump := appctl("dpctl/dump-flows")
	steps := []ofStep{
		ofctl("add-flow", "br0", "in_port=1,tcp,actions=output:2"),
		ofctl("add-flow", "br0", "in_port=2,arp,actions=output:1"),
		ofctl("add-flow", "br0", "in_port=3,actions=output:1"),
		ofctl("add-flow", "br0", "in_port=1,dl_vlan=10,actions=output:3"),
		appctl("upcall/disable-megaflows"),
	}
	for _, pkt := range []string{tcp, arp, v6, vlan, vlan3} {
		steps = append(steps, appctl("netdev-dummy/receive", portName(pkt), pkt))
	}
	steps = append(steps, settle, dump, appctl("upcall/enable-megaflows"), dump)
	for _, pkt := range []string{tcp, arp, v6, vlan, vlan3} {
		steps = append(steps, appctl("netdev-dummy/receive", portName(pkt), pkt))
	}
	return append(steps, settle, dump)
}

// portName is the dummy port a flow string's in_port(N) names.
func portName(flow string) string {
	return "p" + flow[len("in_port("):strings.Index(flow, ")")]
}

// TestDisabledMegaflowsMatchPacketsExactlyLikeOpenVSwitch: with
// upcall/disable-megaflows the datapath flows match every field of the
// packet (TCP, ARP, IPv6/UDP, VLAN/ICMP), printed as Open vSwitch prints
// them; enabling them again flushes and goes back to megaflows.
func TestDisabledMegaflowsMatchPacketsExactlyLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, megaflowSteps)
}

// actionSetSteps are Open vSwitch's "write actions", "clear actions",
// "all group in action list" and "group actions have no effect
// afterwards" checks, plus an action set with a group and a set_field
// bucket order, traced through both switches.
func actionSetSteps() []ofStep {
	icmp := "in_port=1,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,dl_type=0x0800,nw_src=192.168.0.1,nw_dst=192.168.0.2,nw_proto=1,nw_tos=0,nw_ttl=128,nw_frag=no,icmp_type=8,icmp_code=0"
	tcp := "in_port=1,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,dl_type=0x0800,nw_src=192.168.0.1,nw_dst=192.168.0.2,nw_proto=6,nw_tos=0,nw_ttl=128,nw_frag=no,tp_src=8,tp_dst=9"
	return []ofStep{
		{tool: "file", args: []string{"flows.txt", "table=0 in_port=1,ip actions=output(2),write_actions(set_field:192.168.3.90->ip_src,output(3)),goto_table(1)\n" +
			"table=1 ip actions=write_actions(output(LOCAL)),goto_table(2)\n" +
			"table=2 ip actions=set_field:192.168.3.91->ip_src,output(3)\n"}},
		ofctl("-O", "OpenFlow12", "add-flows", "br0", "flows.txt"),
		appctl("ofproto/trace", "br0", icmp),
		ofctl("-O", "OpenFlow12", "del-flows", "br0"),
		{tool: "file", args: []string{"flows.txt", "table=0 in_port=1,ip actions=output(2),write_actions(set_field:192.168.3.90->ip_src,output(3)),goto_table(1)\n" +
			"table=1 tcp actions=set_field:91->tp_src,output(3),clear_actions\n"}},
		ofctl("-O", "OpenFlow12", "add-flows", "br0", "flows.txt"),
		appctl("ofproto/trace", "br0", tcp),
		ofctl("-O", "OpenFlow12", "del-flows", "br0"),
		ofctl("-O", "OpenFlow12", "add-group", "br0", "group_id=1234,type=all,bucket=output:2,set_field:192.168.3.90->ip_src,bucket=output:3"),
		ofctl("-O", "OpenFlow12", "add-flow", "br0", "ip actions=group:1234"),
		appctl("ofproto/trace", "br0", icmp),
		ofctl("-O", "OpenFlow12", "add-group", "br0", "group_id=1235,type=indirect,bucket=set_field:192.168.3.90->ip_src,output:2"),
		ofctl("-O", "OpenFlow12", "add-flow", "br0", "priority=40000,ip actions=group:1235,output:3"),
		appctl("ofproto/trace", "br0", icmp),
		ofctl("-O", "OpenFlow12", "add-flow", "br0", "priority=50000,ip actions=write_actions(group:1235,output:3),goto_table:1"),
		ofctl("-O", "OpenFlow12", "add-flow", "br0", "table=1,ip actions=write_actions(set_field:192.168.0.9->ip_dst)"),
		appctl("ofproto/trace", "br0", icmp),
	}
}

// TestActionSetsLikeOpenVSwitch: write_actions, clear_actions and group
// buckets (action sets) produce Open vSwitch's traces, megaflows and
// datapath actions.
//
// The trace's tree layout is not compared: Open vSwitch sometimes nests a
// goto_table's table under it (after write_actions) where gvs does not;
// every line's text is (as a sorted set, leading blanks removed).
func TestActionSetsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, actionSetSteps, func(s string) string {
		lines := strings.Split(s, "\n")
		for i := range lines {
			lines[i] = strings.TrimLeft(lines[i], " ")
		}
		slices.Sort(lines)
		return strings.Join(lines, "\n")
	})
}

// groupChainSteps are Open vSwitch's "group chaining" check (a bucket
// naming a group added later), plus a group that chains to itself, which
// translation must stop at its depth limit.
func groupChainSteps() []ofStep {
	icmp := "in_port=1,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,dl_type=0x0800,nw_src=192.168.0.1,nw_dst=192.168.0.2,nw_proto=1,nw_tos=0,nw_ttl=128,nw_frag=no,icmp_type=8,icmp_code=0"
	return []ofStep{
		ofctl("-O", "OpenFlow12", "add-group", "br0", "group_id=1234,type=all,bucket=set_field:192.168.3.90->ip_src,group:123,bucket=output:3"),
		ofctl("-O", "OpenFlow12", "add-group", "br0", "group_id=123,type=all,bucket=output:2"),
		ofctl("-O", "OpenFlow12", "add-flow", "br0", "ip actions=group:1234"),
		appctl("ofproto/trace", "br0", icmp),
		ofctl("-O", "OpenFlow12", "add-group", "br0", "group_id=7,type=indirect,bucket=group:7"),
		ofctl("-O", "OpenFlow12", "add-flow", "br0", "priority=40000,ip actions=group:7"),
	}
}

// TestGroupChainingLikeOpenVSwitch: chained groups are accepted and
// translated as Open vSwitch does; a self-chaining group is accepted and
// its translation fails cleanly (the switch keeps running).
func TestGroupChainingLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, groupChainSteps, func(s string) string {
		if i := strings.Index(s, "Datapath actions:"); i >= 0 {
			return s[i:] // the trace's last line
		}
		return s
	})
	_, env := startDaemon(t)
	setUpOneBridge(t, env)
	for _, st := range groupChainSteps()[4:] {
		run(t, env, append([]string{st.tool, "--timeout=10"}, st.args...)...)
	}
	out := run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "ofproto/trace", "br0", "in_port=1,icmp")
	if !strings.Contains(out, "Datapath actions: drop") || !strings.Contains(out, "depth") {
		t.Errorf("self-chaining group: want a drop for exceeding the depth limit, got\n%s", out)
	}
}

// TestControllerOutputReasonsLikeOpenVSwitch: an output to the controller
// reports OpenFlow 1.4's reasons packet_out, action_set and group (and
// "action" to an OpenFlow 1.3 monitor), as Open vSwitch does.
func TestControllerOutputReasonsLikeOpenVSwitch(t *testing.T) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	session := func(env []string, target string) string {
		setUpOneBridge(t, env)
		var logs []string
		for _, v := range []string{"OpenFlow14", "OpenFlow13"} {
			mon := startTool(t, env, "ovs-ofctl", "-O", v, "monitor", "br0", "65534")
			time.Sleep(500 * time.Millisecond) // the monitor connects and sets its async config
			ofctl := func(args ...string) { run(t, env, append([]string{"ovs-ofctl", "-O", "OpenFlow14"}, args...)...) }
			ofctl("del-flows", "br0")
			ofctl("packet-out", "br0", "none", "controller", "0001020304050010203040501234")
			ofctl("add-flow", "br0", "in_port=1 actions=write_actions(output(CONTROLLER))")
			ofctl("add-group", "br0", "group_id=5,type=all,bucket=output:CONTROLLER")
			ofctl("add-flow", "br0", "in_port=2 actions=group:5")
			for _, p := range []string{"1", "2"} {
				run(t, env, "ovs-appctl", "-t", target, "netdev-dummy/receive", "p"+p,
					"in_port("+p+"),eth(src=00:10:20:30:40:50,dst=00:01:02:03:04:05),eth_type(0x1234)")
			}
			waitFor(t, "three packet-ins", func() bool {
				b, _ := os.ReadFile(mon.log)
				return strings.Count(string(b), "PACKET_IN") >= 3
			})
			ofctl("del-groups", "br0")
			logs = append(logs, maskMonitor(mon.stop(t)))
		}
		return strings.Join(logs, "\n---\n")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	want := session(ovsEnv, "ovs-vswitchd")
	stopOVS()
	_, gvsEnv := startDaemon(t)
	got := session(gvsEnv, "gvs-vswitchd")
	if got != want {
		t.Errorf("monitor output differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", want, got)
	}
	for _, r := range []string{"(via packet_out)", "(via action_set)", "(via group)"} {
		if !strings.Contains(got, r) {
			t.Errorf("no packet-in %s:\n%s", r, got)
		}
	}
}

// flowModFilterSteps are Open vSwitch's "flow_mod with out_group
// matching" and "no mod flow with cookie change" (OpenFlow 1.1) checks.
func flowModFilterSteps() []ofStep {
	return []ofStep{
		{tool: "file", args: []string{"flows.txt", "group_id=1,type=all,bucket=output:2\ngroup_id=2,type=all,bucket=output:2\ngroup_id=3,type=all,bucket=output:2\n"}},
		ofctl("-O", "OpenFlow11", "add-groups", "br0", "flows.txt"),
		{tool: "file", args: []string{"flows.txt", " in_port=1 actions=group:2,output:5\n in_port=2 actions=group:1,write_actions(group:2,group:3,output:6)\n" +
			" in_port=3 actions=group:3,group:1,write_actions(group:2,output:3)\n in_port=4 actions=output:4\n" +
			" in_port=5 actions=write_actions(output:4,group:3)\n in_port=6 actions=group:1\n"}},
		ofctl("-O", "OpenFlow11", "add-flows", "br0", "flows.txt"),
		ofctl("-O", "OpenFlow11", "dump-flows", "br0", "out_port=3,out_group=2"),
		ofctl("-O", "OpenFlow11", "del-flows", "br0", "out_group=2"),
		ofctl("-O", "OpenFlow11", "dump-flows", "br0"),
		ofctl("-O", "OpenFlow11", "del-flows", "br0", "out_group=3"),
		ofctl("-O", "OpenFlow11", "dump-flows", "br0"),
		ofctl("-O", "OpenFlow11", "del-flows", "br0"),
		ofctl("-O", "OpenFlow11", "add-flow", "br0", "cookie=0x1,in_port=1,actions=1"),
		ofctl("-O", "OpenFlow11", "mod-flows", "br0", "cookie=0x2,in_port=1,actions=1"),
		ofctl("-O", "OpenFlow11", "mod-flows", "br0", "cookie=0x3,in_port=2,actions=1"),
		ofctl("-O", "OpenFlow11", "dump-flows", "br0"),
	}
}

// TestOpenFlow11FlowModFiltersAndCookiesLikeOpenVSwitch: out_port and
// out_group together select rules that output to both; an OpenFlow 1.1
// modify keeps the cookies of the rules it changes and gives its cookie to
// a rule it adds.
func TestOpenFlow11FlowModFiltersAndCookiesLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, flowModFilterSteps)
}

// debugActionSteps are Open vSwitch's "debug_slow action" check and a
// debug_recirc in the middle of an action list (the rest runs after the
// recirculation); both switches run for testing (--enable-dummy).
func debugActionSteps() []ofStep {
	icmp := "in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=192.168.0.1,dst=192.168.0.2,proto=1,tos=0,ttl=128,frag=no),icmp(type=8,code=0)"
	return []ofStep{
		ofctl("add-flow", "br0", "in_port=1,actions=debug_slow,2"),
		appctl("ofproto/trace", "ovs-dummy", icmp, "-generate"),
		ofctl("add-flow", "br0", "in_port=1,actions=2,debug_recirc,3"),
		appctl("ofproto/trace", "ovs-dummy", icmp, "-generate"),
		appctl("ofproto/trace", "ovs-dummy", icmp+",recirc_id(1)", "-generate"),
	}
}

// TestDebugActionsLikeOpenVSwitch: with --enable-dummy, debug_slow
// slow-paths the flow and debug_recirc recirculates, with Open vSwitch's
// datapath actions; without it gvs-vswitchd refuses them as Open vSwitch
// does (OFPBAC_BAD_VENDOR_TYPE).
func TestDebugActionsLikeOpenVSwitch(t *testing.T) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	last := func(s string) string {
		if i := strings.Index(s, "Datapath actions:"); i >= 0 {
			return s[i:]
		}
		return s
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	setUpOneBridge(t, ovsEnv)
	want := runSteps(t, ovsEnv, "ovs-vswitchd", debugActionSteps())
	stopOVS()
	_, gvsEnv := startDaemonWith(t, func(c *vswitchd.Config) { c.EnableDummy = true })
	setUpOneBridge(t, gvsEnv)
	got := runSteps(t, gvsEnv, "gvs-vswitchd", debugActionSteps())
	for i := range want {
		if last(got[i]) != last(want[i]) {
			t.Errorf("step %d differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", i, want[i], got[i])
		}
	}
	_, plainEnv := startDaemon(t)
	setUpOneBridge(t, plainEnv)
	c := exec.Command("ovs-ofctl", "add-flow", "br0", "in_port=1,actions=debug_slow,2")
	c.Env = plainEnv
	if out, err := c.CombinedOutput(); err == nil || !strings.Contains(string(out), "OFPBAC_BAD_VENDOR_TYPE") {
		t.Errorf("without --enable-dummy debug_slow must be refused: %v\n%s", err, out)
	}
}

// TestPortModStatusLikeOpenVSwitch: an OpenFlow 1.4 monitor sees the
// same port status messages as with Open vSwitch while a dummy port is
// added, brought down and up with mod-port, and deleted: the port_mod's
// own status (new configuration, old link state) and then the link's
// change, as two messages.
func TestPortModStatusLikeOpenVSwitch(t *testing.T) {
	session := func(env []string) string {
		setUpOneBridge(t, env)
		mon, appctl := startOF14Monitor(t, env)
		run(t, env, "ovs-vsctl", "--timeout=20", "add-port", "br0", "test", "--", "set", "Interface", "test", "type=dummy", "ofport_request=9")
		for _, dir := range []string{"down", "up"} {
			run(t, env, "ovs-ofctl", "-O", "OpenFlow14", "mod-port", "br0", "test", dir)
			waitFor(t, "the port's link "+dir, func() bool {
				out := run(t, env, "ovs-ofctl", "-O", "OpenFlow14", "show", "br0")
				i := strings.Index(out, "(test)")
				return i >= 0 && strings.Contains(out[i:min(len(out), i+200)], "LINK_DOWN") == (dir == "down")
			})
		}
		run(t, env, "ovs-vsctl", "--timeout=20", "del-port", "br0", "test")
		appctl("ofctl/barrier")
		time.Sleep(100 * time.Millisecond)
		return maskMonitor(mon.stop(t))
	}
	want, got := monitorSessionsBothWays(t, session)
	if got != want {
		t.Errorf("port status differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", want, got)
	}
	if strings.Count(got, "OFPT_PORT_STATUS") < 6 {
		t.Errorf("expected the add, two modifications each way and the delete:\n%s", got)
	}
}

// controllerFlushSteps is Open vSwitch's "flush flows, groups, and meters
// for controller change" (ofproto.at), then the same in standalone mode,
// where the default NORMAL flow comes back with the last controller gone.
func controllerFlushSteps() []ofStep {
	vsctl := func(args ...string) ofStep { return ofStep{"ovs-vsctl", args} }
	add := []ofStep{
		ofctl("add-flow", "br0", "in_port=1,actions=2"),
		ofctl("-O", "OpenFlow11", "add-group", "br0", "group_id=1234,type=all,bucket=output:10"),
		ofctl("-O", "OpenFlow13", "add-meter", "br0", "meter=1 pktps burst stats bands=type=drop rate=1 burst_size=1"),
	}
	verify := []ofStep{
		ofctl("--no-stats", "dump-flows", "br0"),
		ofctl("-O", "OpenFlow11", "dump-groups", "br0"),
		ofctl("-O", "OpenFlow13", "dump-meters", "br0"),
	}
	var s []ofStep
	s = append(s, add...)
	s = append(s, verify...)
	s = append(s, vsctl("set-controller", "br0", "tcp:127.0.0.1:9"))
	s = append(s, verify...)
	s = append(s, add...)
	s = append(s, vsctl("set-controller", "br0", "tcp:127.0.0.1:10"))
	s = append(s, verify...)
	s = append(s, vsctl("del-controller", "br0"))
	s = append(s, verify...)
	s = append(s, vsctl("set-fail-mode", "br0", "standalone"))
	s = append(s, ofctl("--no-stats", "dump-flows", "br0"))
	s = append(s, add...)
	s = append(s, vsctl("set-controller", "br0", "tcp:127.0.0.1:9"))
	s = append(s, verify...)
	s = append(s, add...)
	s = append(s, vsctl("del-controller", "br0"))
	return append(s, verify...)
}

// TestControllerChangeFlushesLikeOpenVSwitch: a bridge that gets its
// first controller or loses its last one drops its flows, groups and
// meters, as in Open vSwitch; changing the controller keeps them.
func TestControllerChangeFlushesLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, controllerFlushSteps)
}
