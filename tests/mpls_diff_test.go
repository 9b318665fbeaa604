package tests

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

// Flows in the OpenFlow syntax of ofproto/trace.
const (
	mplsICMP  = "in_port=1,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,icmp,nw_src=10.0.0.1,nw_dst=10.0.0.2,nw_tos=0xfc,nw_ttl=128,icmp_type=8,icmp_code=0"
	mplsIPv6  = "in_port=1,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,udp6,ipv6_src=2001:db8::1,ipv6_dst=2001:db8::2,nw_tos=40,nw_ttl=9"
	mplsARP   = "in_port=1,dl_src=50:54:00:00:00:05,dl_dst=ff:ff:ff:ff:ff:ff,arp,arp_spa=10.0.0.1,arp_tpa=10.0.0.2,arp_op=1,arp_sha=50:54:00:00:00:05"
	mplsLabel = "in_port=1,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,dl_type=0x8847,mpls_label=100,mpls_tc=2,mpls_ttl=64,mpls_bos=1"
)

// mplsTraceSteps are MPLS translations traced through both switches:
// push_mpls on IPv4, IPv6 and ARP (the new entry's TTL and TC from the IP
// header, label 0 or 2), two pushes, push onto a received MPLS packet,
// push then push_vlan, set_mpls_* and set_field on the entry after a push
// and in a later table that sees dl_type 0x8847, dec_mpls_ttl (and at TTL
// 1: the packet goes to the controller), pop_mpls followed by an output
// (no recirculation) and by a table lookup or a select group
// (recirculation), MPLS in the
// action set, and set_field on a received packet's label.
func mplsTraceSteps() []ofStep {
	of13 := func(args ...string) ofStep { return ofctl(append([]string{"-O", "OpenFlow13"}, args...)...) }
	trace := func(f string) ofStep { return appctl("ofproto/trace", "br0", f) }
	flows := func(fl ...string) []ofStep {
		st := []ofStep{of13("del-flows", "br0")}
		for _, f := range fl {
			st = append(st, of13("add-flow", "br0", f))
		}
		return st
	}
	var s []ofStep
	s = append(s, flows("in_port=1,actions=push_mpls:0x8847,output:2")...)
	s = append(s, trace(mplsICMP), trace(mplsIPv6), trace(mplsARP), trace(mplsLabel))
	s = append(s, flows("in_port=1,actions=push_mpls:0x8848,output:2")...)
	s = append(s, trace(mplsARP), trace(mplsLabel))
	s = append(s, flows("in_port=1,ip,actions=push_mpls:0x8847,set_mpls_label:10,push_mpls:0x8847,set_mpls_label:20,set_mpls_ttl:5,output:2")...)
	s = append(s, trace(mplsICMP))
	s = append(s, flows("in_port=1,actions=push_mpls:0x8847,push_vlan:0x8100,set_field:4102->vlan_vid,output:2")...)
	s = append(s, trace(mplsARP), trace(mplsICMP))
	s = append(s, flows("in_port=1,ip,actions=mod_nw_tos:0x20,dec_ttl,push_mpls:0x8847,goto_table:1",
		"table=1,mpls,actions=set_field:7->mpls_label,set_mpls_tc:3,dec_mpls_ttl,output:2",
		"table=1,ip,actions=output:3")...)
	s = append(s, trace(mplsICMP))
	s = append(s, flows("in_port=1,mpls,actions=set_mpls_label:200,set_mpls_ttl:9,output:2")...)
	s = append(s, trace(mplsLabel))
	s = append(s, flows("in_port=1,mpls,mpls_label=100,actions=set_field:300->mpls_label,set_field:5->mpls_tc,output:2")...)
	s = append(s, trace(mplsLabel))
	s = append(s, flows("in_port=1,mpls,actions=dec_mpls_ttl,output:2")...)
	s = append(s, trace(mplsLabel), trace(strings.Replace(mplsLabel, "mpls_ttl=64", "mpls_ttl=1", 1)),
		trace(strings.Replace(mplsLabel, "mpls_ttl=64", "mpls_ttl=0", 1)))
	s = append(s, flows("in_port=1,mpls,actions=pop_mpls:0x0800,output:2")...)
	s = append(s, trace(mplsLabel))
	s = append(s, flows("in_port=1,mpls,actions=pop_mpls:0x0800,set_field:10.0.0.9->ip_dst,output:2")...)
	s = append(s, trace(mplsLabel))
	s = append(s, flows("in_port=1,mpls,mpls_label=100,mpls_bos=1,actions=pop_mpls:0x0800,mod_dl_src:50:54:00:00:00:09,goto_table:1",
		"table=1,ip,nw_dst=10.0.0.2,actions=dec_ttl,output:2")...)
	s = append(s, trace(mplsLabel))
	// A select group after a pop recirculates (its hash may read the IP
	// header); an all group does not.
	s = append(s, of13("add-group", "br0", "group_id=7,type=select,selection_method=hash,bucket=output:2"),
		of13("add-group", "br0", "group_id=8,type=all,bucket=output:2"))
	s = append(s, flows("in_port=1,mpls,actions=pop_mpls:0x0800,group:7")...)
	s = append(s, trace(mplsLabel))
	s = append(s, flows("in_port=1,mpls,actions=pop_mpls:0x0800,group:8")...)
	s = append(s, trace(mplsLabel))
	s = append(s, flows("in_port=1,ip,actions=write_actions(set_mpls_label:5,push_mpls:0x8847,output:2)",
		"in_port=1,mpls,actions=write_actions(output:3,dec_mpls_ttl,pop_mpls:0x0800)")...)
	s = append(s, trace(mplsICMP), trace(mplsLabel))
	// A pop before a patch port: the peer bridge's lookup recirculates,
	// this bridge's next output does not.
	s = append(s, ofStep{"ovs-vsctl", []string{"add-br", "br1", "--", "set", "bridge", "br1", "datapath_type=dummy", "fail-mode=secure",
		"--", "add-port", "br1", "p4", "--", "set", "interface", "p4", "type=dummy", "ofport_request=4",
		"--", "add-port", "br0", "patch0", "--", "set", "interface", "patch0", "type=patch", "options:peer=patch1", "ofport_request=10",
		"--", "add-port", "br1", "patch1", "--", "set", "interface", "patch1", "type=patch", "options:peer=patch0", "ofport_request=11"}})
	s = append(s, flows("in_port=1,mpls,mpls_label=100,mpls_tc=2,mpls_ttl=64,mpls_bos=1,actions=pop_mpls:0x0800,output:10,output:2")...)
	s = append(s, of13("add-flow", "br1", "in_port=11,ip,nw_dst=10.0.0.2,actions=output:4"), trace(mplsLabel))
	return s
}

