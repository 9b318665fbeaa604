package l2fib

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/odp/odptest"
	"github.com/gvs-project/gvs/datapath/packet"
)

// frame builds an untagged (vlan < 0) or 802.1Q-tagged IPv4-ish frame.
func frame(dst, src MAC, vlan int) []byte {
	f := append(append([]byte{}, dst[:]...), src[:]...)
	if vlan >= 0 {
		f = binary.BigEndian.AppendUint16(f, 0x8100)
		f = binary.BigEndian.AppendUint16(f, uint16(vlan))
	}
	f = binary.BigEndian.AppendUint16(f, 0x0800)
	return append(f, make([]byte, 46)...)
}

type fwdHarness struct {
	t   *testing.T
	tb  *Table
	reg *Registry
	fw  *Forwarder
	rec *odptest.Recorder
	ctx *odp.Context
}

func newHarness(t *testing.T) *fwdHarness {
	h := &fwdHarness{t: t, tb: newTable(t, Config{Capacity: 1024}), reg: &Registry{}, rec: &odptest.Recorder{}}
	h.reg.Set(7, h.tb)
	h.fw = NewForwarder(h.reg)
	h.ctx = odp.NewContext(packet.NewPool(256), h.rec, 1)
	return h
}

type pkt struct {
	in       uint32
	dst, src MAC
	vlan     int
}

// run forwards the packets as one batch through the action text and
// returns the outputs as "port:frameIndex[t]" strings (t when tagged).
func (h *fwdHarness) run(action string, pkts ...pkt) []string {
	h.t.Helper()
	acts, err := odp.ParseActions(action)
	if err != nil {
		h.t.Fatal(err)
	}
	var b packet.Batch
	for _, p := range pkts {
		q := h.ctx.Pool.Get()
		q.SetData(frame(p.dst, p.src, p.vlan))
		q.Md.InPort = p.in
		b.Add(q)
	}
	h.rec.Calls = nil
	h.fw.Forward(h.ctx, &acts[0], &b)
	if b.N != 0 {
		h.t.Fatalf("Forward left %d packets in the batch", b.N)
	}
	var out []string
	for _, c := range h.rec.Calls {
		if c.Op != "output" && c.Op != "recirc" {
			h.t.Fatalf("unexpected callback %q", c.Op)
		}
		prefix := ""
		if c.Op == "recirc" {
			prefix = "recirc"
		}
		for _, f := range c.Frames {
			idx := -1
			for i, p := range pkts {
				if MAC(f[6:12]) == p.src && MAC(f[0:6]) == p.dst {
					idx = i
				}
			}
			tag := ""
			if binary.BigEndian.Uint16(f[12:]) == 0x8100 {
				tag = fmt.Sprintf("t%d", binary.BigEndian.Uint16(f[14:])&0xfff)
			}
			out = append(out, fmt.Sprintf("%s%d:%d%s", prefix, c.Arg, idx, tag))
		}
	}
	if free := h.ctx.Pool.Free(); free != 256 {
		h.t.Fatalf("pool has %d free packets, want 256 (leak or double free)", free)
	}
	return out
}

var (
	bcast = MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	mA    = MAC{0x50, 0x54, 0, 0, 0, 0xa}
	mB    = MAC{0x50, 0x54, 0, 0, 0, 0xb}
	mC    = MAC{0x50, 0x54, 0, 0, 0, 0xc}
)

func expect(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("outputs %q, want %q", got, want)
	}
}

const act = "mac_learn(table=7,ports(1,2,3))"

