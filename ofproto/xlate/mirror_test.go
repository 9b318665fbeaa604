package xlate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// The expected actions are what Open vSwitch 3.1's ofproto/trace prints
// for the same bridge, mirrors and packets (tests/mirror_diff_test.go
// compares them end to end; its "mirroring, ..." cases in
// tests/ofproto-dpif.at are the source of most of these).

const pktICMP = "in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800)," +
	"ipv4(src=192.168.0.1,dst=192.168.0.2,proto=1,tos=0,ttl=128,frag=no),icmp(type=8,code=0)"

func fromPort(pkt string, port int) string {
	return fmt.Sprintf("in_port(%d)", port) + pkt[strings.Index(pkt, ")")+1:]
}

func setMirrors(t *testing.T, e *env, ms ...xlate.Mirror) {
	t.Helper()
	for i := range ms {
		if ms[i].ID == "" {
			ms[i].ID = ms[i].Name
		}
	}
	if _, dropped := e.x.SetMirrors(ms); len(dropped) != 0 {
		t.Fatalf("mirrors dropped: %v", dropped)
	}
}

func wantActions(t *testing.T, e *env, pkt, want string) {
	t.Helper()
	if got := e.translate(key(t, pkt)).Actions.String(); got != want {
		t.Errorf("%s:\n got %s\nwant %s", pkt, got, want)
	}
}

func TestMirrorSelectsPortsAsOpenVSwitch(t *testing.T) {
	flows := []string{"in_port=1 actions=output:2", "in_port=2 actions=output:1", "in_port=3 actions=output:1"}
	cases := []struct {
		name     string
		m        xlate.Mirror
		from1    string
		from2    string
		fromLast string // from the output port p3
	}{
		{"select_src", xlate.Mirror{Name: "m", SrcPorts: []string{"p1"}, OutPort: "p3"}, "3,2", "1", "drop"},
		{"select_dst", xlate.Mirror{Name: "m", DstPorts: []string{"p2"}, OutPort: "p3"}, "2,3", "1", "drop"},
		{"select_all", xlate.Mirror{Name: "m", SelectAll: true, OutPort: "p3"}, "3,2", "3,1", "drop"},
		{"select_vlan other", xlate.Mirror{Name: "m", SelectAll: true, VLANs: []uint16{11}, OutPort: "p3"}, "2", "1", "drop"},
		{"nonexistent port selected", xlate.Mirror{Name: "m", SrcPorts: []string{"p9"}, OutPort: "p3"}, "2", "1", "drop"},
		// A mirror to a port the bridge does not have is no mirror:
		// p3 forwards again.
		{"output port missing", xlate.Mirror{Name: "m", SelectAll: true, OutPort: "p9"}, "2", "1", "1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, mf.OF10, flows...)
			setMirrors(t, e, tc.m)
			wantActions(t, e, pktICMP, tc.from1)
			wantActions(t, e, fromPort(pktICMP, 2), tc.from2)
			wantActions(t, e, fromPort(pktICMP, 3), tc.fromLast)
		})
	}
}

func TestMirrorSelectVLANMatchesTheVLANOnly(t *testing.T) {
	e := newEnv(t, mf.OF10, "in_port=1 actions=output:2")
	setMirrors(t, e, xlate.Mirror{Name: "m", SelectAll: true, VLANs: []uint16{11}, OutPort: "p3"})
	for _, tc := range []struct {
		vid      int
		want, mf string
	}{
		{10, "2", "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x8100),vlan(vid=10),encap(eth_type(0x0800),ipv4(frag=no))"},
		{11, "3,2", "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x8100),vlan(vid=11),encap(eth_type(0x0800),ipv4(frag=no))"},
	} {
		k := key(t, strings.Replace(pktVLAN, "vid=10,pcp=3", fmt.Sprintf("vid=%d,pcp=0", tc.vid), 1))
		out := e.translate(k)
		if got := out.Actions.String(); got != tc.want {
			t.Errorf("vlan %d: got %s, want %s", tc.vid, got, tc.want)
		}
		if got := megaflow(k, out.Mask); got != tc.mf {
			t.Errorf("vlan %d megaflow:\n got %s\nwant %s", tc.vid, got, tc.mf)
		}
	}
}

