package tests

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/cmd/vswitchd"
	"github.com/gvs-project/gvs/internal/nstest"
)

// kernelTunnelSession configures tunnel ports of every kind on a dummy
// bridge, lists them, switches native tunnelling off with
// dpif/set-dp-features as Open vSwitch's tunnel tests do and traces
// output to and input from tunnel ports in that mode: set(tunnel(...))
// with the port's key, addresses and flags (and Geneve options from
// tun_metadata), ECN handling on receive, the trace error for a tunnel
// packet no port takes, a masked tunnel match installed with
// dpctl/add-flow, an over-long tunnel() refused, and a packet output to
// a tunnel vport counted as dropped.
func kernelTunnelSession() []ofStep {
	vsctl := func(args ...string) ofStep { return ofStep{"ovs-vsctl", append([]string{"--timeout=20"}, args...)} }
	const tcp = "eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=192.168.0.1,dst=192.168.0.2,proto=6,tos=%s,ttl=64,frag=no),tcp(src=8,dst=9)"
	ip := func(tos string) string { return strings.Replace(tcp, "%s", tos, 1) }
	long := "tunnel(dst=1.1.1.1" + strings.Repeat(",dst=1.1.1.1", 8192) + ")"
	return []ofStep{
		vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail-mode=secure",
			"--", "add-port", "br0", "p1", "--", "set", "Interface", "p1", "type=gre", "options:remote_ip=1.1.1.1", "options:local_ip=2.2.2.2", "options:key=5", "ofport_request=1",
			"--", "add-port", "br0", "p2", "--", "set", "Interface", "p2", "type=dummy", "ofport_request=2",
			"--", "add-port", "br0", "p3", "--", "set", "Interface", "p3", "type=geneve", "options:remote_ip=1.1.1.3", "ofport_request=3"),
		vsctl("add-port", "br0", "p4", "--", "set", "Interface", "p4", "type=erspan", "options:remote_ip=1.1.1.4", "options:key=1", "options:erspan_ver=1", "options:erspan_idx=0x7", "ofport_request=4",
			"--", "add-port", "br0", "p5", "--", "set", "Interface", "p5", "type=erspan", "options:remote_ip=1.1.1.5", "options:key=flow", "options:erspan_ver=2", "options:erspan_dir=flow", "options:erspan_hwid=0x3", "ofport_request=5",
			"--", "add-port", "br0", "p6", "--", "set", "Interface", "p6", "type=gtpu", "options:remote_ip=1.1.1.6", "options:key=123", "ofport_request=6",
			"--", "add-port", "br0", "p7", "--", "set", "Interface", "p7", "type=lisp", "options:remote_ip=1.1.1.7", "ofport_request=7",
			"--", "add-port", "br0", "p8", "--", "set", "Interface", "p8", "type=ip6erspan", "options:remote_ip=2001::1", "options:erspan_ver=flow", "ofport_request=8"),
		vsctl("add-port", "br0", "p9", "--", "set", "Interface", "p9", "type=erspan", "options:remote_ip=1.1.1.9", "options:erspan_ver=3"),
		vsctl("add-port", "br0", "p10", "--", "set", "Interface", "p10", "type=erspan", "options:remote_ip=1.1.1.10", "options:seq=true"),
		appctl("dpif/show"),
		appctl("tnl/ports/show"),
		appctl("dpif/set-dp-features", "br0", "tnl_push_pop"),
		appctl("dpif/set-dp-features", "br0", "tnl_push_pop", "false"),
		appctl("dpif/set-dp-features", "br0", "tnl_push_pop"),
		appctl("dpif/set-dp-features", "br0", "tnl_push_pop", "maybe"),
		appctl("dpif/set-dp-features", "br0", "max_hash_alg", "3"),
		appctl("dpif/set-dp-features", "br0", "max_hash_alg", "x"),
		appctl("dpif/set-dp-features", "br0", "max_hash_alg", "-1"),
		appctl("dpif/set-dp-features", "br0", "no_such_feature"),
		appctl("dpif/set-dp-features", "nobr"),
		appctl("dpif/show-dp-features", "nobr"),
		ofctl("add-tlv-map", "br0", "{class=0xffff,type=0,len=4}->tun_metadata0"),
		ofctl("add-flow", "br0", "in_port=2,tcp,actions=output:1,set_field:0xa->tun_metadata0,output:3"),
		ofctl("add-flow", "br0", "in_port=2,udp,actions=output:1,output:1"),
		ofctl("add-flow", "br0", "in_port=1,actions=output:2"),
		appctl("ofproto/trace", "ovs-dummy", "in_port(2),"+ip("4")),
		appctl("ofproto/trace", "ovs-dummy", "in_port(2),"+ip("1")),
		appctl("ofproto/trace", "ovs-dummy", "in_port(2),"+strings.Replace(strings.Replace(ip("0"), "proto=6", "proto=17", 1), "tcp(", "udp(", 1)),
		// ECN: tunnel CE with an inner CE, ECT(1) and Not-ECT packet.
		appctl("ofproto/trace", "ovs-dummy", "tunnel(tun_id=0x5,src=1.1.1.1,dst=2.2.2.2,tos=0x3,ttl=64,flags(key)),in_port(1),"+ip("3")),
		appctl("ofproto/trace", "ovs-dummy", "tunnel(tun_id=0x5,src=1.1.1.1,dst=2.2.2.2,tos=0x3,ttl=64,flags(key)),in_port(1),"+ip("1")),
		appctl("ofproto/trace", "ovs-dummy", "tunnel(tun_id=0x5,src=1.1.1.1,dst=2.2.2.2,tos=0x3,ttl=64,flags(key)),in_port(1),"+ip("0")),
		appctl("ofproto/trace", "ovs-dummy", "tunnel(src=5.5.5.5,dst=6.6.6.6,ttl=64,flags()),in_port(1),"+ip("0")),
		appctl("dpctl/add-flow", "tunnel(dst=1.1.1.1,src=3.3.3.200/255.255.255.0,tp_dst=123,tp_src=1,ttl=64),recirc_id(0),in_port(1),eth(),eth_type(0x0800),ipv4()", "2"),
		appctl("dpctl/dump-flows"),
		appctl("dpctl/add-flow", long, "2"),
		appctl("dpctl/del-flows"),
		appctl("netdev-dummy/receive", "p2", "50540000000750540000000508004500002800010000400600000a0000010a00000200080009000000000000000050000000f7ff0000"),
		appctl("time/warp", "5000"),
		appctl("coverage/read-counter", "datapath_drop_invalid_port"),
		appctl("dpif/set-dp-features", "br0", "tnl_push_pop", "true"),
		appctl("dpif/set-dp-features", "br0", "tnl_push_pop"),
	}
}

