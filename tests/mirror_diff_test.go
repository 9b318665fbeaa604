package tests

import (
	"slices"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/cmd/vswitchd"
	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/internal/ovsoracle"
)

// Port mirroring (the OVSDB Mirror table) compared with Open vSwitch 3.1:
// Open vSwitch's own "ofproto-dpif - mirroring, ..." cases on the bridge
// of setUpOneBridge (p1, p2, p3 and the local port br0), with Mirror rows
// created by Debian's ovs-vsctl and packets traced through
// ofproto/trace. The trace's Megaflow and Datapath actions lines must be
// the same (the text around them is gvs's own).

const (
	mirrorICMP = "eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=192.168.0.1,dst=192.168.0.2,proto=1,tos=0,ttl=128,frag=no),icmp(type=8,code=0)"
	// mirrorVLAN is mirrorICMP tagged with VLAN VID (see tagged).
	mirrorVLAN = "eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x8100),vlan(vid=VID,pcp=0),encap(eth_type(0x0800),ipv4(src=192.168.0.1,dst=192.168.0.2,proto=1,tos=0,ttl=128,frag=no),icmp(type=8,code=0))"
)

func traceFrom(port, pkt string) ofStep {
	return appctl("ofproto/trace", "ovs-dummy", "in_port("+port+"),"+pkt)
}

func tagged(vid string) string { return strings.Replace(mirrorVLAN, "VID", vid, 1) }

// createMirror sets br0's mirrors to one new Mirror row; spec are its
// columns, naming ports as @p1, @p2, @p3.
func createMirror(spec ...string) ofStep {
	args := []string{"--", "set", "bridge", "br0", "mirrors=@m"}
	for _, p := range []string{"p1", "p2", "p3"} {
		args = append(args, "--", "--id=@"+p, "get", "port", p)
	}
	args = append(args, "--", "--id=@m", "create", "mirror", "name=m")
	return vsctl(append(args, spec...)...)
}

// keepTraceResult reduces an ofproto/trace transcript to its Megaflow
// and Datapath actions lines; other steps are kept whole, with the UUIDs
// ovs-vsctl prints for new rows masked.
func keepTraceResult(s string) string {
	if !strings.Contains(s, "Datapath actions:") {
		return ovsoracle.MaskUUIDs(s)
	}
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "$ ") || strings.HasPrefix(l, "Megaflow:") || strings.HasPrefix(l, "Datapath actions:") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func mirrorFlows(flows string) []ofStep {
	return []ofStep{{"file", []string{"flows.txt", flows}}, ofctl("add-flows", "br0", "flows.txt")}
}

// mirrorPortSteps: select_src_port, select_dst_port, select_all,
// select_vlan and output_port (with a VLAN the flow pushes), the mirror
// port dropping what it receives, and removing the mirror.
func mirrorPortSteps() []ofStep {
	s := mirrorFlows("in_port=1 actions=output:2\nin_port=2 actions=output:1\nin_port=3 actions=output:1\n")
	both := []ofStep{traceFrom("1", mirrorICMP), traceFrom("2", mirrorICMP), traceFrom("3", mirrorICMP)}
	s = append(s, createMirror("select_src_port=@p1", "output_port=@p3"))
	s = append(s, both...)
	s = append(s, createMirror("select_dst_port=@p2", "output_port=@p3"))
	s = append(s, both...)
	s = append(s, createMirror("select_all=true", "output_port=@p3"))
	s = append(s, both...)
	s = append(s, traceFrom("1", tagged("10")), appctl("ofproto/trace", "br0", "in_port=LOCAL,icmp"))
	s = append(s, createMirror("select_all=true", "select_vlan=11", "output_port=@p3"))
	s = append(s, both...)
	s = append(s, traceFrom("1", tagged("10")), traceFrom("1", tagged("11")), traceFrom("2", tagged("11")))
	// Two mirrors to the same port: one copy.
	s = append(s, vsctl("--", "set", "bridge", "br0", "mirrors=@m,@n", "--", "--id=@p1", "get", "port", "p1",
		"--", "--id=@p2", "get", "port", "p2", "--", "--id=@p3", "get", "port", "p3",
		"--", "--id=@m", "create", "mirror", "name=m", "select_src_port=@p1", "output_port=@p3",
		"--", "--id=@n", "create", "mirror", "name=n", "select_dst_port=@p2", "output_port=@p3"))
	s = append(s, both...)
	s = append(s, vsctl("clear", "bridge", "br0", "mirrors"))
	return append(s, both...)
}

// TestMirrorSelectedPortsLikeOpenVSwitch: select_src_port,
// select_dst_port, select_all, select_vlan and output_port mirrors give
// Open vSwitch's datapath actions and megaflows, and removing the mirror
// removes them.
func TestMirrorSelectedPortsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, mirrorPortSteps, keepTraceResult)
}