func TestMirrorCopyLeavesBeforeTheFlowRewritesIt(t *testing.T) {
	e := newEnv(t, mf.OF10, "in_port=1 actions=mod_vlan_vid:17,output:2", "in_port=2 actions=output:1")
	setMirrors(t, e, xlate.Mirror{Name: "m", SelectAll: true, OutPort: "p3"})
	wantActions(t, e, pktICMP, "3,push_vlan(vid=17,pcp=0),2")
	wantActions(t, e, fromPort(pktICMP, 2), "3,1")
}

// An output VLAN mirror floods the packet, tagged, to every port that
// carries the VLAN (the input port included), in port order.
func TestMirrorFloodsOutputVLAN(t *testing.T) {
	e := newEnv(t, mf.OF10, "in_port=1 actions=output:2", "in_port=2 actions=mod_vlan_vid:17,output:1")
	setMirrors(t, e, xlate.Mirror{Name: "m", SelectAll: true, OutVLAN: 12})
	wantActions(t, e, pktICMP, "push_vlan(vid=12,pcp=0),1,2,3,100,pop_vlan,2")
	wantActions(t, e, fromPort(pktICMP, 2), "push_vlan(vid=12,pcp=0),1,2,3,100,pop_vlan,push_vlan(vid=17,pcp=0),1")
	// A packet already in the output VLAN is not mirrored to it.
	wantActions(t, e, strings.Replace(pktVLAN, "vid=10,pcp=3", "vid=12,pcp=0", 1), "2")
	// Nor is a frame to a reserved multicast address (STP, LLDP...).
	wantActions(t, e, strings.Replace(pktICMP, "dst=50:54:00:00:00:07", "dst=01:80:c2:00:00:0e", 1), "2")
}

// Mirrors with the same output get one copy; a second mirror's
// destination port does not mirror again to the same output; an output
// VLAN is never flooded to a mirror's output port.
func TestMirrorSendsOneCopyPerOutput(t *testing.T) {
	e := newEnv(t, mf.OF10, "in_port=1 actions=output:2")
	setMirrors(t, e, xlate.Mirror{Name: "a", SrcPorts: []string{"p1"}, OutPort: "p3"},
		xlate.Mirror{Name: "b", DstPorts: []string{"p2"}, OutPort: "p3"},
		xlate.Mirror{Name: "c", DstPorts: []string{"p2"}, OutVLAN: 5})
	wantActions(t, e, pktICMP, "3,2,push_vlan(vid=5,pcp=0),1,2,100")
}

// NORMAL (gvs's mac_learn action) gets the mirrored copy first and
// never forwards to the mirror's output port.
func TestMirrorNormalSkipsMirrorOutputPort(t *testing.T) {
	e := newEnv(t, mf.OF10, "actions=NORMAL")
	wantActions(t, e, pktICMP, "mac_learn(table=7,ports(1,2,3,100))")
	setMirrors(t, e, xlate.Mirror{Name: "m", SrcPorts: []string{"p1"}, OutPort: "p3"})
	wantActions(t, e, pktICMP, "3,mac_learn(table=7,ports(1,2,100))")
	wantActions(t, e, fromPort(pktICMP, 2), "mac_learn(table=7,ports(1,2,100))")
	wantActions(t, e, fromPort(pktICMP, 3), "drop")
}