// traceResult keeps, of an ofproto/trace step, the command and the final
// Megaflow and Datapath actions lines (the trace's tree is printed by
// code this comparison is not about); other steps are kept whole.
func traceResult(s string) string {
	lines := strings.Split(s, "\n")
	if !strings.Contains(lines[0], "ofproto/trace") {
		return s
	}
	out := lines[:1]
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "Megaflow:") || strings.HasPrefix(l, "Datapath actions:") {
			out = append(out, maskRecircID(l))
		}
	}
	return strings.Join(out, "\n")
}

// TestMPLSTranslationLikeOpenVSwitch requires, for every MPLS translation
// of mplsTraceSteps, Open vSwitch's megaflow and datapath actions.
func TestMPLSTranslationLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, mplsTraceSteps, traceResult)
}

// mplsFrame is an Ethernet frame from 50:54:00:00:00:05 to
// 50:54:00:00:00:07 carrying the label stack entries lses and an ICMP
// echo from 10.0.0.1 to 10.0.0.2 with IP TTL 64.
func mplsFrame(lses ...uint32) string {
	b, _ := hex.DecodeString("505400000007" + "505400000005" + "8847")
	for _, l := range lses {
		b = binary.BigEndian.AppendUint32(b, l)
	}
	ip, _ := hex.DecodeString("4500001c0001000040010000" + "0a000001" + "0a000002" + "0800f7ff00000000")
	binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip[:20]))
	return hex.EncodeToString(append(b, ip...))
}

// lse composes a label stack entry.
func lse(label uint32, tc, ttl uint8, bos bool) uint32 {
	v := label<<12 | uint32(tc&7)<<9 | uint32(ttl)
	if bos {
		v |= 1 << 8
	}
	return v
}