// flowUsedRE is the last-used time of a datapath flow.
var flowUsedRE = regexp.MustCompile(`used:[0-9.]+s`)

// logDirRE is ovs-vsctl's line naming the daemon's (temporary) log
// directory.
var logDirRE = regexp.MustCompile(`ovs-vsctl: The default log directory is "[^"]*".\n`)

// TestKernelTunnelModeLikeOpenVSwitch runs the session against Open
// vSwitch (dummy datapath) and gvs-vswitchd and requires the same
// transcript.
func TestKernelTunnelModeLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	want, got := kernelTunnelTranscripts(t, kernelTunnelSession, false)
	if os.Getenv("GVS_TRANSCRIPT") != "" {
		t.Logf("Open vSwitch transcript:\n%s", strings.Join(want, "\n"))
	}
	for i := range want {
		// The daemon names itself in dpctl and appctl errors.
		got[i] = strings.ReplaceAll(got[i], "gvs-vswitchd:", "ovs-vswitchd:")
		got[i], want[i] = logDirRE.ReplaceAllString(got[i], ""), logDirRE.ReplaceAllString(want[i], "")
		if got[i] != want[i] {
			t.Errorf("step %d differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", i, want[i], got[i])
		}
	}
}

// tunnelPortLifecycleSession fills the tunnel neighbour cache on tunnel
// ports and bridges, then deletes a port and the bridges (their entries
// go with them), and adds a VXLAN-GBP port on the UDP port a plain VXLAN
// port uses (refused) and on another one (accepted).
func tunnelPortLifecycleSession() []ofStep {
	vsctl := func(args ...string) ofStep { return ofStep{"ovs-vsctl", append([]string{"--timeout=20"}, args...)} }
	return []ofStep{
		vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
			"--", "add-port", "br0", "p1", "--", "set", "Interface", "p1", "type=gre", "options:remote_ip=1.1.1.1", "options:local_ip=2.2.2.2", "options:key=5", "ofport_request=1",
			"--", "add-port", "br0", "p2", "--", "set", "Interface", "p2", "type=gre", "options:local_ip=3.3.3.3", "options:remote_ip=4.4.4.4", "ofport_request=2"),
		vsctl("add-br", "br1", "--", "set", "bridge", "br1", "datapath_type=dummy"),
		appctl("tnl/arp/set", "p1", "10.0.0.1", "00:00:10:00:00:01"),
		appctl("tnl/arp/set", "p2", "10.0.1.1", "00:00:10:00:01:01"),
		appctl("tnl/arp/set", "br0", "10.0.2.1", "00:00:10:00:02:01"),
		appctl("tnl/arp/set", "br1", "20.0.0.1", "00:00:20:00:00:01"),
		appctl("tnl/neigh/show"),
		vsctl("del-port", "br0", "p1"),
		appctl("tnl/neigh/show"),
		vsctl("del-br", "br0"),
		appctl("tnl/neigh/show"),
		vsctl("add-port", "br1", "v1", "--", "set", "Interface", "v1", "type=vxlan", "options:remote_ip=flow", "ofport_request=1"),
		vsctl("add-port", "br1", "v2", "--", "set", "Interface", "v2", "type=vxlan", "options:remote_ip=flow", "options:exts=gbp", "options:key=1", "ofport_request=2"),
		vsctl("add-port", "br1", "v3", "--", "set", "Interface", "v3", "type=vxlan", "options:remote_ip=flow", "options:exts=gbp", "options:dst_port=9000", "ofport_request=3"),
		appctl("dpif/show"),
		{"log", []string{"could not set configuration"}},
		vsctl("del-br", "br1"),
		appctl("tnl/neigh/show"),
	}
}

