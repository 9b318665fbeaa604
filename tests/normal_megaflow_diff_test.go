package tests

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// normalMegaflowSteps send a conversation through NORMAL and dump the
// megaflows: the first frame floods (its destination is unknown), the
// answer goes to the learned port and revalidates the flood, the next
// frame goes to the answer's port, a broadcast ARP request matches its
// addresses and opcode (the gratuitous ARP check), and traces with
// -generate learn as a packet does.
func normalMegaflowSteps() []ofStep {
	ip := func(in, src, dst string) string {
		return "in_port(" + in + "),eth(src=50:54:00:00:00:0" + src + ",dst=50:54:00:00:00:0" + dst +
			"),eth_type(0x0800),ipv4(src=10.0.0." + src + ",dst=10.0.0." + dst + ",proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)"
	}
	arp := "in_port(3),eth(src=50:54:00:00:00:03,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0806),arp(sip=10.0.0.3,tip=10.0.0.1,op=1,sha=50:54:00:00:00:03,tha=00:00:00:00:00:00)"
	return []ofStep{
		ofctl("add-flow", "br0", "actions=NORMAL"),
		appctl("netdev-dummy/receive", "p1", ip("1", "1", "2")), settle,
		appctl("netdev-dummy/receive", "p2", ip("2", "2", "1")), settle,
		appctl("netdev-dummy/receive", "p1", ip("1", "1", "2")),
		appctl("netdev-dummy/receive", "p3", arp), settle,
		appctl("dpctl/dump-flows"),
		appctl("ofproto/trace", "ovs-dummy", ip("3", "3", "1")),
		appctl("ofproto/trace", "ovs-dummy", ip("1", "1", "4")),
		appctl("ofproto/trace", "ovs-dummy", ip("2", "4", "5"), "-generate"),
		appctl("ofproto/trace", "ovs-dummy", ip("3", "3", "4")),
		appctl("fdb/add", "br0", "p2", "0", "50:54:00:00:00:01"),
		appctl("fdb/add", "br0", "p3", "0", "50:54:00:00:00:01"),
		appctl("fdb/show", "br0"),
	}
}

// maskFDBAges hides the age column of fdb/show (seconds since learned:
// a run of the test may cross a second boundary on one switch only).
func maskFDBAges(s string) string {
	if !strings.Contains(s, "fdb/show") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if f := strings.Fields(l); len(f) == 4 && f[3] != "Age" && f[3] != "static" {
			lines[i] = l[:strings.LastIndex(l, f[3])] + "?"
		}
	}
	return strings.Join(lines, "\n")
}

// TestNormalMegaflowsPerMACLikeOpenVSwitch: on a bridge whose MAC table
// is small, NORMAL's megaflows, traces and learned entries are Open
// vSwitch's (one megaflow per address pair, revalidated as addresses are
// learned), and fdb/add names the entry it replaces.
func TestNormalMegaflowsPerMACLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, normalMegaflowSteps, keepTraceResult, maskFDBAges, sortFloodOutputs)
}

