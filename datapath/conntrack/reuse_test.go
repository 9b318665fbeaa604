package conntrack

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

// execVia runs act over pkts, one batch at a time, through r (the
// Tracker's own path when r is nil), at time now.
func execVia(t testing.TB, tr *Tracker, r *Reader, pkts []*packet.Packet, act string, now int64) {
	t.Helper()
	a := ctParams(t, act)
	var b packet.Batch
	for i := 0; i < len(pkts); i += packet.BatchSize {
		b.N = 0
		for _, p := range pkts[i:min(i+packet.BatchSize, len(pkts))] {
			p.Md = packet.Metadata{}
			b.Add(p)
		}
		if r != nil {
			r.ExecuteAt(&b, a, now)
		} else {
			tr.ExecuteAt(&b, a, now)
		}
	}
}

// zoneConns returns zone z's connections in commit order.
func zoneConns(tr *Tracker, z uint16) []*Conn {
	zz := tr.zones[z].Load()
	if zz == nil {
		return nil
	}
	zz.mu.Lock()
	defer zz.mu.Unlock()
	return append([]*Conn(nil), zz.all...)
}

func connSet(cs []*Conn) map[*Conn]bool {
	m := make(map[*Conn]bool, len(cs))
	for _, c := range cs {
		m[c] = true
	}
	return m
}

// TestReuseWaitsForEveryReader flushes a zone while two readers are
// online: its connections are reused only once both have quiesced, in
// their commit order, and fully reset.
func TestReuseWaitsForEveryReader(t *testing.T) {
	tr, clk := newTracker(t)
	r1, r2 := tr.NewReader(), tr.NewReader()
	defer r1.Close()
	defer r2.Close()
	pkts := udpPackets(t, 40)
	execVia(t, tr, r1, pkts, "ct(commit,zone=1,mark=9,label=0x5)", clk.ns)
	flushed := zoneConns(tr, 1)
	if len(flushed) != 40 {
		t.Fatalf("zone 1 has %d connections, want 40", len(flushed))
	}
	old := connSet(flushed)
	if n := tr.FlushZone(1); n != 40 {
		t.Fatalf("flushed %d, want 40", n)
	}

	// Neither reader has passed a quiescent point: fresh memory.
	execVia(t, tr, r1, pkts[:1], "ct(commit,zone=2)", clk.ns)
	if c := zoneConns(tr, 2)[0]; old[c] {
		t.Fatal("connection reused before any reader quiesced")
	}
	r1.Quiesce()
	execVia(t, tr, r1, pkts[:1], "ct(commit,zone=3)", clk.ns)
	if c := zoneConns(tr, 3)[0]; old[c] {
		t.Fatal("connection reused while the second reader had not quiesced")
	}
	if rs := tr.ReuseStats(); rs.Reused != 0 || rs.Limbo != 1 {
		t.Fatalf("stats %+v, want nothing reused and one retirement in limbo", rs)
	}

	r2.Quiesce()
	execVia(t, tr, r1, pkts[5:10], "ct(commit,zone=4)", clk.ns)
	got := zoneConns(tr, 4)
	for i, c := range got {
		if c != flushed[i] {
			t.Fatalf("commit %d in zone 4 got %p, want the flushed zone's connection %d (%p)", i, c, i, flushed[i])
		}
	}
	// Reset: the reused connections carry zone 4's keys and nothing of
	// zone 1's mark and label.
	a := ctParams(t, "ct(zone=4)")
	for i, p := range pkts[5:10] {
		p.Md = packet.Metadata{}
		var b packet.Batch
		b.Add(p)
		r1.ExecuteAt(&b, a, clk.ns)
		if p.Md.CtState != CsTracked|CsNew || p.Md.CtMark != 0 || p.Md.CtLabel != ([16]byte{}) || p.Md.CtZone != 4 {
			t.Fatalf("packet %d: state %s mark %d label %x zone %d", i, stateString(p.Md.CtState), p.Md.CtMark, p.Md.CtLabel, p.Md.CtZone)
		}
		if k := got[i].Key(0); k.Zone != 4 || k.DstPort != uint16(5+i) {
			t.Fatalf("reused connection %d has key %+v", i, k)
		}
	}
	// Zone 1 is really empty, and its keys are not found in zone 4's
	// table under zone 1.
	execVia(t, tr, r1, pkts, "ct(zone=1)", clk.ns)
	for _, p := range pkts {
		if p.Md.CtMark != 0 {
			t.Fatal("flushed connection still found")
		}
	}
	if rs := tr.ReuseStats(); rs.Limbo != 0 || rs.Reused == 0 {
		t.Fatalf("stats %+v after the grace period", rs)
	}
	if tr.Count() != 7 {
		t.Fatalf("count %d, want 7", tr.Count())
	}
}