// mplsTrafficSteps installs MPLS flows and sends real frames through
// them: IPv4 and ARP from in_port 3 (port in3) get one or two labels and
// leave through port 1; MPLS frames into port 1 (port in1) have their
// label rewritten, their TTL decremented (and at TTL 1 go to the
// controllers, here none), or are popped back to IPv4 and routed in a
// later table after recirculation, and leave through port 2.
func mplsTrafficSteps(in1, in3 string) []ofStep {
	of13 := func(args ...string) ofStep { return ofctl(append([]string{"-O", "OpenFlow13"}, args...)...) }
	const ipv4 = "in_port(3),eth(src=50:54:00:00:00:03,dst=50:54:00:00:00:01),eth_type(0x0800),ipv4(src=10.0.0.3,dst=10.0.0.9,proto=17,tos=0x48,ttl=17,frag=no),udp(src=53,dst=5353)"
	const arp = "in_port(3),eth(src=50:54:00:00:00:03,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0806),arp(sip=10.0.0.3,tip=10.0.0.1,op=1,sha=50:54:00:00:00:03,tha=00:00:00:00:00:00)"
	return []ofStep{
		of13("add-flow", "br0", "in_port=3,ip,actions=push_mpls:0x8847,set_mpls_label:100,output:1"),
		of13("add-flow", "br0", "in_port=3,arp,actions=push_mpls:0x8847,push_mpls:0x8847,set_field:200->mpls_label,output:1"),
		of13("add-flow", "br0", "in_port=1,mpls,mpls_label=100,mpls_bos=1,actions=pop_mpls:0x0800,goto_table:1"),
		of13("add-flow", "br0", "table=1,ip,nw_dst=10.0.0.2,actions=dec_ttl,output:2"),
		of13("add-flow", "br0", "in_port=1,mpls,mpls_label=300,actions=set_mpls_ttl:5,set_mpls_tc:2,set_field:301->mpls_label,output:2"),
		of13("add-flow", "br0", "in_port=1,mpls,mpls_label=400,actions=dec_mpls_ttl,output:2"),
		appctl("netdev-dummy/receive", in3, ipv4),
		appctl("netdev-dummy/receive", in3, arp),
		appctl("netdev-dummy/receive", in1, mplsFrame(lse(100, 0, 64, true))),
		appctl("netdev-dummy/receive", in1, mplsFrame(lse(100, 0, 64, true))),
		appctl("netdev-dummy/receive", in1, mplsFrame(lse(300, 7, 64, true))),
		appctl("netdev-dummy/receive", in1, mplsFrame(lse(400, 1, 64, true))),
		appctl("netdev-dummy/receive", in1, mplsFrame(lse(400, 1, 1, true))),
		appctl("revalidator/wait"),
	}
}

// mplsForwardingSession is mplsTrafficSteps on a bridge whose ports 1
// and 2 (p0, p1) capture to pcap files in dir.
func mplsForwardingSession(dir string) []ofStep {
	vsctl := func(args ...string) ofStep { return ofStep{"ovs-vsctl", append([]string{"--timeout=20"}, args...)} }
	return append([]ofStep{
		vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail-mode=secure",
			"--", "add-port", "br0", "p0", "--", "set", "Interface", "p0", "type=dummy", "ofport_request=1", "options:tx_pcap="+filepath.Join(dir, "p0.pcap"),
			"--", "add-port", "br0", "p1", "--", "set", "Interface", "p1", "type=dummy", "ofport_request=2", "options:tx_pcap="+filepath.Join(dir, "p1.pcap"),
			"--", "add-port", "br0", "p2", "--", "set", "Interface", "p2", "type=dummy", "ofport_request=3"),
	}, mplsTrafficSteps("p0", "p2")...)
}

// TestMPLSForwardingLikeOpenVSwitch runs mplsForwardingSession against
// both switches and requires, byte for byte, the same frames out of p0
// (pushed labels) and p1 (rewritten, decremented and popped ones).
func TestMPLSForwardingLikeOpenVSwitch(t *testing.T) {
	compareGRESession(t, mplsForwardingSession)
}

