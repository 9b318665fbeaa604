package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/internal/ovsoracle"
)

// ofStep is one step of an OpenFlow session: an ovs-ofctl or ovs-appctl
// command, a pause for the revalidators, or a flow file to write.
type ofStep struct {
	tool string // "ovs-ofctl", "ovs-appctl", "sleep", "wait", "file" or "log"
	args []string
}

func ofctl(args ...string) ofStep  { return ofStep{"ovs-ofctl", args} }
func appctl(args ...string) ofStep { return ofStep{"ovs-appctl", args} }

// settle waits for both switches' revalidators to push megaflow
// statistics to the rules and to revalidate megaflows after rule
// changes: two full revalidation rounds that start after the step
// (`ovs-appctl revalidator/wait`, twice, since the first may end a round
// that began before the step), instead of sleeping through them.
var settle = ofStep{tool: "wait", args: []string{"revalidator/wait"}}

// ageStep lets more than a second pass, so that a flow modified after it
// shows a hard_age apart from its duration.
var ageStep = ofStep{tool: "sleep", args: []string{"1500ms"}}

// pause lets a switch handle an injected packet before the next.
var pause = ofStep{tool: "sleep", args: []string{"200ms"}}

// Packets injected with netdev-dummy/receive, in the datapath flow syntax.
const (
	pktIPToP2   = "in_port(2),eth(src=50:54:00:00:00:02,dst=50:54:00:00:00:01),eth_type(0x0800),ipv4(src=10.0.0.5,dst=10.0.0.2,proto=6,tos=0,ttl=64,frag=no),tcp(src=1000,dst=22)"
	pktWebFrom3 = "in_port(3),eth(src=50:54:00:00:00:03,dst=50:54:00:00:00:01),eth_type(0x0800),ipv4(src=10.0.0.3,dst=10.0.0.9,proto=6,tos=0,ttl=64,frag=no),tcp(src=2000,dst=80)"
	pktUDPFrom3 = "in_port(3),eth(src=50:54:00:00:00:03,dst=50:54:00:00:00:01),eth_type(0x0800),ipv4(src=10.0.0.3,dst=10.0.0.9,proto=17,tos=0,ttl=64,frag=no),udp(src=53,dst=5353)"
	pktFrom1    = "in_port(1),eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.7,proto=17,tos=0,ttl=64,frag=no),udp(src=1,dst=2)"
)