// TestReuseIgnoresOfflineAndClosedReaders: a reader that went offline or
// was closed holds nothing back; one that comes back online holds back
// what is removed after.
func TestReuseIgnoresOfflineAndClosedReaders(t *testing.T) {
	tr, clk := newTracker(t)
	r1, r2, r3 := tr.NewReader(), tr.NewReader(), tr.NewReader()
	defer r1.Close()
	pkts := udpPackets(t, 8)
	execVia(t, tr, r1, pkts, "ct(commit,zone=1)", clk.ns)
	old := connSet(zoneConns(tr, 1))
	r2.Offline()
	r3.Close()
	tr.FlushZone(1)
	r1.Quiesce()
	execVia(t, tr, r1, pkts[:1], "ct(commit,zone=2)", clk.ns)
	if !old[zoneConns(tr, 2)[0]] {
		t.Fatal("offline or closed reader held back reuse")
	}
	// r2 back online (it executes), then a removal: held back until r2
	// quiesces.
	execVia(t, tr, r2, pkts, "ct(commit,zone=3)", clk.ns)
	old = connSet(zoneConns(tr, 3))
	tr.FlushZone(3)
	r1.Quiesce()
	execVia(t, tr, r1, pkts[:1], "ct(commit,zone=4)", clk.ns)
	if old[zoneConns(tr, 4)[0]] {
		t.Fatal("reused while a reader that came back online had not quiesced")
	}
	r2.Quiesce()
	execVia(t, tr, r1, pkts[:1], "ct(commit,zone=5)", clk.ns)
	if !old[zoneConns(tr, 5)[0]] {
		t.Fatal("not reused after every reader quiesced")
	}
	// A closed reader runs as the Tracker's own path.
	execVia(t, tr, r3, pkts[:1], "ct(commit,zone=6)", clk.ns)
	if tr.ZoneCount(6) != 1 {
		t.Fatal("closed reader did not run")
	}
}

// TestReuseWaitsForCallsWithoutReader: a call without a Reader that runs
// across a removal holds it back until it returns.
func TestReuseWaitsForCallsWithoutReader(t *testing.T) {
	tr, clk := newTracker(t)
	pkts := udpPackets(t, 8)
	r := tr.NewReader()
	defer r.Close()
	execVia(t, tr, nil, pkts, "ct(commit,zone=1)", clk.ns)
	old := connSet(zoneConns(tr, 1))
	// Stand in for an Execute in progress on every stripe.
	for i := range tr.reuse.anon {
		tr.reuse.anon[i].n[tr.reuse.anonPhase.Load()&1].Add(1)
	}
	tr.FlushZone(1)
	r.Quiesce()
	execVia(t, tr, r, pkts[:1], "ct(commit,zone=2)", clk.ns)
	if old[zoneConns(tr, 2)[0]] {
		t.Fatal("reused while a call without a Reader was running")
	}
	for i := range tr.reuse.anon {
		tr.reuse.anon[i].n[0].Store(0)
		tr.reuse.anon[i].n[1].Store(0)
	}
	execVia(t, tr, r, pkts[:1], "ct(commit,zone=3)", clk.ns)
	if !old[zoneConns(tr, 3)[0]] {
		t.Fatal("not reused after the call returned")
	}
}

// TestCallsWithoutReaderGetReuse: with no Reader at all, connections are
// reused once the calls that ran across the removal have returned.
func TestCallsWithoutReaderGetReuse(t *testing.T) {
	tr, clk := newTracker(t)
	pkts := udpPackets(t, 8)
	execVia(t, tr, nil, pkts, "ct(commit,zone=1)", clk.ns)
	old := connSet(zoneConns(tr, 1))
	tr.FlushZone(1)
	// The committing call itself counts as running across the flush
	// when it first checks; a later call finds its phase drained.
	reused := false
	for z := uint16(2); z < 5 && !reused; z++ {
		execVia(t, tr, nil, pkts[:1], fmt.Sprintf("ct(commit,zone=%d)", z), clk.ns)
		reused = old[zoneConns(tr, z)[0]]
	}
	if !reused {
		t.Fatal("calls without a Reader never got reuse")
	}
}

