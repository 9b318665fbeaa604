package xlate_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// MPLS packets in the datapath flow syntax.
const (
	pktMPLS = "in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x8847),mpls(label=%s,tc=1,ttl=%s,bos=1)"
	pktTOS  = "in_port(1),eth(src=50:54:00:00:00:03,dst=50:54:00:00:00:01),eth_type(0x0800)," +
		"ipv4(src=10.0.0.3,dst=10.0.0.9,proto=17,tos=0x48,ttl=17,frag=no),udp(src=53,dst=5353)"
	pktARP = "in_port(1),eth(src=50:54:00:00:00:03,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0806)," +
		"arp(sip=10.0.0.3,tip=10.0.0.1,op=1,sha=50:54:00:00:00:03,tha=00:00:00:00:00:00)"
)

func mplsPkt(label, ttl string) string { return fmt.Sprintf(pktMPLS, label, ttl) }

// mplsFlows and mplsOracle were translated by Open vSwitch 3.1 (the
// bridge of oracleCases, the flows added with ovs-ofctl -O OpenFlow13,
// packets sent with netdev-dummy/receive, megaflows and actions from
// dpctl/dump-flows; tests/mpls_diff_test.go runs the same session).
var mplsFlows = []string{
	"in_port=3,ip,actions=push_mpls:0x8847,set_mpls_label:100,output:1",
	"in_port=3,arp,actions=push_mpls:0x8847,push_mpls:0x8847,set_field:200->mpls_label,output:1",
	"in_port=1,mpls,mpls_label=100,mpls_bos=1,actions=pop_mpls:0x0800,goto_table:1",
	"table=1,ip,nw_dst=10.0.0.2,actions=dec_ttl,output:2",
	"in_port=1,mpls,mpls_label=300,actions=set_mpls_ttl:5,set_mpls_tc:2,set_field:301->mpls_label,output:2",
	"in_port=1,mpls,mpls_label=400,actions=dec_mpls_ttl,output:2",
}

var mplsOracle = []struct {
	name, pkt, actions, mega string
}{
	{"push on IPv4: TTL and TC from the IP header", strings.Replace(pktTOS, "in_port(1)", "in_port(3)", 1),
		"push_mpls(label=100,tc=2,ttl=17,bos=1,eth_type=0x8847),1",
		"recirc_id(0),in_port(3),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(tos=0x48/0xfc,ttl=17,frag=no)"},
	{"two pushes on ARP: TTL 64, the second copies the first", strings.Replace(pktARP, "in_port(1)", "in_port(3)", 1),
		"push_mpls(label=0,tc=0,ttl=64,bos=1,eth_type=0x8847),push_mpls(label=200,tc=0,ttl=64,bos=0,eth_type=0x8847),1",
		"recirc_id(0),in_port(3),packet_type(ns=0,id=0),eth_type(0x0806)"},
	{"pop_mpls then goto_table recirculates", mplsPkt("100", "64"),
		"pop_mpls(eth_type=0x800),recirc(0x1)",
		"recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x8847),mpls(label=100/0xfffff,tc=0/0,ttl=64/0x0,bos=1/1)"},
	{"set_mpls_* and set_field on a received entry", mplsPkt("300", "64"),
		"set(mpls(label=301,tc=2,ttl=5,bos=1)),2",
		"recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x8847),mpls(label=300,tc=1,ttl=64,bos=1)"},
	{"dec_mpls_ttl", mplsPkt("400", "64"),
		"set(mpls(label=400,tc=1,ttl=63,bos=1)),2",
		"recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x8847),mpls(label=400/0xfffff,tc=1/0,ttl=64/0xff,bos=1/1)"},
}

func TestMPLSTranslationMatchesOpenVSwitch(t *testing.T) {
	for _, tc := range mplsOracle {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, mf.OF13, mplsFlows...)
			k := key(t, tc.pkt)
			out := e.translate(k)
			if out.Err != nil {
				t.Fatal(out.Err)
			}
			if got := out.Actions.String(); got != tc.actions {
				t.Errorf("actions\n got %s\nwant %s", got, tc.actions)
			}
			wantMegaflow(t, k, out.Mask, tc.mega)
		})
	}
}