// ofctlSession is the scripted session run against both switches: a
// bridge br0 (dummy datapath) with ports p1, p2, p3 numbered 1, 2, 3.
func ofctlSession() []ofStep {
	return []ofStep{
		ofctl("show", "br0"),
		ofctl("dump-flows", "br0"),
		ofctl("add-flow", "br0", "in_port=1,actions=output:2"),
		ofctl("add-flow", "br0", "priority=5,ip,nw_dst=10.0.0.2,actions=mod_dl_dst:aa:bb:cc:dd:ee:ff,output:1"),
		ofctl("add-flow", "br0", "table=1,priority=10,tcp,tp_dst=80,actions=drop"),
		ofctl("add-flow", "br0", "cookie=0x5,priority=7,in_port=3,actions=resubmit(,1),output:1"),
		ofctl("add-flow", "br0", "table=1,priority=1,actions=load:0x2a->NXM_NX_REG0[],output:2"),
		ofctl("-O", "OpenFlow13", "add-flow", "br0", "table=2,priority=3,udp,actions=goto_table:3"),
		ofctl("-O", "OpenFlow13", "add-flow", "br0", "table=3,cookie=0x7,priority=3,reg0=0,actions=set_field:5->reg1,output:3"),
		ofctl("--no-stats", "dump-flows", "br0"),
		appctl("ofproto/trace", "br0", "in_port=3,tcp,nw_src=10.0.0.3,nw_dst=10.0.0.9,tp_src=2000,tp_dst=80"),
		appctl("ofproto/trace", "br0", "in_port=3,udp,nw_src=10.0.0.3,nw_dst=10.0.0.9"),
		appctl("ofproto/trace", "br0", "in_port=2,tcp,nw_dst=10.0.0.2,tp_dst=22"),
		appctl("ofproto/trace", "br0", "in_port=1,icmp"),
		ofctl("--sort", "dump-flows", "br0"),
		ofctl("dump-flows", "br0", "table=1"),
		ofctl("dump-flows", "br0", "cookie=0x5/-1"),
		ofctl("dump-flows", "br0", "tcp"),
		ofctl("dump-flows", "br0", "out_port=2"),
		ofctl("-O", "OpenFlow13", "dump-flows", "br0"),
		ofctl("-O", "OpenFlow15", "dump-flows", "br0"),
		ofctl("dump-aggregate", "br0"),
		ofctl("-O", "OpenFlow13", "dump-aggregate", "br0", "table=1"),
		appctl("netdev-dummy/receive", "p2", pktIPToP2),
		appctl("netdev-dummy/receive", "p3", pktWebFrom3),
		appctl("netdev-dummy/receive", "p3", pktUDPFrom3),
		appctl("netdev-dummy/receive", "p1", pktFrom1),
		appctl("netdev-dummy/receive", "p1", pktFrom1),
		settle,
		// The flows modified below must be at least a second old, so
		// that their hard_age differs from their duration and both
		// switches print it: time itself is what this step waits for.
		ageStep,
		appctl("dpctl/dump-flows"),
		ofctl("dump-flows", "br0"),
		ofctl("dump-aggregate", "br0"),
		ofctl("mod-flows", "br0", "in_port=1,actions=output:3"),
		ofctl("--strict", "mod-flows", "br0", "table=1,priority=1,actions=output:1"),
		ofctl("dump-flows", "br0"),
		settle,
		appctl("dpctl/dump-flows"),
		appctl("netdev-dummy/receive", "p1", pktFrom1),
		settle,
		appctl("dpctl/dump-flows"),
		ofctl("del-flows", "br0", "table=1"),
		ofctl("--strict", "del-flows", "br0", "priority=5,ip,nw_dst=10.0.0.2"),
		ofctl("--no-stats", "dump-flows", "br0"),
		ofctl("add-flow", "br0", "table=254,actions=drop"),
		ofctl("-O", "OpenFlow13", "add-flow", "br0", "table=255,actions=drop"),
		ofctl("add-flow", "br0", "check_overlap,priority=7,in_port=3,actions=drop"),
		ofctl("add-flow", "br0", "in_port=1,actions=output:2,frobnicate"),
		ofctl("add-flow", "br0", "tcp,tp_dst=80,actions=set_field:1->udp_dst"),
		{tool: "file", args: []string{"flows.txt",
			"priority=20,arp,actions=NORMAL\n" +
				"priority=21,udp,tp_src=53,actions=output:1\n" +
				"table=4,priority=9,icmp,actions=output:2\n"}},
		ofctl("add-flows", "br0", "flows.txt"),
		ofctl("--no-stats", "dump-flows", "br0"),
		ofctl("-O", "OpenFlow14", "--bundle", "add-flow", "br0", "table=5,priority=1,actions=output:1"),
		ofctl("-O", "OpenFlow14", "--bundle", "add-flows", "br0", "flows.txt"),
		ofctl("diff-flows", "br0", "flows.txt"),
		ofctl("--no-stats", "--sort", "dump-flows", "br0"),
		ofctl("replace-flows", "br0", "flows.txt"),
		ofctl("--no-stats", "--sort", "dump-flows", "br0"),
		ofctl("-O", "OpenFlow13", "del-flows", "br0", "cookie=0x0/0xffffffffffffffff,udp"),
		ofctl("--no-stats", "dump-flows", "br0"),
		ofctl("del-flows", "br0"),
		ofctl("dump-flows", "br0"),
		ofctl("dump-ports-desc", "br0"),
		ofctl("-O", "OpenFlow13", "dump-ports-desc", "br0"),
		ofctl("-O", "OpenFlow15", "dump-ports-desc", "br0"),
		ofctl("dump-ports", "br0", "2"),
		ofctl("get-frags", "br0"),
		ofctl("set-frags", "br0", "drop"),
		ofctl("get-frags", "br0"),
		ofctl("packet-out", "br0", "in_port=CONTROLLER", "actions=output:2",
			"50540000000150540000000308004500001c0001000040117ab60a0000030a000009003500350008ccf1"),
		ofctl("dump-ports", "br0", "2"),
		ofctl("dump-tables", "br0"),
		// No IPFIX on br0: both refuse with NXST_NOT_CONFIGURED.
		ofctl("dump-ipfix-bridge", "br0"),
		ofctl("dump-ipfix-flow", "br0"),
		ofctl("-O", "OpenFlow13", "dump-tables", "br0"),
		ofctl("-O", "OpenFlow13", "dump-table-features", "br0"),
		ofctl("-O", "OpenFlow15", "dump-table-features", "br0"),
		ofctl("dump-table-features", "br0"),
		ofctl("add-tlv-map", "br0", "{class=0xffff,type=0,len=4}->tun_metadata0,{class=0xffff,type=1,len=8}->tun_metadata1"),
		ofctl("dump-tlv-map", "br0"),
		ofctl("add-tlv-map", "br0", "{class=0xffff,type=2,len=4}->tun_metadata0"),
		ofctl("del-tlv-map", "br0", "{class=0xffff,type=0,len=4}->tun_metadata0"),
		ofctl("dump-tlv-map", "br0"),
		ofctl("-O", "OpenFlow13", "get-async", "br0"),
		// Patch ports: translation continues in the peer bridge.
		ofctl("del-flows", "br0"),
		ofctl("add-flow", "br0", "in_port=1,actions=mod_nw_tos:16,output:10"),
		ofctl("add-flow", "br1", "in_port=11,ip,actions=mod_dl_src:00:00:00:00:00:aa,output:4,resubmit(,1)"),
		ofctl("add-flow", "br1", "table=1,actions=output:IN_PORT"),
		appctl("ofproto/trace", "br0", "in_port=1,udp,nw_src=10.0.0.1,nw_dst=10.0.0.7"),
		// Earlier steps left megaflows (and, in Open vSwitch, their
		// ukeys, which stop an identical megaflow from being installed
		// again until they are revalidated away): start from none.
		appctl("revalidator/purge"),
		appctl("netdev-dummy/receive", "p1", pktFrom1),
		settle,
		appctl("dpctl/dump-flows"),
		ofctl("dump-flows", "br1"),
		// A packet-out's actions traced instead of the tables.
		appctl("ofproto/trace-packet-out", "br0", "in_port=1,icmp,nw_src=10.0.0.1,nw_dst=10.0.0.2",
			"set_field:10.0.0.9->nw_dst,output:2,resubmit(,1),output:10"),
		appctl("ofproto/trace-packet-out", "br1", "in_port=4,udp,nw_src=10.0.0.1,nw_dst=10.0.0.2", "output:IN_PORT,resubmit(,1)"),
	}
}