// TestPagedOutZonesAreNotReused: a flushed zone whose memory the probe
// finds paged out goes to the collector, table included.
func TestPagedOutZonesAreNotReused(t *testing.T) {
	tr, clk := newTracker(t)
	tr.reuse.cold = func([]*Conn) bool { return true }
	r := tr.NewReader()
	defer r.Close()
	pkts := udpPackets(t, 2000) // a table of 4096 buckets, worth pooling
	execVia(t, tr, r, pkts, "ct(commit,zone=1)", clk.ns)
	old := connSet(zoneConns(tr, 1))
	oldTab := tr.zones[1].Load().tab.Load()
	tr.FlushZone(1)
	r.Quiesce()
	execVia(t, tr, r, pkts, "ct(commit,zone=1)", clk.ns)
	wantNoneOf(t, zoneConns(tr, 1), old, "reused a connection of a paged-out zone")
	if tr.zones[1].Load().tab.Load() == oldTab {
		t.Fatal("reused the table of a paged-out zone")
	}
	if rs := tr.ReuseStats(); rs.ColdDropped != 1 || rs.Reused != 0 || rs.Pooled != 0 {
		t.Fatalf("stats %+v, want one cold drop and nothing reused", rs)
	}
}

// TestNoReuseLeavesConnectionsToTheCollector: with Config.NoReuse
// nothing removed is ever reused.
func TestNoReuseLeavesConnectionsToTheCollector(t *testing.T) {
	clk := &fakeClock{ns: 1e9}
	tr := New(Config{Now: clk.now, NoReuse: true})
	r := tr.NewReader()
	defer r.Close()
	pkts := udpPackets(t, 40)
	execVia(t, tr, r, pkts, "ct(commit,zone=1)", clk.ns)
	old := connSet(zoneConns(tr, 1))
	tr.FlushTuple(zoneConns(tr, 1)[0].Key(0))
	tr.FlushZone(1)
	r.Quiesce()
	execVia(t, tr, r, pkts, "ct(commit,zone=2)", clk.ns)
	wantNoneOf(t, zoneConns(tr, 2), old, "reused with NoReuse set")
	if rs := tr.ReuseStats(); rs != (ReuseStats{}) {
		t.Fatalf("stats %+v with NoReuse", rs)
	}
}

// TestExpiredAndFlushedTuplesAreReused: connections removed one by one
// (expiry, flush-conntrack of a tuple) are reused after a grace period.
func TestExpiredAndFlushedTuplesAreReused(t *testing.T) {
	tr, clk := newTracker(t)
	r := tr.NewReader()
	defer r.Close()
	pkts := udpPackets(t, 10)
	execVia(t, tr, r, pkts, "ct(commit,zone=1)", clk.ns)
	old := connSet(zoneConns(tr, 1))
	k := zoneConns(tr, 1)[3].Key(0)
	if !tr.FlushTuple(k) {
		t.Fatal("FlushTuple found nothing")
	}
	clk.advance(3600)
	// A pass may miss connections that a shrinking table moved behind
	// its cursor; the next pass finds them.
	swept := 0
	for range 3 {
		n, _ := tr.Sweep(clk.ns, 1<<20)
		swept += n
	}
	if swept != 9 {
		t.Fatalf("swept %d, want 9", swept)
	}
	if got := len(zoneConns(tr, 1)); got != 0 || tr.ZoneCount(1) != 0 {
		t.Fatalf("zone 1 still lists %d connections", got)
	}
	r.Quiesce()
	execVia(t, tr, r, pkts, "ct(commit,zone=2)", clk.ns)
	for i, c := range zoneConns(tr, 2) {
		if !old[c] {
			t.Fatalf("commit %d did not reuse a removed connection", i)
		}
	}
	if tr.Count() != 10 {
		t.Fatalf("count %d", tr.Count())
	}
}

// TestReuseIsBounded: the limbo and the pool keep at most their caps;
// the rest is left to the collector.
func TestReuseIsBounded(t *testing.T) {
	tr, clk := newTracker(t)
	u := &tr.reuse
	u.limboCap, u.poolCap = 100, 50
	r := tr.NewReader()
	defer r.Close()
	pkts := udpPackets(t, 80)
	for z := uint16(1); z <= 3; z++ {
		execVia(t, tr, r, pkts, fmt.Sprintf("ct(commit,zone=%d)", z), clk.ns)
	}
	for z := uint16(1); z <= 3; z++ {
		tr.FlushZone(z)
	}
	u.mu.Lock()
	limbo := u.limboConns
	u.mu.Unlock()
	if limbo > 100 {
		t.Fatalf("limbo holds %d connections, cap 100", limbo)
	}
	r.Quiesce()
	execVia(t, tr, r, pkts[:1], "ct(commit,zone=4)", clk.ns)
	if rs := tr.ReuseStats(); rs.Pooled+int64(rs.Reused) > 50 {
		t.Fatalf("pool took %d connections, cap 50", rs.Pooled+int64(rs.Reused))
	}
}

