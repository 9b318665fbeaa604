package conntrack

import (
	"encoding/binary"
	"testing"

	"github.com/gvs-project/gvs/datapath/packet"
)

// twoPasses runs pkts through ct(first) and then ct(second) with the
// same Reader, keeping the metadata between the passes (a recirculation),
// optionally quiescing in between; between runs touch each packet.
func twoPasses(t *testing.T, tr *Tracker, r *Reader, pkts []*packet.Packet, first, second string, quiesce bool, between func(*packet.Packet)) {
	t.Helper()
	a1, a2 := ctParams(t, first), ctParams(t, second)
	var b packet.Batch
	for _, p := range pkts {
		p.Md = packet.Metadata{}
		b.Add(p)
	}
	r.ExecuteAt(&b, a1, tr.Now())
	if quiesce {
		r.Quiesce()
	}
	for _, p := range pkts {
		if between != nil {
			between(p)
		}
	}
	r.ExecuteAt(&b, a2, tr.Now())
}

// rewriteSrcPort changes a UDP packet's source port (as a set_field
// between two ct() would), keeping its checksum right.
func rewriteSrcPort(p *packet.Packet) {
	d := p.Data()
	l4 := d[34:]
	old := binary.BigEndian.Uint32(l4)
	nw := old ^ 0x80000000
	binary.BigEndian.PutUint32(l4, nw)
	binary.BigEndian.PutUint16(l4[6:], packet.UpdateChecksum32(binary.BigEndian.Uint16(l4[6:]), old, nw))
}

func TestCommitAfterLookupInTheSameZoneTakesTheLookupsConnectionAsOVS(t *testing.T) {
	for _, n := range []int{1, packet.BatchSize} {
		tr, _ := newTracker(t)
		r := tr.NewReader()
		pkts := udpPackets(t, n)
		execVia(t, tr, r, pkts, "ct(commit,zone=1)", tr.Now())
		r.Quiesce()
		// The tuple changes between the lookup and the commit: as
		// Open vSwitch's process_one_fast, the commit uses the
		// connection the lookup left in the packet, so no new
		// connection appears, the state stays and the mark lands on
		// the old connection.
		twoPasses(t, tr, r, pkts, "ct(zone=1)", "ct(commit,zone=1,mark=7)", false, rewriteSrcPort)
		if got := tr.ZoneCount(1); got != n {
			t.Fatalf("n=%d: %d connections after the commit, want %d", n, got, n)
		}
		for i, p := range pkts {
			// The lookup's state (a one-way UDP flow's second packet
			// is still new), not a commit's update.
			wantState(t, p, "+trk+new")
			if p.Md.CtMark != 7 || p.Md.CtZone != 1 {
				t.Fatalf("n=%d packet %d: ct_mark %d ct_zone %d, want 7 and 1", n, i, p.Md.CtMark, p.Md.CtZone)
			}
		}
		for _, c := range zoneConns(tr, 1) {
			if m, _ := c.markLabel(); m != 7 {
				t.Fatalf("n=%d: a connection's mark is %d, want 7", n, m)
			}
		}
	}
}

func TestQuiescingBetweenLookupAndCommitLooksThePacketUpAgain(t *testing.T) {
	tr, _ := newTracker(t)
	r := tr.NewReader()
	pkts := udpPackets(t, packet.BatchSize)
	execVia(t, tr, r, pkts, "ct(commit,zone=1)", tr.Now())
	r.Quiesce()
	twoPasses(t, tr, r, pkts, "ct(zone=1)", "ct(commit,zone=1)", true, rewriteSrcPort)
	if got, want := tr.ZoneCount(1), 2*packet.BatchSize; got != want {
		t.Fatalf("%d connections, want %d: the commit after a quiescent point must look the rewritten tuples up", got, want)
	}
	for _, p := range pkts {
		wantState(t, p, "+trk+new")
	}
}

func TestCommitInAnotherZoneOrWithNATLooksThePacketUp(t *testing.T) {
	for _, second := range []string{"ct(commit,zone=2)", "ct(commit,zone=1,nat)", "ct(commit,zone=1,force_commit)"} {
		tr, _ := newTracker(t)
		r := tr.NewReader()
		pkts := udpPackets(t, packet.BatchSize)
		execVia(t, tr, r, pkts, "ct(commit,zone=1)", tr.Now())
		r.Quiesce()
		twoPasses(t, tr, r, pkts, "ct(zone=1)", second, false, rewriteSrcPort)
		if got := tr.Count(); got != 2*packet.BatchSize {
			t.Fatalf("%s: %d connections, want %d (the rewritten tuples committed anew)", second, got, 2*packet.BatchSize)
		}
	}
}

func TestMemoHandlesNameOnlyThisGracePeriodsRecentConnections(t *testing.T) {
	var m connMemo
	cs := make([]*Conn, memoSize+1)
	hs := make([]uintptr, len(cs))
	for i := range cs {
		cs[i] = &Conn{}
		cs[i].nodes[0].key = Key{Zone: 1, SrcPort: uint16(i)}
		cs[i].nodes[1].key = Key{Zone: 1, DstPort: uint16(i)}
		hs[i] = m.remember(cs[i])
		if hs[i] == 0 {
			t.Fatalf("handle %d is 0", i)
		}
	}
	if c := m.get(hs[0]); c != nil {
		t.Fatal("the oldest entry survived memoSize newer ones")
	}
	if c := m.get(hs[1]); c != cs[1] {
		t.Fatal("entry 1 lost")
	}
	if h := m.match(hs[5], &cs[5].nodes[1].key); h.c != cs[5] || !h.reply {
		t.Fatalf("reply key: %+v", h)
	}
	if h := m.match(hs[5], &cs[5].nodes[0].key); h.c != cs[5] || h.reply {
		t.Fatalf("original key: %+v", h)
	}
	if h := m.match(hs[5], &cs[6].nodes[0].key); h.c != nil {
		t.Fatal("matched another connection's key")
	}
	if m.remember(nil) != 0 || (*connMemo)(nil).remember(cs[1]) != 0 {
		t.Fatal("a handle without a memo or a connection")
	}
	m.forget()
	for i, h := range hs {
		if m.get(h) != nil {
			t.Fatalf("handle %d honoured after forget", i)
		}
	}
	// A new grace period's entries are not reachable through old
	// handles even where the counters meet again.
	h := m.remember(cs[2])
	if m.get(hs[0]) != nil || m.get(h) != cs[2] {
		t.Fatal("old handle reached a new entry, or the new one is lost")
	}
}

func TestRecommitWithTheSameMarkAndLabelKeepsThemAndAChangeLandsUnderItsMask(t *testing.T) {
	tr, _ := newTracker(t)
	frame := udp4(t, cA, cB, 7, 8)
	run(t, tr, "ct(commit,zone=1,mark=0x15/0xff,label=0x1/0x3)", frame)
	p := run(t, tr, "ct(commit,zone=1,mark=0x15/0xff,label=0x1/0x3)", frame)
	if p.Md.CtMark != 0x15 || p.Md.CtLabel[15] != 1 {
		t.Fatalf("recommit: mark %#x label %x", p.Md.CtMark, p.Md.CtLabel)
	}
	p = run(t, tr, "ct(commit,zone=1,mark=0x200/0xf00,label=0x2/0x2)", frame)
	if p.Md.CtMark != 0x215 || p.Md.CtLabel[15] != 3 {
		t.Fatalf("masked change: mark %#x label %x, want 0x215 and 3", p.Md.CtMark, p.Md.CtLabel)
	}
}