// maskOfctl masks what legitimately differs between the two switches or
// two runs: times, ages, datapath ids, MACs, unsupported counters.
func maskOfctl(tool string, args []string, out string) string {
	out = ovsoracle.MaskDurations(out)
	out = ovsoracle.MaskAges(out)
	out = ovsoracle.MaskDPIDs(out)
	out = ovsoracle.MaskPortMACs(out)
	out = ovsoracle.MaskUsed(out)
	out = ovsoracle.MaskPortErrorCounters(out)
	if tool == "ovs-ofctl" && (slices.Contains(args, "dump-flows") || slices.Contains(args, "diff-flows") ||
		slices.Contains(args, "dump-groups") || slices.Contains(args, "dump-group-stats")) {
		// Dumps list flows and groups in hash order, which differs
		// between implementations (--sort breaks priority ties in
		// that order too): compare them as a set.
		head := 0
		if lines := strings.Split(strings.TrimRight(out, "\n"), "\n"); len(lines) > 1 && strings.Contains(lines[0], " reply ") {
			head = 1
		}
		out = ovsoracle.SortLines(out, head)
	}
	if tool == "ovs-appctl" && (args[0] == "tnl/ports/show" || args[0] == "tnl/neigh/show" || args[0] == "tnl/arp/show") {
		// Listed in hash order (after the heading).
		head := 1
		if args[0] != "tnl/ports/show" {
			head = 2
		}
		out = ovsoracle.SortLines(out, head)
	}
	if tool == "ovs-appctl" && args[0] == "dpctl/dump-conntrack" {
		// Connections are listed in hash order (Open vSwitch's hash
		// basis is random per run): compare them as a set.
		out = ovsoracle.SortLines(out, 0)
	}
	if tool == "ovs-appctl" && args[0] == "dpctl/dump-flows" {
		out = ovsoracle.MaskMegaflowCounters(out)
		// Megaflows are listed in hash order: compare them as a set.
		out = ovsoracle.SortLines(out, 0)
	}
	return out
}

// runOfctlSession runs the session with the environment's OVS_RUNDIR
// (where br0.mgmt is) and target (the vswitchd's name for ovs-appctl -t).
func runOfctlSession(t *testing.T, env []string, target string) []string {
	t.Helper()
	return runSteps(t, env, target, ofctlSession())
}

// diffAgainstOpenVSwitch runs steps against Open vSwitch (dummy
// datapath) and then against gvs-vswitchd, each with the bridges of
// setUpOfctlBridge, and reports every step whose masked transcript differs.
func diffAgainstOpenVSwitch(t *testing.T, steps func() []ofStep) {
	t.Helper()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	setUpOfctlBridge(t, ovsEnv)
	want := runSteps(t, ovsEnv, "ovs-vswitchd", steps())
	stopOVS()
	_, gvsEnv := startDaemon(t)
	setUpOfctlBridge(t, gvsEnv)
	got := runSteps(t, gvsEnv, "gvs-vswitchd", steps())
	if os.Getenv("GVS_TRANSCRIPT") != "" {
		t.Logf("gvs transcript:\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", i, want[i], got[i])
		}
	}
}