// TestTunnelPortLifecycleLikeOpenVSwitch runs the session against Open
// vSwitch and gvs-vswitchd and requires the same transcript.
func TestTunnelPortLifecycleLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	want, got := kernelTunnelTranscripts(t, tunnelPortLifecycleSession, false)
	for i := range want {
		got[i], want[i] = logDirRE.ReplaceAllString(got[i], ""), logDirRE.ReplaceAllString(want[i], "")
		if got[i] != want[i] {
			t.Errorf("step %d differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", i, want[i], got[i])
		}
	}
}

// tunnelDebugSlowSession is Open vSwitch's "packet_out debug_slow" check:
// output to a native Geneve tunnel after debug_slow, from the bridge's
// local port (twice: a miss, then the slow-path upcall of the installed
// megaflow) and from a packet-out; the megaflow is a slow-path one
// (userspace(slow_path(action))), never tnl_push.
func tunnelDebugSlowSession() []ofStep {
	vsctl := func(args ...string) ofStep { return ofStep{"ovs-vsctl", append([]string{"--timeout=20"}, args...)} }
	const pkt = "50540000000a5054000000091234"
	return []ofStep{
		vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "other-config:hwaddr=aa:55:aa:55:00:00",
			"--", "add-port", "br0", "p0", "--", "set", "Interface", "p0", "type=dummy", "ofport_request=1", "other-config:hwaddr=aa:55:aa:55:00:00"),
		vsctl("add-br", "int-br", "--", "set", "bridge", "int-br", "datapath_type=dummy",
			"--", "add-port", "int-br", "t2", "--", "set", "Interface", "t2", "type=geneve", "options:remote_ip=1.1.2.92", "options:key=123", "ofport_request=2"),
		appctl("netdev-dummy/ip4addr", "br0", "1.1.2.88/24"),
		appctl("ovs/route/add", "1.1.2.92/24", "br0"),
		ofctl("add-flow", "br0", "in_port=LOCAL,actions=1"),
		ofctl("add-flow", "br0", "in_port=1,actions=LOCAL"),
		appctl("netdev-dummy/receive", "p0", "recirc_id(0),in_port(2),eth(src=f8:bc:12:44:34:b6,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0806),arp(sip=1.1.2.92,tip=1.1.2.88,op=2,sha=f8:bc:12:44:34:b6,tha=00:00:00:00:00:00)"),
		ofctl("add-flow", "int-br", "in_port=LOCAL,actions=debug_slow,output:2"),
		appctl("netdev-dummy/receive", "int-br", pkt),
		pause,
		appctl("netdev-dummy/receive", "int-br", pkt),
		ofctl("-O", "OpenFlow13", "packet-out", "int-br", "CONTROLLER", "debug_slow,output:2", pkt),
		pause,
		appctl("dpctl/dump-flows"),
		appctl("ofproto/trace", "int-br", "in_port=LOCAL,dl_src=50:54:00:00:00:09,dl_dst=50:54:00:00:00:0a,dl_type=0x1234"),
	}
}