// TestNormalBecomesMACLearnActionAboveThreshold: past
// other_config:mac-learn-action-threshold entries NORMAL is the
// datapath's mac_learn action (one megaflow for any address), and back to
// per-address megaflows once the table is down to half of it; 0 makes it
// the action always.
func TestNormalBecomesMACLearnActionAboveThreshold(t *testing.T) {
	t.Parallel()
	_, env := startDaemon(t)
	setUpOneBridge(t, env)
	appctl := appctlFunc(t, env)
	run(t, env, "ovs-ofctl", "add-flow", "br0", "actions=NORMAL")
	run(t, env, "ovs-vsctl", "set", "bridge", "br0", "other_config:mac-learn-action-threshold=2")
	send := func(src string) {
		appctl("netdev-dummy/receive", "p1", "in_port(1),eth(src=50:54:00:00:00:"+src+",dst=50:54:00:00:00:99),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=17,tos=0,ttl=64,frag=no),udp(src=1,dst=2)")
	}
	flows := func() string {
		appctl("revalidator/wait")
		appctl("revalidator/wait")
		return appctl("dpctl/dump-flows")
	}
	send("01")
	send("02")
	if f := flows(); strings.Contains(f, "mac_learn") || strings.Count(f, "eth(src=") != 2 {
		t.Fatalf("two addresses, threshold 2: want one megaflow per address\n%s", f)
	}
	send("03")
	send("04")
	// The per-address megaflows are revalidated away (the action's
	// megaflow also matches the VLAN priority, which theirs do not); the
	// new address has a megaflow without addresses.
	if f := flows(); !allMACLearn(f) || !strings.Contains(f, "in_port(1),packet_type(ns=0,id=0),eth_type(0x0800)") {
		t.Fatalf("four addresses, threshold 2: want the mac_learn action, for any address\n%s", f)
	}
	appctl("fdb/flush", "br0")
	appctl("dpctl/del-flows")
	send("05")
	if f := flows(); strings.Contains(f, "mac_learn") || !strings.Contains(f, "eth(src=50:54:00:00:00:05") {
		t.Fatalf("table flushed: want per-address megaflows again\n%s", f)
	}
	run(t, env, "ovs-vsctl", "set", "bridge", "br0", "other_config:mac-learn-action-threshold=0")
	deadline := time.Now().Add(10 * time.Second)
	for {
		f := flows()
		if allMACLearn(f) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("threshold 0: want the per-address megaflows revalidated into the action\n%s", f)
		}
		send("06")
	}
}

// allMACLearn reports whether a flow dump has megaflows and all of them
// are the mac_learn action.
func allMACLearn(dump string) bool {
	n := 0
	for _, l := range strings.Split(dump, "\n") {
		if !strings.Contains(l, "actions:") {
			continue
		}
		if !strings.Contains(l, "actions:mac_learn(") {
			return false
		}
		n++
	}
	return n > 0
}

// sortFloodOutputs sorts the output ports of datapath action lists made
// only of outputs ("actions:3,100,2", "Datapath actions: 3,100,2"): Open
// vSwitch floods in the order of a hash table, as its own tests know
// (they compare through ovs-dpctl normalize-actions).
func sortFloodOutputs(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		at := strings.LastIndex(l, "actions:")
		if at < 0 {
			continue
		}
		head, list := l[:at+len("actions:")], strings.TrimSpace(l[at+len("actions:"):])
		ports := strings.Split(list, ",")
		numeric := len(ports) > 1
		for _, p := range ports {
			if _, err := strconv.Atoi(p); err != nil {
				numeric = false
			}
		}
		if numeric {
			slices.SortFunc(ports, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y })
			sep := ""
			if strings.HasSuffix(head, "Datapath actions:") {
				sep = " "
			}
			lines[i] = head + sep + strings.Join(ports, ",")
		}
	}
	return strings.Join(lines, "\n")
}

// dpctlPutSteps install datapath flows by hand: one without an exact
// in_port (refused, with the datapath's error in the log), one twice
// (the second exists), and a modification of one that does not exist.
func dpctlPutSteps() []ofStep {
	good := "in_port(1),eth(),eth_type(0x0800),ipv4()"
	return []ofStep{
		appctl("dpctl/add-flow", "eth(),eth_type(0x0800),ipv4()", "3"),
		appctl("dpctl/add-flow", good, "3"),
		appctl("dpctl/add-flow", good, "2"),
		appctl("dpctl/mod-flow", "in_port(2),eth(),eth_type(0x0800),ipv4()", "3"),
		{tool: "log", args: []string{`in_port is not an exact match`}},
	}
}

// TestDpctlPutErrorsLikeOpenVSwitch: dpctl/add-flow and mod-flow refuse
// what Open vSwitch's userspace datapath refuses, in its words.
func TestDpctlPutErrorsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, dpctlPutSteps, daemonAsOVS)
}