// wildcardedLSEMemberRE matches a member of a masked mpls() key whose
// mask is zero: Open vSwitch prints the packet's value there (its
// megaflows keep the unmasked key), gvs the masked one (0).
var wildcardedLSEMemberRE = regexp.MustCompile(`\b(label|tc|ttl|bos)=\d+/(0x)?0\b`)

// TestMPLSMegaflowsLikeOpenVSwitch requires the megaflows of
// mplsTrafficSteps to be Open vSwitch's: masks, recirculation after
// pop_mpls, the second pass's IPv4 match, the datapath actions.
func TestMPLSMegaflowsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	steps := func() []ofStep { return append(mplsTrafficSteps("p1", "p3"), appctl("dpctl/dump-flows")) }
	diffOneBridgeAgainstOpenVSwitch(t, steps, func(s string) string {
		return wildcardedLSEMemberRE.ReplaceAllString(s, "$1=*/0")
	})
}

// TestDecMPLSTTLExceptionGoesToControllersThatAskedLikeOpenVSwitch: an
// MPLS packet whose TTL is 1 reaches dec_mpls_ttl; a controller that
// asked for invalid-TTL packet-ins (`ovs-ofctl monitor ... invalid_ttl`)
// gets it with reason invalid_ttl and nothing is forwarded, one that did
// not ask gets nothing, and the packet-ins are the ones Open vSwitch
// sends.
func TestDecMPLSTTLExceptionGoesToControllersThatAskedLikeOpenVSwitch(t *testing.T) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	session := func(env []string, target string) string {
		setUpOneBridge(t, env)
		run(t, env, "ovs-ofctl", "-O", "OpenFlow13", "add-flow", "br0", "in_port=1,mpls,mpls_label=400,actions=dec_mpls_ttl,output:2")
		// Label 500 goes to the controllers with reason action: a
		// marker every monitor receives.
		run(t, env, "ovs-ofctl", "-O", "OpenFlow13", "add-flow", "br0", "in_port=1,mpls,mpls_label=500,actions=controller")
		receive := func(frame string) {
			run(t, env, "ovs-appctl", "-t", target, "netdev-dummy/receive", "p1", frame)
		}
		// sendUntil sends frame until mon's log holds want.
		sendUntil := func(mon *bgTool, frame, want string) string {
			var log string
			waitFor(t, want, func() bool {
				receive(frame)
				time.Sleep(100 * time.Millisecond)
				b, _ := os.ReadFile(mon.log)
				log = string(b)
				return strings.Contains(log, want)
			})
			return log
		}
		// A monitor that did not ask gets the markers, not the TTL
		// exception sent between them.
		plain := startTool(t, env, "ovs-ofctl", "monitor", "br0", "65534")
		sendUntil(plain, mplsFrame(lse(500, 0, 9, true)), "mpls_ttl=9")
		receive(mplsFrame(lse(400, 1, 1, true)))
		log := sendUntil(plain, mplsFrame(lse(500, 0, 8, true)), "mpls_ttl=8")
		plain.stop(t)
		out := fmt.Sprintf("monitor without invalid_ttl got an invalid_ttl packet-in: %v\n", strings.Contains(log, "invalid_ttl"))
		// One that asked gets it: its first packet-in.
		mon := startTool(t, env, "ovs-ofctl", "monitor", "br0", "65534", "invalid_ttl")
		sendUntil(mon, mplsFrame(lse(400, 1, 1, true)), "PACKET_IN")
		log = maskMonitor(mon.stop(t))
		i := strings.Index(log, "PACKET_IN")
		if j := strings.Index(log[i+1:], "PACKET_IN"); j >= 0 {
			log = log[:strings.LastIndex(log[:i+1+j], "\n")+1]
		}
		return out + log
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	want := session(ovsEnv, "ovs-vswitchd")
	stopOVS()
	_, gvsEnv := startDaemon(t)
	got := session(gvsEnv, "gvs-vswitchd")
	if os.Getenv("GVS_TRANSCRIPT") != "" {
		t.Logf("Open vSwitch monitor:\n%s", want)
	}
	if got != want {
		t.Errorf("monitor output differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", want, got)
	}
	if !strings.Contains(got, "invalid_ttl packet-in: false") || strings.Count(got, "(via invalid_ttl)") != 1 {
		t.Errorf("want no invalid_ttl packet-in without asking, one when asked:\n%s", got)
	}
}
