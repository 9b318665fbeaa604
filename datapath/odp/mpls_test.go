package odp_test

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

// withLSEs returns frame with the label stack entries inserted at off and
// the Ethertype before off set to ethType.
func withLSEs(frame []byte, off int, ethType uint16, lses ...uint32) []byte {
	out := slices.Clone(frame[:off])
	binary.BigEndian.PutUint16(out[off-2:], ethType)
	for _, l := range lses {
		out = binary.BigEndian.AppendUint32(out, l)
	}
	return append(out, frame[off:]...)
}

func TestPushMPLSOnIPv4ByteExactAndExtractable(t *testing.T) {
	ip := tcpv4(t)
	h := newHarness(t)
	h.run("push_mpls(label=100,tc=5,ttl=64,bos=1,eth_type=0x8847),1", h.batch(ip))
	got := h.rec.Calls[0].Frames[0]
	lse := odp.MPLSLSE(100, 5, 64, true)
	if want := withLSEs(ip, 14, 0x8847, lse); !bytes.Equal(got, want) {
		t.Fatalf("push_mpls:\n got % x\nwant % x", got, want)
	}
	var k flow.Key
	p := packet.FromBytes(got)
	flow.Extract(p, &k)
	if k.EthType != 0x8847 || k.MPLSLSE != lse || p.L2_5 != 14 || p.L3 != 18 {
		t.Fatalf("extracted eth_type %#x lse %#x l2_5 %d l3 %d, want 0x8847 %#x 14 18", k.EthType, k.MPLSLSE, lse, p.L2_5, p.L3)
	}
}

func TestPushMPLSAfterVLANTagRewritesInnerEthertype(t *testing.T) {
	tagged := build(t, eth(layers.EthernetTypeDot1Q),
		&layers.Dot1Q{VLANIdentifier: 10, Priority: 5, Type: layers.EthernetTypeIPv4},
		ipv4(layers.IPProtocolTCP), &layers.TCP{SrcPort: 1234, DstPort: 80, Seq: 1, SYN: true, Window: 1000}, payload)
	h := newHarness(t)
	h.run("push_mpls(label=1,tc=0,ttl=9,bos=1,eth_type=0x8848),1", h.batch(tagged))
	got := h.rec.Calls[0].Frames[0]
	if want := withLSEs(tagged, 18, 0x8848, odp.MPLSLSE(1, 0, 9, true)); !bytes.Equal(got, want) {
		t.Fatalf("push_mpls on a tagged frame:\n got % x\nwant % x", got, want)
	}
}

func TestTwoPushesThenTwoPopsRestoreTheFrame(t *testing.T) {
	ip := tcpv4(t)
	h := newHarness(t)
	h.run("push_mpls(label=10,tc=1,ttl=64,bos=1,eth_type=0x8847),push_mpls(label=20,tc=2,ttl=63,bos=0,eth_type=0x8847),1,"+
		"pop_mpls(eth_type=0x8847),2,pop_mpls(eth_type=0x800),set(ipv4(ttl=7)),3", h.batch(ip))
	two := withLSEs(ip, 14, 0x8847, odp.MPLSLSE(20, 2, 63, false), odp.MPLSLSE(10, 1, 64, true))
	one := withLSEs(ip, 14, 0x8847, odp.MPLSLSE(10, 1, 64, true))
	if got := h.rec.Calls[0].Frames[0]; !bytes.Equal(got, two) {
		t.Fatalf("after two pushes:\n got % x\nwant % x", got, two)
	}
	if got := h.rec.Calls[1].Frames[0]; !bytes.Equal(got, one) {
		t.Fatalf("after one pop:\n got % x\nwant % x", got, one)
	}
	got := h.rec.Calls[2].Frames[0]
	if !bytes.Equal(got[:14], ip[:14]) || got[14+8] != 7 || len(got) != len(ip) {
		t.Fatalf("after the last pop and set(ipv4(ttl=7)) (L3 offset back at 14):\n got % x", got)
	}
	verify(t, got)
}

func TestPopMPLSLeavesNonMPLSPacketsAlone(t *testing.T) {
	ip := tcpv4(t)
	h := newHarness(t)
	h.run("pop_mpls(eth_type=0x800),set(mpls(label=5,tc=0,ttl=1,bos=1)),1", h.batch(ip))
	if got := h.rec.Calls[0].Frames[0]; !bytes.Equal(got, ip) {
		t.Fatalf("pop_mpls/set(mpls) changed a non-MPLS frame:\n got % x\nwant % x", got, ip)
	}
}