// TestReuseStress runs lookups through readers, commits with and
// without a reader, flushes, tuple flushes, dumps and expiry on several
// goroutines (run with -race). A lookup must never see a connection of
// another zone or a half-reset one: each zone's commits carry the zone
// as their mark, so a hit shows the zone's mark and the packet's own
// tuple. Zone 1 is never flushed and must lose nothing; afterwards every
// zone's list and table agree.
func TestReuseStress(t *testing.T) {
	tr, _ := newTracker(t)
	const now = int64(1e9)
	short := DefaultTimeoutPolicy()
	for i := range short {
		short[i] = 1
	}
	for z := uint16(2); z <= 5; z++ {
		tr.SetZoneTimeoutPolicy(z, &short)
	}
	stable := udpPackets(t, 64)
	execVia(t, tr, nil, stable, "ct(commit,zone=1,mark=1)", now)
	rounds := 300
	if testing.Short() {
		rounds = 50
	}
	var failure atomic.Pointer[string]
	fail := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		failure.CompareAndSwap(nil, &s)
	}
	var wg sync.WaitGroup
	var stop atomic.Bool
	// Two datapath workers: look up zone 1 and the churn zones.
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := tr.NewReader()
			defer r.Close()
			stable := udpPackets(t, 64) // the same tuples, the worker's own packets
			pkts := udpPackets(t, 256)
			acts := make([]string, 6)
			for z := 1; z <= 5; z++ {
				acts[z] = fmt.Sprintf("ct(zone=%d)", z)
			}
			a := make([]*odp.CtParams, 6)
			for z := 1; z <= 5; z++ {
				a[z] = ctParams(t, acts[z])
			}
			var b packet.Batch
			for n := 0; !stop.Load(); n++ {
				z := 1 + (n+w)%5
				src := stable
				if z > 1 {
					src = pkts[(n*32)%len(pkts):][:32]
				}
				b.N = 0
				for _, p := range src[:32] {
					p.Md = packet.Metadata{}
					b.Add(p)
				}
				r.ExecuteAt(&b, a[z], now)
				for _, p := range b.Slice() {
					checkHit(p, uint16(z), fail)
				}
				r.Quiesce()
				if n%64 == 63 {
					r.Offline()
				}
			}
		}()
	}
	// Committers: one through a reader, one without.
	start := time.Now()
	var cwg sync.WaitGroup
	for w := range 2 {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			var r *Reader
			if w == 0 {
				r = tr.NewReader()
				defer r.Close()
			}
			pkts := udpPackets(t, 256)
			// At least rounds, and until reuse has happened a while.
			for n := 0; n < rounds || (tr.reuse.reused.Load() < 2000 && time.Since(start) < 20*time.Second); n++ {
				z := 2 + (n+w)%4
				execVia(t, tr, r, pkts[(n*16)%256:][:16], fmt.Sprintf("ct(commit,zone=%d,mark=%d)", z, z), now)
				if r != nil {
					r.Quiesce()
				}
			}
		}()
	}
	// Control: flushes, tuple flushes, dumps, expiry.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; !stop.Load(); n++ {
			switch n % 4 {
			case 0:
				tr.FlushZone(uint16(2 + n%4))
			case 1:
				for _, c := range tr.Dump(nil) {
					// Mark 0: published, its mark not set yet.
					if c.Mark != 0 && c.Mark != uint32(c.Orig.Zone) {
						fail("dump: zone %d connection with mark %d", c.Orig.Zone, c.Mark)
					}
					if n%8 == 1 && c.Orig.Zone != 1 {
						tr.FlushTuple(c.Orig)
					}
				}
			case 2:
				tr.Sweep(now+2e9, 500)
			case 3:
				tr.Sweep(now, 500)
			}
		}
	}()
	// Let the committers finish, then stop the rest.
	cwg.Wait()
	stop.Store(true)
	wg.Wait()
	if f := failure.Load(); f != nil {
		t.Fatal(*f)
	}
	if tr.ZoneCount(1) != 64 {
		t.Fatalf("zone 1 lost connections: %d left", tr.ZoneCount(1))
	}
	sum := 0
	for z := uint16(1); z <= 5; z++ {
		sum += tr.ZoneCount(z)
		checkZone(t, tr, z)
	}
	if sum != tr.Count() {
		t.Fatalf("count %d != sum of zones %d", tr.Count(), sum)
	}
	if tr.ReuseStats().Reused == 0 {
		t.Fatalf("nothing was reused: %+v, %d connections", tr.ReuseStats(), tr.Count())
	}
	t.Logf("reuse: %+v, %d connections", tr.ReuseStats(), tr.Count())
}