// TestTunnelDebugSlowLikeOpenVSwitch runs the session against Open
// vSwitch and gvs-vswitchd and requires the same transcript (flow
// last-used times masked).
func TestTunnelDebugSlowLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	ovsEnv, stopOVS := startOpenVSwitch(t)
	run(t, ovsEnv, "ovs-vsctl", "--timeout=20", "init")
	want := runSteps(t, ovsEnv, "ovs-vswitchd", tunnelDebugSlowSession())
	stopOVS()
	// debug_slow is accepted with --enable-dummy, as Open vSwitch's.
	_, gvsEnv := startDaemonWith(t, func(c *vswitchd.Config) { c.EnableDummy = true })
	run(t, gvsEnv, "ovs-vsctl", "--timeout=20", "init")
	got := runSteps(t, gvsEnv, "gvs-vswitchd", tunnelDebugSlowSession())
	for i := range want {
		got[i], want[i] = flowUsedRE.ReplaceAllString(got[i], "used:T"), flowUsedRE.ReplaceAllString(want[i], "used:T")
		if got[i] != want[i] {
			t.Errorf("step %d differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", i, want[i], got[i])
		}
	}
}

// geneveOptionSession is Open vSwitch's "Delete Geneve option" check in
// kernel tunnel mode: rules set and delete tun_metadata fields and send
// the packet back out of its Geneve port; the megaflows match the
// options consulted (an absent one as NP) and set(tunnel(...)) carries
// the options present.
func geneveOptionSession() []ofStep {
	vsctl := func(args ...string) ofStep { return ofStep{"ovs-vsctl", append([]string{"--timeout=20"}, args...)} }
	in := func(opt string) string {
		return "recirc_id(0),tunnel(tun_id=0x0,src=1.1.1.1,dst=1.1.1.2,ttl=64,geneve({class=0xffff,type=0,len=4," + opt + "}),flags(df|key)),in_port(6081),skb_mark(0),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(frag=no)"
	}
	return []ofStep{
		vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail-mode=secure",
			"--", "add-port", "br0", "p1", "--", "set", "Interface", "p1", "type=geneve", "options:remote_ip=1.1.1.1", "ofport_request=1",
			"--", "add-port", "br0", "p2", "--", "set", "Interface", "p2", "type=dummy", "ofport_request=2"),
		appctl("dpif/set-dp-features", "br0", "tnl_push_pop", "false"),
		ofctl("add-tlv-map", "br0", "{class=0xffff,type=0,len=4}->tun_metadata0,{class=0xffff,type=1,len=4}->tun_metadata1,{class=0xffff,type=2,len=4}->tun_metadata3"),
		{"file", []string{"flows.txt", "table=0,tun_metadata0=0x11112222,actions=set_field:0x55556666->tun_metadata1,resubmit(,1)\n" +
			"table=0,tun_metadata0=0x33334444,actions=delete_field:tun_metadata0,set_field:0x77778888->tun_metadata1,resubmit(,1)\n" +
			"table=0,tun_metadata0=0x88889999,actions=delete_field:tun_metadata3,resubmit(,1)\n" +
			"table=1,actions=IN_PORT\n"}},
		ofctl("add-flows", "br0", "flows.txt"),
		appctl("ofproto/trace", "ovs-dummy", in("0x11112222")),
		appctl("ofproto/trace", "ovs-dummy", in("0x33334444")),
		appctl("ofproto/trace", "ovs-dummy", in("0x88889999")),
	}
}