func TestUnknownDestinationFloodsWithinVLANExceptInputPortAndLearnsSource(t *testing.T) {
	h := newHarness(t)
	expect(t, h.run(act, pkt{in: 2, dst: mB, src: mA, vlan: -1}), "1:0", "3:0")
	if p, ok := h.tb.Lookup(0, mA); !ok || p != 2 {
		t.Errorf("source learned on %d (%v), want 2", p, ok)
	}
	if s := h.tb.Stats(); s.Flooded != 1 || s.Learned != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestKnownDestinationGoesToOnePort(t *testing.T) {
	h := newHarness(t)
	h.run(act, pkt{in: 3, dst: bcast, src: mB, vlan: -1})
	expect(t, h.run(act, pkt{in: 1, dst: mB, src: mA, vlan: -1}), "3:0")
	// Both directions in one batch: the second packet's destination was
	// learned by the first.
	expect(t, h.run(act, pkt{in: 2, dst: mB, src: mC, vlan: -1}, pkt{in: 3, dst: mC, src: mB, vlan: -1}), "3:0", "2:1")
	if s := h.tb.Stats(); s.Unicast != 3 || s.Flooded != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestBroadcastAndMulticastFloodAndMulticastSourceIsNotLearned(t *testing.T) {
	h := newHarness(t)
	h.run(act, pkt{in: 3, dst: bcast, src: mB, vlan: -1})
	expect(t, h.run(act, pkt{in: 1, dst: bcast, src: mA, vlan: -1}), "2:0", "3:0")
	mcast := MAC{0x01, 0, 0x5e, 0, 0, 1}
	expect(t, h.run(act, pkt{in: 1, dst: mcast, src: mA, vlan: -1}), "2:0", "3:0")
	expect(t, h.run(act, pkt{in: 1, dst: mB, src: mcast, vlan: -1}), "3:0")
	if _, ok := h.tb.Lookup(0, mcast); ok {
		t.Errorf("multicast source learned")
	}
}

func TestDestinationOnInputPortIsDropped(t *testing.T) {
	h := newHarness(t)
	h.run(act, pkt{in: 2, dst: bcast, src: mB, vlan: -1})
	expect(t, h.run(act, pkt{in: 2, dst: mB, src: mA, vlan: -1}))
	if s := h.tb.Stats(); s.Hairpin != 1 || h.ctx.Dropped != 1 {
		t.Errorf("hairpin %d dropped %d, want 1 and 1", s.Hairpin, h.ctx.Dropped)
	}
}

func TestLearnedPortOutsideVLANFloods(t *testing.T) {
	h := newHarness(t)
	h.run("mac_learn(table=7,ports(1,2,9))", pkt{in: 9, dst: bcast, src: mB, vlan: -1})
	expect(t, h.run(act, pkt{in: 1, dst: mB, src: mA, vlan: -1}), "2:0", "3:0")
}

func TestPacketsToOnePortLeaveAsOneBatchInOrder(t *testing.T) {
	h := newHarness(t)
	h.run(act, pkt{in: 3, dst: bcast, src: mB, vlan: -1}, pkt{in: 2, dst: bcast, src: mC, vlan: -1})
	out := h.run(act,
		pkt{in: 1, dst: mB, src: mac(1), vlan: -1}, pkt{in: 1, dst: mC, src: mac(2), vlan: -1},
		pkt{in: 1, dst: mB, src: mac(3), vlan: -1}, pkt{in: 1, dst: mA, src: mac(4), vlan: -1})
	expect(t, out, "3:0", "3:2", "2:1", "2:3", "3:3")
	if n := len(h.rec.Calls); n != 4 {
		t.Errorf("%d output calls, want 4 (port 3, port 2, then the flood to 2 and 3)", n)
	}
}

func TestTaggingFollowsPortModes(t *testing.T) {
	h := newHarness(t)
	// Access input (untagged) in VLAN 10: trunk port 3 gets a tag.
	expect(t, h.run("mac_learn(table=7,vlan=10,ports(1,2,3:tagged))", pkt{in: 1, dst: bcast, src: mA, vlan: -1}),
		"2:0", "3:0t10")
	// Trunk input (tagged): access ports get it untagged, trunks as is.
	expect(t, h.run("mac_learn(table=7,vlan=10,in_tagged,ports(1,2,3:tagged,4:tagged))", pkt{in: 3, dst: bcast, src: mB, vlan: 10}),
		"1:0", "2:0", "4:0t10")
	expect(t, h.run("mac_learn(table=7,vlan=10,in_tagged,ports(1,2,3:tagged))", pkt{in: 3, dst: mA, src: mB, vlan: 10}), "1:0")
	if p, _ := h.tb.Lookup(10, mB); p != 3 {
		t.Errorf("tagged source learned on %d, want 3", p)
	}
}

func TestNoMemberPortAndUnknownTableDrop(t *testing.T) {
	h := newHarness(t)
	expect(t, h.run("mac_learn(table=7,ports(1))", pkt{in: 1, dst: bcast, src: mA, vlan: -1}))
	expect(t, h.run("mac_learn(table=8,ports(1,2))", pkt{in: 1, dst: bcast, src: mA, vlan: -1}))
	if h.fw.NoTable != 1 || h.ctx.Dropped != 2 {
		t.Errorf("NoTable %d Dropped %d", h.fw.NoTable, h.ctx.Dropped)
	}
	if p, ok := h.tb.Lookup(0, mA); !ok || p != 1 {
		t.Errorf("source not learned when there was nowhere to flood: %d %v", p, ok)
	}
}

func TestRuntFramesAreDroppedAndCounted(t *testing.T) {
	h := newHarness(t)
	acts, _ := odp.ParseActions(act)
	var b packet.Batch
	q := h.ctx.Pool.Get()
	q.SetData([]byte{1, 2, 3})
	b.Add(q)
	h.fw.Forward(h.ctx, &acts[0], &b)
	if h.tb.Stats().Runts != 1 || h.ctx.Pool.Free() != 256 || len(h.rec.Calls) != 0 {
		t.Errorf("runt: stats %+v, free %d, calls %d", h.tb.Stats(), h.ctx.Pool.Free(), len(h.rec.Calls))
	}
}

func TestForwardAllocatesNothing(t *testing.T) {
	tb := newTable(t, Config{Capacity: 1024})
	reg := &Registry{}
	reg.Set(1, tb)
	fw := NewForwarder(reg)
	ctx := odp.NewContext(packet.NewPool(128), &odptest.Recorder{Discard: true}, 1)
	acts, _ := odp.ParseActions("mac_learn(table=1,vlan=5,ports(1,2:tagged,3))")
	frames := [][]byte{frame(mB, mA, -1), frame(mA, mB, -1), frame(bcast, mC, -1), frame(mC, mA, -1)}
	ins := []uint32{1, 2, 3, 2}
	var b packet.Batch
	fill := func() {
		for i := 0; i < packet.BatchSize; i++ {
			p := ctx.Pool.Get()
			p.SetData(frames[i%4])
			p.Md.InPort = ins[i%4]
			b.Add(p)
		}
	}
	fill()
	fw.Forward(ctx, &acts[0], &b)
	if n := testing.AllocsPerRun(200, func() { fill(); fw.Forward(ctx, &acts[0], &b) }); n != 0 {
		t.Errorf("Forward allocates %v per batch, want 0", n)
	}
}

// A patch port has no datapath port: the translator gives it a number in
// the MAC table and a recirculation id into the peer bridge, and a
// packet that came through a patch port names it as its learn_port.
func TestPatchPortsAreLearnedAndReachedByRecirculation(t *testing.T) {
	h := newHarness(t)
	const patch = "mac_learn(table=7,ports(1,2,1000:recirc=0x9))"
	const fromPatch = "mac_learn(table=7,learn_port=1000,ports(1,2,1000:recirc=0x9))"
	// Unknown destination: flooded to the datapath ports and into the
	// peer bridge.
	expect(t, h.run(patch, pkt{in: 1, dst: mB, src: mA, vlan: -1}), "2:0", "recirc9:0")
	if md := h.rec.Calls[1].Md; len(md) != 1 || md[0].RecircID != 9 {
		t.Errorf("recirculated packets' metadata %+v, want recirc_id 9", md)
	}
	// mB answers from the peer bridge: learned on the patch port, never
	// sent back through it, and mA is known.
	expect(t, h.run(fromPatch, pkt{in: 5, dst: mA, src: mB, vlan: -1}), "1:0")
	if p, ok := h.tb.Lookup(0, mB); !ok || p != 1000 {
		t.Errorf("mB learned on %d (%v), want the patch port 1000", p, ok)
	}
	// Now mB is reached through the patch port only.
	expect(t, h.run(patch, pkt{in: 2, dst: mB, src: mC, vlan: -1}), "recirc9:0")
	// A flood from the patch side does not go back into the patch port.
	expect(t, h.run(fromPatch, pkt{in: 5, dst: bcast, src: mB, vlan: -1}), "1:0", "2:0")
	// A destination behind the patch port, seen from the patch side, is a
	// hairpin and dropped.
	expect(t, h.run(fromPatch, pkt{in: 5, dst: mB, src: mC, vlan: -1}))
}

// A bond (MAC table number 100, members on datapath ports 5 and 6) is one
// port to learning and flooding; packets leave by the member translation
// chose (:out=).
func TestBondIsOnePortThatLeavesByItsChosenMember(t *testing.T) {
	h := newHarness(t)
	const fromBond = "mac_learn(table=7,learn_port=100,ports(1,2,100:out=6))"
	const toBond = "mac_learn(table=7,ports(1,2,100:out=5))"
	// In on member 6: learned on the bond, flooded to 1 and 2 only.
	expect(t, h.run(fromBond, pkt{in: 6, dst: bcast, src: mA, vlan: -1}), "1:0", "2:0")
	if p, ok := h.tb.Lookup(0, mA); !ok || p != 100 {
		t.Fatalf("source learned on %d (%v), want the bond (100)", p, ok)
	}
	// To mA: out by the member chosen for this packet.
	expect(t, h.run(toBond, pkt{in: 1, dst: mA, src: mB, vlan: -1}), "5:0")
	// Flood from port 1 reaches the bond once, by its member.
	expect(t, h.run(toBond, pkt{in: 1, dst: bcast, src: mB, vlan: -1}), "2:0", "5:0")
	// From the bond to a destination behind it: hairpin, dropped.
	expect(t, h.run(fromBond, pkt{in: 5, dst: mA, src: mC, vlan: -1}))
}

// drop_if_moved (balance-slb): a packet whose source is learned on
// another port is dropped and does not move the entry; an unknown or
// same-port source is learned and forwarded.
func TestDropIfMovedDropsReflectedFloodsOnly(t *testing.T) {
	h := newHarness(t)
	const slb = "mac_learn(table=7,learn_port=100,drop_if_moved,ports(1,2,100:out=5))"
	h.run(act, pkt{in: 1, dst: bcast, src: mA, vlan: -1})            // mA behind port 1
	expect(t, h.run(slb, pkt{in: 6, dst: bcast, src: mA, vlan: -1})) // our flood, back
	if p, _ := h.tb.Lookup(0, mA); p != 1 {
		t.Fatalf("mA moved to %d", p)
	}
	expect(t, h.run(slb, pkt{in: 6, dst: bcast, src: mB, vlan: -1}), "1:0", "2:0")
	expect(t, h.run(slb, pkt{in: 5, dst: mA, src: mB, vlan: -1}), "1:0")
	if s := h.tb.Stats(); s.Reflected != 1 {
		t.Fatalf("reflected %d, want 1", s.Reflected)
	}
}