func TestSetMPLSWholeAndMasked(t *testing.T) {
	in := withLSEs(tcpv4(t), 14, 0x8847, odp.MPLSLSE(100, 2, 64, true))
	for _, tc := range []struct {
		acts string
		want uint32
	}{
		{"set(mpls(label=200,tc=3,ttl=9,bos=1)),1", odp.MPLSLSE(200, 3, 9, true)},
		{"set(mpls(label=0/0x0,tc=0/0,ttl=5/0xff,bos=0/0)),1", odp.MPLSLSE(100, 2, 5, true)},
		{"set(mpls(label=7/0xfffff,tc=0/0,ttl=0/0x0,bos=0/0)),1", odp.MPLSLSE(7, 2, 64, true)},
	} {
		h := newHarness(t)
		h.run(tc.acts, h.batch(in))
		got := h.rec.Calls[0].Frames[0]
		if lse := binary.BigEndian.Uint32(got[14:]); lse != tc.want || !bytes.Equal(got[18:], in[18:]) {
			t.Errorf("%s: lse %#x, want %#x", tc.acts, lse, tc.want)
		}
	}
}

func TestPopMPLSOfInnerEntryKeepsTheStackOffset(t *testing.T) {
	ip := tcpv4(t)
	in := withLSEs(ip, 14, 0x8847, odp.MPLSLSE(20, 0, 5, false), odp.MPLSLSE(10, 0, 6, true))
	h := newHarness(t)
	// The second set writes the entry that was inner before the pop.
	h.run("pop_mpls(eth_type=0x8847),set(mpls(label=30,tc=0,ttl=6,bos=1)),1", h.batch(in))
	want := withLSEs(ip, 14, 0x8847, odp.MPLSLSE(30, 0, 6, true))
	if got := h.rec.Calls[0].Frames[0]; !bytes.Equal(got, want) {
		t.Fatalf("pop of an inner entry then set:\n got % x\nwant % x", got, want)
	}
}

func TestPushMPLSWithoutExtractedOffsetsFindsTheEthertype(t *testing.T) {
	ip := tcpv4(t)
	h := newHarness(t)
	var b packet.Batch
	p := h.pool.Get()
	p.SetData(ip) // offsets unset
	b.Add(p)
	h.run("push_mpls(label=1,tc=0,ttl=64,bos=1,eth_type=0x8847),1", &b)
	if got, want := h.rec.Calls[0].Frames[0], withLSEs(ip, 14, 0x8847, odp.MPLSLSE(1, 0, 64, true)); !bytes.Equal(got, want) {
		t.Fatalf("got % x\nwant % x", got, want)
	}
}

func TestParsePushMPLSRejectsBadArguments(t *testing.T) {
	for _, s := range []string{
		"push_mpls(label=1,tc=0,ttl=64,bos=1,eth_type=0x800)",
		"push_mpls(label=1,tc=0,ttl=64,eth_type=0x8847)",
		"push_mpls(label=1048576,tc=0,ttl=64,bos=1,eth_type=0x8847)",
		"push_mpls(label=1,label=2,tc=0,ttl=64,bos=1,eth_type=0x8847)",
		"pop_mpls(0x800)",
		"pop_mpls(eth_type=0x10000)",
		"set(mpls(label=1048576))",
	} {
		if _, err := odp.ParseActions(s); err == nil {
			t.Errorf("ParseActions(%q) accepted it", s)
		}
	}
}

func TestMPLSActionsAllocateNothing(t *testing.T) {
	h := newHarness(t)
	h.rec.Discard = true
	a, err := odp.ParseActions("push_mpls(label=1,tc=0,ttl=64,bos=1,eth_type=0x8847),set(mpls(label=2,tc=0,ttl=63,bos=1)),1," +
		"set(mpls(label=0/0x0,tc=0/0,ttl=5/0xff,bos=0/0)),pop_mpls(eth_type=0x800),2")
	if err != nil {
		t.Fatal(err)
	}
	frame := tcpv4(t)
	var b packet.Batch
	allocs := testing.AllocsPerRun(100, func() {
		refill(h.pool, &b, frame)
		odp.Execute(h.ctx, &b, a)
	})
	if allocs != 0 {
		t.Errorf("%v allocs per run", allocs)
	}
}