// mirrorRewriteSteps: Open vSwitch's "mirroring, output_port" case, the
// mirrored copy leaving before the flow's VLAN push.
func mirrorRewriteSteps() []ofStep {
	s := mirrorFlows("in_port=1 actions=mod_vlan_vid:17,output:2\nin_port=2 actions=output:1\n")
	s = append(s, createMirror("select_all=true", "output_port=@p3"))
	return append(s, traceFrom("1", mirrorICMP), traceFrom("2", mirrorICMP))
}

func TestMirrorCopiesBeforeRewritesLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, mirrorRewriteSteps, keepTraceResult)
}

// mirrorVLANSteps: output_vlan mirrors flood the packet, tagged with the
// output VLAN, to every port that carries it.
func mirrorVLANSteps() []ofStep {
	s := mirrorFlows("in_port=1 actions=output:2\nin_port=2 actions=mod_vlan_vid:17,output:1\n")
	s = append(s, createMirror("select_all=true", "output_vlan=12"))
	s = append(s, traceFrom("1", mirrorICMP), traceFrom("2", mirrorICMP), traceFrom("1", tagged("12")), traceFrom("1", tagged("5")))
	s = append(s, vsctl("set", "port", "p3", "tag=12"), vsctl("set", "port", "p2", "trunks=5"))
	return append(s, traceFrom("1", mirrorICMP), traceFrom("2", mirrorICMP), traceFrom("1", tagged("5")))
}

// Open vSwitch floods an output VLAN in the order its bundles were
// created, gvs in port order: the outputs are compared as a set of
// (port, VLAN) pairs, as Open vSwitch's own test normalizes them.
func TestMirrorToOutputVLANLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, mirrorVLANSteps, keepTraceResult, outputsAsSet)
}

// outputsAsSet rewrites a Datapath actions line of outputs, push_vlan
// and pop_vlan as the sorted list of the outputs, each with the VLAN
// the packet has there.
func outputsAsSet(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		acts, ok := strings.CutPrefix(l, "Datapath actions: ")
		if !ok {
			continue
		}
		vlan, outs := "untagged", []string{}
		for a := range strings.SplitSeq(strings.ReplaceAll(acts, ",pcp=", ";pcp="), ",") {
			switch {
			case a == "pop_vlan":
				vlan = "untagged"
			case strings.HasPrefix(a, "push_vlan("):
				vlan = a
			default:
				outs = append(outs, a+"@"+vlan)
			}
		}
		slices.Sort(outs)
		lines[i] = "Datapath outputs: " + strings.Join(outs, " ")
	}
	return strings.Join(lines, "\n")
}

// mirrorNormalSteps send frames through NORMAL with a mirror of p1 to p3
// and compare the ports' counters: each frame from p1 reaches p3 once
// (NORMAL never floods to a mirror's output port), frames from p2 do not,
// and frames received on p3 are dropped. gvs's NORMAL is one mac_learn
// action, so its datapath actions differ from Open vSwitch's: the frames
// that arrive are compared instead.
func mirrorNormalSteps() []ofStep {
	bcast := "eth(src=50:54:00:00:00:05,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0800),ipv4(src=192.168.0.1,dst=192.168.0.2,proto=1,tos=0,ttl=128,frag=no),icmp(type=8,code=0)"
	reply := "eth(src=50:54:00:00:00:07,dst=50:54:00:00:00:05),eth_type(0x0800),ipv4(src=192.168.0.2,dst=192.168.0.1,proto=1,tos=0,ttl=128,frag=no),icmp(type=0,code=0)"
	uni := "eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=192.168.0.1,dst=192.168.0.2,proto=1,tos=0,ttl=128,frag=no),icmp(type=8,code=0)"
	s := []ofStep{ofctl("add-flow", "br0", "actions=NORMAL"), createMirror("select_src_port=@p1", "output_port=@p3")}
	for _, p := range []struct{ port, pkt string }{{"p1", bcast}, {"p2", reply}, {"p1", uni}, {"p3", bcast}, {"p3", reply}} {
		s = append(s, appctl("netdev-dummy/receive", p.port, p.pkt), settle)
	}
	return append(s, ofctl("dump-ports", "br0"))
}

func TestMirrorWithNormalLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, mirrorNormalSteps, keepTraceResult, sortPortStats)
}

// sortPortStats orders dump-ports' two-line port entries by port
// (Open vSwitch lists them in hash order).
func sortPortStats(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "OFPST_PORT reply") })
	if i < 0 {
		return s
	}
	var ports []string
	for j := i + 1; j+1 < len(lines); j += 2 {
		ports = append(ports, lines[j]+"\n"+lines[j+1])
	}
	slices.Sort(ports)
	return strings.Join(append(lines[:i+1], ports...), "\n") + "\n"
}