// TestGeneveOptionsInKernelTunnelModeLikeOpenVSwitch runs the session
// against Open vSwitch and gvs-vswitchd; the megaflow and datapath
// actions of each trace must be the same.
func TestGeneveOptionsInKernelTunnelModeLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	tail := func(s string) string {
		if i := strings.Index(s, "Megaflow:"); i >= 0 {
			return s[i:]
		}
		return s
	}
	want, got := kernelTunnelTranscripts(t, geneveOptionSession, false)
	if !strings.Contains(want[4], "tun_metadata1=NP") || !strings.Contains(want[5], "geneve({class=0xffff,type=0x1,len=4,0x77778888})") {
		t.Fatalf("Open vSwitch's transcript is not the expected one:\n%s", strings.Join(want, "\n"))
	}
	for i := range want {
		if tail(got[i]) != tail(want[i]) {
			t.Errorf("step %d differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", i, want[i], got[i])
		}
	}
}

// ipfixTunnelSampleSession is Open vSwitch's "Flow IPFIX sanity check -
// tunnel set" in kernel tunnel mode: a flow sample whose sampling_port
// is the tunnel port it outputs to comes after the set(tunnel(...)) of
// that port and names it as tunnel_out_port.
func ipfixTunnelSampleSession() []ofStep {
	vsctl := func(args ...string) ofStep { return ofStep{"ovs-vsctl", append([]string{"--timeout=20"}, args...)} }
	const icmp = "in_port(3),eth(src=50:54:00:00:00:09,dst=50:54:00:00:00:0a),eth_type(0x0800),ipv4(src=10.10.10.2,dst=10.10.10.1,proto=1,tos=1,ttl=128,frag=no),icmp(type=8,code=0)"
	return []ofStep{
		vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail-mode=secure",
			"--", "add-port", "br0", "p1", "--", "set", "Interface", "p1", "type=gre", "options:remote_ip=1.1.1.1", "options:local_ip=2.2.2.2", "options:key=5", "ofport_request=1",
			"--", "add-port", "br0", "p3", "--", "set", "Interface", "p3", "type=dummy", "ofport_request=3",
			"--", "--id=@br0", "get", "Bridge", "br0",
			"--", "--id=@ipfix", "create", "IPFIX", `targets="127.0.0.1:4739"`,
			"--", "--id=@cs", "create", "Flow_Sample_Collector_Set", "id=1", "bridge=@br0", "ipfix=@ipfix"),
		appctl("dpif/set-dp-features", "br0", "tnl_push_pop", "false"),
		ofctl("add-flow", "br0", "in_port=3,actions=sample(probability=65535,collector_set_id=1),output:1"),
		appctl("ofproto/trace", "ovs-dummy", icmp),
		ofctl("del-flows", "br0", "in_port=3"),
		ofctl("add-flow", "br0", "in_port=3,actions=sample(probability=65535,collector_set_id=1,sampling_port=1),output:1"),
		appctl("ofproto/trace", "ovs-dummy", icmp),
	}
}

// TestIPFIXTunnelSamplingLikeOpenVSwitch runs the session against Open
// vSwitch and gvs-vswitchd; the datapath actions must be the same.
func TestIPFIXTunnelSamplingLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	last := func(s string) string {
		if i := strings.Index(s, "Datapath actions:"); i >= 0 {
			return s[i:]
		}
		return s
	}
	want, got := kernelTunnelTranscripts(t, ipfixTunnelSampleSession, false)
	if !strings.Contains(want[6], "tunnel_out_port=1") {
		t.Fatalf("Open vSwitch's transcript is not the expected one:\n%s", strings.Join(want, "\n"))
	}
	// Step 0 prints the new rows' UUIDs.
	for i := 1; i < len(want); i++ {
		if last(got[i]) != last(want[i]) {
			t.Errorf("step %d differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", i, want[i], got[i])
		}
	}
}