// truncSteps send output(max_len) to a patch port, to the input port and
// to a port with a datapath port of its own.
func truncSteps() []ofStep {
	return []ofStep{
		{tool: "ovs-vsctl", args: []string{"add-br", "br1", "--", "set", "bridge", "br1", "datapath_type=dummy", "fail-mode=secure",
			"--", "add-port", "br1", "pbr1", "--", "set", "int", "pbr1", "type=patch", "options:peer=pbr0", "ofport_request=1",
			"--", "add-port", "br0", "pbr0", "--", "set", "int", "pbr0", "type=patch", "options:peer=pbr1", "ofport_request=4"}},
		ofctl("add-flow", "br0", "in_port=LOCAL,actions=output(port=4,max_len=100),output(port=LOCAL,max_len=100),output(port=3,max_len=100),output:2"),
		ofctl("add-flow", "br1", "actions=NORMAL"),
		appctl("ofproto/trace", "br0", "in_port=LOCAL,dl_src=10:20:30:40:50:60"),
	}
}

// keepTruncLines keeps a trace's truncation verdicts and its result.
func keepTruncLines(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "$ ") || strings.Contains(l, "output_trunc") || strings.Contains(l, "input port") ||
			strings.HasPrefix(l, "Megaflow:") || strings.HasPrefix(l, "Datapath actions:") {
			keep = append(keep, strings.TrimSpace(l))
		}
	}
	return strings.Join(keep, "\n")
}

// TestOutputTruncRefusesPatchPortsLikeOpenVSwitch: output(max_len) to a
// patch port is refused (the truncation would apply to whatever the peer
// outputs), to the input port skipped, and to a port with a datapath port
// made a trunc action, as Open vSwitch translates them.
func TestOutputTruncRefusesPatchPortsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, truncSteps, keepTruncLines)
}

// normalTraceSteps trace NORMAL's decisions: a broadcast, an unknown
// unicast, a learned destination, a destination learned on the input
// port, and a tagged packet an access port refuses.
func normalTraceSteps() []ofStep {
	return []ofStep{
		{tool: "ovs-vsctl", args: []string{"set", "port", "p3", "tag=10"}},
		ofctl("add-flow", "br0", "actions=NORMAL"),
		appctl("ofproto/trace", "br0", "in_port=1,dl_dst=ff:ff:ff:ff:ff:ff"),
		appctl("ofproto/trace", "br0", "in_port=1,dl_src=50:54:00:00:00:01,dl_dst=50:54:00:00:00:02"),
		appctl("ofproto/trace", "ovs-dummy", "in_port(2),eth(src=50:54:00:00:00:02,dst=50:54:00:00:00:01),eth_type(0x1234)", "-generate"),
		appctl("ofproto/trace", "br0", "in_port=1,dl_src=50:54:00:00:00:01,dl_dst=50:54:00:00:00:02"),
		appctl("ofproto/trace", "br0", "in_port=2,dl_src=50:54:00:00:00:03,dl_dst=50:54:00:00:00:02"),
		appctl("ofproto/trace", "br0", "in_port=3,dl_vlan=20,dl_src=50:54:00:00:00:03,dl_dst=50:54:00:00:00:02"),
	}
}

// keepTraceNotes keeps a trace's notes (" -> ", " >> ", ">>>> <<<<"),
// megaflow and datapath actions.
func keepTraceNotes(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(l, "$ ") || strings.HasPrefix(t, "-> ") || strings.HasPrefix(t, ">> ") || strings.HasPrefix(t, ">>>> ") ||
			strings.HasPrefix(t, "Megaflow:") || strings.HasPrefix(t, "Datapath actions:") {
			keep = append(keep, t)
		}
	}
	return strings.Join(keep, "\n")
}

// TestNormalTraceNotesLikeOpenVSwitch: ofproto/trace explains NORMAL's
// decisions in Open vSwitch's words.
func TestNormalTraceNotesLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, normalTraceSteps, keepTraceNotes, sortFloodOutputs)
}