// TestPopMPLSWithoutLaterLookupDoesNotRecirculate: an output after
// pop_mpls needs no look at the IP header (Open vSwitch's trace).
func TestPopMPLSWithoutLaterLookupDoesNotRecirculate(t *testing.T) {
	e := newEnv(t, mf.OF13, "in_port=1,mpls,actions=pop_mpls:0x0800,output:2")
	k := key(t, mplsPkt("100", "64"))
	out := e.translate(k)
	if got, want := out.Actions.String(), "pop_mpls(eth_type=0x800),2"; got != want {
		t.Fatalf("actions\n got %s\nwant %s", got, want)
	}
	wantMegaflow(t, k, out.Mask, "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x8847),mpls(label=0/0x0,tc=0/0,ttl=0/0x0,bos=1/1)")
}

// TestPopMPLSThenTableLookupRecirculates: after pop_mpls to IPv4 the
// pipeline cannot match the IP header without seeing it, so translation
// recirculates before goto_table, and the next pass (the re-extracted
// IPv4 packet) resumes with it.
func TestPopMPLSThenTableLookupRecirculates(t *testing.T) {
	e := newEnv(t, mf.OF13,
		"in_port=1,mpls,mpls_label=100,mpls_bos=1,actions=pop_mpls:0x0800,mod_dl_src:50:54:00:00:00:09,goto_table:1",
		"table=1,ip,nw_dst=10.0.0.2,actions=dec_ttl,output:2")
	k := key(t, mplsPkt("100", "64"))
	out := e.translate(k)
	if got, want := out.Actions.String(), "set(eth(src=50:54:00:00:00:09)),pop_mpls(eth_type=0x800),recirc(0x1)"; got != want {
		t.Fatalf("first pass actions\n got %s\nwant %s", got, want)
	}
	wantMegaflow(t, k, out.Mask, "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth(src=50:54:00:00:00:05),eth_type(0x8847),mpls(label=100/0xfffff,tc=1/0,ttl=64/0x0,bos=1/1)")
	k2 := key(t, "recirc_id(0x1),in_port(1),eth(src=50:54:00:00:00:09,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)")
	out = e.translate(k2)
	if got, want := out.Actions.String(), "set(ipv4(ttl=63)),2"; got != want {
		t.Fatalf("second pass actions\n got %s\nwant %s", got, want)
	}
	wantMegaflow(t, k2, out.Mask, "recirc_id(0x1),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(dst=10.0.0.2,proto=1,ttl=64,frag=no)")
}

// TestDecMPLSTTLAtOneGoesToTheControllerAndStopsTheList: the rest of the
// action list (output:2) does not run, and the packet goes to the
// controller with reason invalid_ttl.
func TestDecMPLSTTLAtOneGoesToTheControllerAndStopsTheList(t *testing.T) {
	e := newEnv(t, mf.OF13, mplsFlows...)
	k := key(t, mplsPkt("400", "1"))
	out := e.translate(k)
	acts := out.Actions.String()
	if !strings.HasPrefix(acts, "userspace(pid=0,controller(reason=2,") || strings.Contains(acts, "),2") {
		t.Fatalf("actions %s, want only the invalid_ttl controller upcall", acts)
	}
	wantMegaflow(t, k, out.Mask, "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x8847),mpls(label=400/0xfffff,tc=0/0,ttl=1/0xff,bos=1/1)")
}

// TestFourthMPLSPushFailsTheTranslation: the pipeline keeps three label
// stack entries, as Open vSwitch.
func TestFourthMPLSPushFailsTheTranslation(t *testing.T) {
	e := newEnv(t, mf.OF13, "in_port=1,ip,actions=push_mpls:0x8847,push_mpls:0x8847,push_mpls:0x8847,push_mpls:0x8847,output:2")
	out := e.translate(key(t, pktTOS))
	if !errors.Is(out.Err, xlate.ErrTooManyMPLS) || len(out.Actions) != 0 {
		t.Fatalf("err %v actions %s, want ErrTooManyMPLS and no actions", out.Err, out.Actions)
	}
	e = newEnv(t, mf.OF13, "in_port=1,ip,actions=push_mpls:0x8847,push_mpls:0x8847,push_mpls:0x8847,set_mpls_ttl:9,pop_mpls:0x8847,pop_mpls:0x8847,output:2")
	out = e.translate(key(t, pktTOS))
	if got, want := out.Actions.String(), "push_mpls(label=0,tc=2,ttl=17,bos=1,eth_type=0x8847),2"; got != want {
		t.Fatalf("three pushes and two pops\n got %s\nwant %s", got, want)
	}
}