// runSteps runs a scripted session and returns the masked transcript,
// one entry per command.
func runSteps(t *testing.T, env []string, target string, steps []ofStep) []string {
	t.Helper()
	dir := t.TempDir()
	var out []string
	for _, st := range steps {
		switch st.tool {
		case "sleep":
			d, _ := time.ParseDuration(st.args[0])
			time.Sleep(d)
			continue
		case "wait":
			// An unrecorded ovs-appctl command that returns once the
			// switch has done what the step waits for; run twice.
			for range 2 {
				run(t, env, append([]string{"ovs-appctl", "-t", target}, st.args...)...)
			}
			continue
		case "file":
			if err := os.WriteFile(filepath.Join(dir, st.args[0]), []byte(st.args[1]), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		case "log":
			out = append(out, "$ log "+st.args[0]+"\n"+daemonLogLines(t, env, target, st.args[0]))
			continue
		}
		args := slices.Clone(st.args)
		for i, a := range args {
			if a == "flows.txt" {
				args[i] = filepath.Join(dir, a)
			}
		}
		if st.tool == "ovs-appctl" {
			args = append([]string{"-t", target}, args...)
		} else {
			args = append([]string{"--timeout=10"}, args...)
		}
		c := exec.Command(st.tool, args...)
		c.Env = env
		b, err := c.CombinedOutput()
		rc := 0
		if err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatalf("%s %s: %v", st.tool, strings.Join(args, " "), err)
			}
			rc = ee.ExitCode()
		}
		text := strings.ReplaceAll(string(b), dir+"/", "")
		text = ovsoracle.StripLogPrefixes(text)
		out = append(out, fmt.Sprintf("$ %s %s  [exit %d]\n%s", st.tool, strings.Join(st.args, " "), rc, maskOfctl(st.tool, st.args, text)))
	}
	return out
}

// setUpOfctlBridge creates br0 with three dummy ports through ovs-vsctl.
func setUpOfctlBridge(t testing.TB, env []string) {
	run(t, env, "ovs-vsctl", "--timeout=20", "init")
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
		"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=1",
		"--", "add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy", "ofport_request=2",
		"--", "add-port", "br0", "p3", "--", "set", "interface", "p3", "type=dummy", "ofport_request=3")
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br1", "--", "set", "bridge", "br1", "datapath_type=dummy",
		"--", "add-port", "br1", "p4", "--", "set", "interface", "p4", "type=dummy", "ofport_request=4",
		"--", "add-port", "br0", "patch0", "--", "set", "interface", "patch0", "type=patch", "options:peer=patch1", "ofport_request=10",
		"--", "add-port", "br1", "patch1", "--", "set", "interface", "patch1", "type=patch", "options:peer=patch0", "ofport_request=11")
}

// TestOvsOfctlSessionPrintsTheSameAsAgainstOpenVSwitch runs one scripted
// session of Debian's ovs-ofctl (flow adds, modifies, deletes, dumps with
// filters, aggregate, bundles, replace/diff-flows, ports, packet-out)
// and ovs-appctl (packets injected into dummy ports, the megaflows they
// make) against gvs-vswitchd and against Open vSwitch's ovs-vswitchd with
// the dummy datapath, and requires the same transcript with times, MACs
// and datapath ids masked.
func TestOvsOfctlSessionPrintsTheSameAsAgainstOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffAgainstOpenVSwitch(t, ofctlSession)
}

// logStep records the lines of the daemon's log (ovs-vswitchd.log or
// gvs-vswitchd.log in OVS_LOGDIR) that match re, without their
// timestamp, sequence number and level prefix but with their module.
func logStep(re string) ofStep { return ofStep{"log", []string{re}} }

func daemonLogLines(t *testing.T, env []string, target, re string) string {
	t.Helper()
	dir := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "OVS_LOGDIR="); ok {
			dir = v
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, target+".log"))
	if err != nil {
		t.Fatal(err)
	}
	rx := regexp.MustCompile(re)
	prefix := regexp.MustCompile(`^\S+\|\d+\|`)
	var out strings.Builder
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if rx.MatchString(l) {
			out.WriteString(prefix.ReplaceAllString(l, ""))
		}
	}
	return out.String()
}