// checkHit checks the metadata of a lookup in zone z: the packet's own
// tuple (a hit on a connection of z, or a miss), and the mark of z or
// none (a miss, or a connection whose mark is not set yet).
func checkHit(p *packet.Packet, z uint16, fail func(string, ...any)) {
	md := &p.Md
	if md.CtZone != z || md.CtState&CsTracked == 0 {
		fail("zone %d lookup: zone %d state %s", z, md.CtZone, stateString(md.CtState))
		return
	}
	l4 := p.Data()[34:]
	sport, dport := binary.BigEndian.Uint16(l4), binary.BigEndian.Uint16(l4[2:])
	if md.CtMark != 0 && md.CtMark != uint32(z) || md.CtTpSrc != sport || md.CtTpDst != dport || md.CtNwProto != protoUDP {
		fail("zone %d hit: mark %d tuple %d:%d proto %d, packet %d:%d", z, md.CtMark, md.CtTpSrc, md.CtTpDst, md.CtNwProto, sport, dport)
	}
}

// checkZone checks, with nothing running, that zone z's list and table
// hold the same connections and that each is found by both its keys.
func checkZone(t *testing.T, tr *Tracker, z uint16) {
	t.Helper()
	zz := tr.zones[z].Load()
	if zz == nil {
		return
	}
	zz.mu.Lock()
	defer zz.mu.Unlock()
	if len(zz.all) != int(zz.count.Load()) {
		t.Fatalf("zone %d lists %d connections, counts %d", z, len(zz.all), zz.count.Load())
	}
	n := 0
	b := zz.tab.Load()
	for i := range b.heads {
		for nd := b.heads[i].Load(); nd != nil; nd = nd.next.Load() {
			n++
		}
	}
	if n != 2*len(zz.all) {
		t.Fatalf("zone %d: %d keys in the table for %d connections", z, n, len(zz.all))
	}
	for i, c := range zz.all {
		if c.nodes[0].slot != uint32(i) {
			t.Fatalf("zone %d: connection %d has slot %d", z, i, c.nodes[0].slot)
		}
		for dir := range 2 {
			k := c.Key(dir)
			if k.Zone != z {
				t.Fatalf("zone %d holds a key of zone %d", z, k.Zone)
			}
			if got, reply := find(b, &k, uint32(k.hash(tr.seed))); got != c || reply != (dir == 1) {
				t.Fatalf("zone %d: key %d of connection %d not found", z, dir, i)
			}
		}
	}
}

// TestReaderLookupAndQuiesceDoNotAllocate: a lookup through a Reader and
// a quiescent point allocate nothing.
func TestReaderLookupAndQuiesceDoNotAllocate(t *testing.T) {
	tr, clk := newTracker(t)
	r := tr.NewReader()
	defer r.Close()
	establishTCP(t, tr, "ct(commit,zone=9)")
	p := packet.FromBytes(tcp4(t, cA, cB, 1234, 80, fACK, 101, 501, nil))
	act := ctParams(t, "ct(zone=9)")
	var b packet.Batch
	allocs := testing.AllocsPerRun(200, func() {
		b.Clear()
		b.Add(p)
		r.ExecuteAt(&b, act, clk.ns)
		r.Quiesce()
		r.Offline()
	})
	if allocs != 0 {
		t.Fatalf("lookup through a Reader allocates %.1f times", allocs)
	}
	wantState(t, p, "+trk+est")
}

// wantNoneOf fails with msg if any of conns is in old.
func wantNoneOf(t *testing.T, conns []*Conn, old map[*Conn]bool, msg string) {
	t.Helper()
	for _, c := range conns {
		if old[c] {
			t.Fatal(msg)
		}
	}
}