// TestMirrorChangesRevalidateMegaflows: adding, removing and changing a
// mirror changes the installed megaflows' actions within a revalidation
// round. Open vSwitch 3.1 does not revalidate on a mirror change (its
// mbridge asks for revalidation only when a port goes away): there the
// old megaflow keeps mirroring until it expires, so this is checked on
// gvs alone.
func TestMirrorChangesRevalidateMegaflows(t *testing.T) {
	_, env := startDaemon(t)
	setUpOneBridge(t, env)
	dump := appctl("dpctl/dump-flows")
	s := mirrorFlows("in_port=1 actions=output:2\n")
	s = append(s, createMirror("select_src_port=@p1", "output_port=@p3"),
		appctl("netdev-dummy/receive", "p1", mirrorICMP), settle, dump,
		vsctl("clear", "bridge", "br0", "mirrors"), settle, dump,
		appctl("netdev-dummy/receive", "p1", mirrorICMP), settle,
		createMirror("select_dst_port=@p2", "output_port=@p3"), settle, dump,
		appctl("netdev-dummy/receive", "p1", mirrorICMP), settle, ofctl("dump-ports", "br0", "3"))
	// runSteps leaves out the files and sleeps.
	got := runSteps(t, env, "gvs-vswitchd", s)
	const mf = "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(frag=no), packets:<n>, bytes:<n>, used:<t>, "
	for _, w := range []struct {
		step int
		want string
	}{
		{3, mf + "actions:3,2"},
		{5, mf + "actions:2"},
		{8, mf + "actions:2,3"},
		{10, "tx pkts=2, bytes=212"},
	} {
		if !strings.Contains(got[w.step], w.want) {
			t.Errorf("step %d: want %q in\n%s", w.step, w.want, got[w.step])
		}
	}
}

// mirrorRecircSteps are Open vSwitch's "mirroring with recirculation":
// the pass after a recirculation does not mirror the packet again.
func mirrorRecircSteps() []ofStep {
	s := mirrorFlows("in_port=1 actions=2,debug_recirc,LOCAL\n")
	s = append(s, createMirror("select_all=true", "output_port=@p3"))
	return append(s, appctl("ofproto/trace", "ovs-dummy", "in_port(1),"+mirrorICMP, "-generate"),
		appctl("ofproto/trace", "ovs-dummy", "in_port(1),"+mirrorICMP+",recirc_id(1)", "-generate"))
}

// TestMirrorAcrossRecirculationLikeOpenVSwitch runs both switches for
// testing (--enable-dummy: debug_recirc).
func TestMirrorAcrossRecirculationLikeOpenVSwitch(t *testing.T) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	setUpOneBridge(t, ovsEnv)
	want := runSteps(t, ovsEnv, "ovs-vswitchd", mirrorRecircSteps())
	stopOVS()
	_, gvsEnv := startDaemonWith(t, func(c *vswitchd.Config) { c.EnableDummy = true })
	setUpOneBridge(t, gvsEnv)
	got := runSteps(t, gvsEnv, "gvs-vswitchd", mirrorRecircSteps())
	for i := range want {
		if g, w := keepTraceResult(got[i]), keepTraceResult(want[i]); g != w {
			t.Errorf("step %d differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", i, w, g)
		}
	}
}

// mirrorStatsSteps count what a mirror sent: Mirror.statistics is
// refreshed every 5 s (Open vSwitch's stats-update-interval).
func mirrorStatsSteps() []ofStep {
	s := mirrorFlows("in_port=1 actions=output:2\nin_port=2 actions=output:1\n")
	s = append(s, createMirror("select_src_port=@p1", "output_port=@p3"))
	for _, p := range []string{"p1", "p2", "p1"} {
		s = append(s, appctl("netdev-dummy/receive", p, mirrorICMP))
	}
	return append(s, ofStep{"sleep", []string{"7s"}}, vsctl("get", "mirror", "m", "statistics"))
}

func TestMirrorStatisticsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, mirrorStatsSteps, keepTraceResult)
}

// mirrorSnaplenSteps: Open vSwitch's snaplen cases. A mirror with
// snaplen puts trunc(N) before each of its outputs only (select_all,
// select_src, select_dst, output_vlan, a flow's own VLAN push after it),
// snaplen 0 or 65535 truncates nothing, and the snaplen is 16 bits wide.
func mirrorSnaplenSteps() []ofStep {
	s := mirrorFlows("in_port=1 actions=output:2\nin_port=2 actions=mod_vlan_vid:17,output:1\n")
	both := []ofStep{traceFrom("1", mirrorICMP), traceFrom("2", mirrorICMP)}
	for _, spec := range [][]string{
		{"select_all=true", "output_port=@p3", "snaplen=100"},
		{"select_src_port=@p1", "output_port=@p3", "snaplen=64"},
		{"select_dst_port=@p2", "output_port=@p3", "snaplen=100"},
		{"select_all=true", "output_port=@p3", "snaplen=0"},
		{"select_all=true", "output_port=@p3", "snaplen=65535"},
		{"select_all=true", "output_port=@p3", "snaplen=65636"},
	} {
		s = append(s, createMirror(spec...))
		s = append(s, both...)
	}
	return s
}

func TestMirrorSnaplenLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, mirrorSnaplenSteps, keepTraceResult)
}