// cloneFeaturesSession is Open vSwitch's "clone action" check of
// dpif/set-dp-features: an irreversible clone is a datapath clone(), a
// 100% sample() without the clone feature, and is left out ("Failed to
// compose clone action") when sample nesting is lowered to 2 as well;
// then its "check_pkt_larger action" check without check_pkt_len.
func cloneFeaturesSession() []ofStep {
	vsctl := func(args ...string) ofStep { return ofStep{"ovs-vsctl", append([]string{"--timeout=20"}, args...)} }
	const icmp = "in_port(1),eth(src=50:54:00:00:00:09,dst=50:54:00:00:00:0a),eth_type(0x0800),ipv4(src=10.10.10.2,dst=10.10.10.1,proto=1,tos=1,ttl=128,frag=no),icmp(type=8,code=0)"
	steps := []ofStep{vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail-mode=secure")}
	for i := 1; i <= 4; i++ {
		n := string(rune('0' + i))
		steps = append(steps, vsctl("add-port", "br0", "p"+n, "--", "set", "Interface", "p"+n, "type=dummy", "ofport_request="+n))
	}
	return append(steps,
		ofctl("add-flow", "br0", "in_port=1,ip,actions=clone(set_field:192.168.3.3->ip_src),clone(set_field:192.168.4.4->ip_dst,output:2),clone(ct(commit),output:3),output:4"),
		appctl("ofproto/trace", "ovs-dummy", icmp),
		appctl("dpif/set-dp-features", "br0", "clone", "false"),
		appctl("ofproto/trace", "ovs-dummy", icmp),
		appctl("dpif/set-dp-features", "br0", "sample_nesting", "2"),
		appctl("ofproto/trace", "ovs-dummy", icmp),
		appctl("dpif/set-dp-features", "br0", "sample_nesting"),
		appctl("dpif/set-dp-features", "br0", "clone", "true"),
		appctl("dpif/set-dp-features", "br0", "sample_nesting", "10"),
		appctl("ofproto/trace", "ovs-dummy", icmp),
		// check_pkt_larger without the datapath action: decided on the
		// packet in hand, in the slow path.
		ofctl("del-flows", "br0"),
		ofctl("add-flow", "br0", "table=0,in_port=1,actions=check_pkt_larger(200)->NXM_NX_REG0[0],resubmit(,1)"),
		ofctl("add-flow", "br0", "table=1,in_port=1,reg0=0x1/0x1,actions=output:2,resubmit(,2)"),
		ofctl("add-flow", "br0", "table=1,in_port=1,actions=output:3,resubmit(,2)"),
		ofctl("add-flow", "br0", "table=2,in_port=1,actions=mod_dl_dst:82:82:82:82:82:82,output:4"),
		appctl("ofproto/trace", "ovs-dummy", icmp),
		appctl("dpif/set-dp-features", "br0", "check_pkt_len", "false"),
		appctl("ofproto/trace", "ovs-dummy", icmp),
	)
}

// TestCloneWithoutDatapathCloneLikeOpenVSwitch runs the session against
// Open vSwitch and gvs-vswitchd; the datapath actions (and the failure
// note) must be the same.
func TestCloneWithoutDatapathCloneLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	last := func(s string) string {
		i := strings.Index(s, "Datapath actions:")
		if i < 0 {
			return s
		}
		failed := ""
		if strings.Contains(s, "Failed to compose clone action") {
			failed = "Failed to compose clone action\n"
		}
		return failed + s[i:]
	}
	want, got := kernelTunnelTranscripts(t, cloneFeaturesSession, false)
	for i := range want {
		if last(got[i]) != last(want[i]) {
			t.Errorf("step %d differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", i, want[i], got[i])
		}
	}
}

// kernelTunnelTranscripts runs session against Open vSwitch (dummy
// datapath) and gvs-vswitchd, each with an initialised database, and
// returns both transcripts; enableDummy gives gvs Open vSwitch's
// --enable-dummy (its debug actions).
func kernelTunnelTranscripts(t *testing.T, session func() []ofStep, enableDummy bool) (want, got []string) {
	t.Helper()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	run(t, ovsEnv, "ovs-vsctl", "--timeout=20", "init")
	want = runSteps(t, ovsEnv, "ovs-vswitchd", session())
	stopOVS()
	_, gvsEnv := startDaemonWith(t, func(c *vswitchd.Config) { c.EnableDummy = enableDummy })
	run(t, gvsEnv, "ovs-vsctl", "--timeout=20", "init")
	got = runSteps(t, gvsEnv, "gvs-vswitchd", session())
	return want, got
}