func TestSetMirrorsKeepsSlotsAndReportsChanges(t *testing.T) {
	e := newEnv(t, mf.OF10)
	a := xlate.Mirror{ID: "a", Name: "a", SelectAll: true, OutPort: "p3"}
	b := xlate.Mirror{ID: "b", Name: "b", SelectAll: true, OutPort: "p2"}
	if changed, _ := e.x.SetMirrors([]xlate.Mirror{a, b}); !changed {
		t.Fatal("first mirrors: not reported as a change")
	}
	if changed, _ := e.x.SetMirrors([]xlate.Mirror{b, a}); changed {
		t.Fatal("same mirrors in another order: reported as a change")
	}
	c := xlate.Mirror{ID: "c", Name: "c", SelectAll: true, OutVLAN: 7}
	e.x.SetMirrors([]xlate.Mirror{c, b})
	slots := e.x.Mirrors()
	if slots[0] == nil || slots[0].ID != "c" || slots[1] == nil || slots[1].ID != "b" {
		t.Fatalf("slots after replacing a: %v %v", slots[0], slots[1])
	}
	var many []xlate.Mirror
	for i := range xlate.MaxMirrors + 2 {
		many = append(many, xlate.Mirror{ID: fmt.Sprint(i), Name: fmt.Sprint("m", i), OutVLAN: 1})
	}
	if _, dropped := e.x.SetMirrors(many); len(dropped) != 2 {
		t.Fatalf("%d mirrors: dropped %v, want the last two", len(many), dropped)
	}
	if changed, _ := e.x.SetMirrors(nil); !changed {
		t.Fatal("removing every mirror: not reported as a change")
	}
	if changed, _ := e.x.SetMirrors(nil); changed {
		t.Fatal("no mirrors twice: reported as a change")
	}
}

// A packet-out is mirrored by its in_port's source mirrors (none for
// the controller's) and dropped when its in_port is a mirror's output.
func TestMirrorPacketOut(t *testing.T) {
	e := newEnv(t, mf.OF10)
	setMirrors(t, e, xlate.Mirror{Name: "m", SelectAll: true, OutPort: "p3"})
	acts := flowMod(t, mf.OF10, "actions=output:2").Actions
	normal := flowMod(t, mf.OF10, "actions=NORMAL").Actions
	for _, tc := range []struct {
		in   uint16
		acts string
		want string
	}{
		{1, "output:2", "3,2"},
		{xlate.PortController, "output:2", "2,3"},
		{3, "output:2", "drop"},
		{3, "NORMAL", "drop"},
	} {
		a := acts
		if tc.acts == "NORMAL" {
			a = normal
		}
		var out xlate.Out
		e.x.Translate(&xlate.In{Key: key(t, pktICMP), OFActions: a, InPort: tc.in}, &out)
		if got := out.Actions.String(); got != tc.want {
			t.Errorf("packet-out from %d, %s: got %s, want %s", tc.in, tc.acts, got, tc.want)
		}
	}
}

// Statistics count the packets of the megaflows that sent to a mirror,
// and stay with a mirror that keeps its ID.
func TestMirrorStatisticsFollowTheMirror(t *testing.T) {
	e := newEnv(t, mf.OF10, "in_port=1 actions=output:2")
	setMirrors(t, e, xlate.Mirror{ID: "a", Name: "a", SrcPorts: []string{"p1"}, OutPort: "p3"},
		xlate.Mirror{ID: "b", Name: "b", SrcPorts: []string{"p2"}, OutPort: "p3"})
	out := e.translate(key(t, pktICMP))
	if len(out.Mirrors) != 1 || out.Mirrors[0].X != e.x {
		t.Fatalf("mirror uses = %+v", out.Mirrors)
	}
	out.Mirrors[0].X.CreditMirrors(out.Mirrors[0].Mask, 2, 212)
	e.x.SetMirrors([]xlate.Mirror{{ID: "a", Name: "a", SelectAll: true, OutPort: "p3"}})
	if p, b, ok := e.x.MirrorStats("a"); !ok || p != 2 || b != 212 {
		t.Errorf("a: %d packets %d bytes (%v), want 2, 212", p, b, ok)
	}
	if _, _, ok := e.x.MirrorStats("b"); ok {
		t.Error("b: statistics of a removed mirror")
	}
}

// BenchmarkTranslateMirrored is BenchmarkTranslate's pipeline with a
// select_all mirror (one more output and its bookkeeping).
func BenchmarkTranslateMirrored(b *testing.B) {
	e := newBenchEnv(b)
	e.x.SetMirrors([]xlate.Mirror{{ID: "m", Name: "m", SelectAll: true, OutPort: "p3"}})
	in := xlate.In{Key: key(b, pktTCP)}
	var out xlate.Out
	e.x.Translate(&in, &out)
	if out.Actions.String() != "3,set(eth(dst=aa:bb:cc:dd:ee:ff)),2" {
		b.Fatalf("pipeline translated to %s", out.Actions)
	}
	b.ReportAllocs()
	for b.Loop() {
		e.x.Translate(&in, &out)
	}
}
