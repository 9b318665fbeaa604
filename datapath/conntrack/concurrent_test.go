package conntrack

import (
	"runtime"
	"sync"
	"testing"

	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

func ctParams(t testing.TB, s string) *odp.CtParams {
	t.Helper()
	acts, err := odp.ParseActions(s)
	if err != nil {
		t.Fatal(err)
	}
	return acts[0].Ct
}

// TestConcurrentLookupCommitFlush runs lookups of established connections
// while other goroutines commit new ones and flush zones; run with -race.
func TestConcurrentLookupCommitFlush(t *testing.T) {
	tr, _ := newTracker(t)
	stable := ctParams(t, "ct(commit,zone=1)")
	frames := make([][]byte, 64)
	for i := range frames {
		frames[i] = udp4(t, cA, cB, uint16(i), 53)
		p := packet.FromBytes(frames[i])
		var b packet.Batch
		b.Add(p)
		tr.Execute(&b, stable)
	}
	churn := make([][]byte, 256)
	for i := range churn {
		churn[i] = udp4(t, cB, cA, uint16(i), 99)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var failure string
	wg.Add(2)
	go func() { // commits in zones 2 and 3
		defer wg.Done()
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			act := "ct(commit,zone=2)"
			if n%2 == 1 {
				act = "ct(commit,zone=3)"
			}
			run(t, tr, act, churn[n%len(churn)])
			runtime.Gosched()
		}
	}()
	go func() { // flushes of zones 2 and 3, sweeps and dumps
		defer wg.Done()
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			tr.FlushZone(uint16(2 + n%2))
			tr.Sweep(0, 100)
			_ = FormatDump(tr.Dump(nil), false)
			runtime.Gosched()
		}
	}()
	// Lookups in zone 1 never miss.
	lookup := ctParams(t, "ct(zone=1)")
	var b packet.Batch
	pkts := make([]*packet.Packet, 32)
	for i := range pkts {
		pkts[i] = packet.FromBytes(frames[i])
	}
	for n := 0; n < 300 && failure == ""; n++ {
		b.Clear()
		for i, p := range pkts {
			p.SetData(frames[(i+n)%len(frames)])
			p.Md = packet.Metadata{}
			b.Add(p)
		}
		tr.Execute(&b, lookup)
		for _, p := range b.Slice() {
			if p.Md.CtState != CsTracked|CsEstablished && p.Md.CtState != CsTracked|CsNew {
				failure = "established connection looked up as " + stateString(p.Md.CtState)
			}
		}
		runtime.Gosched()
	}
	close(stop)
	wg.Wait()
	if failure != "" {
		t.Fatal(failure)
	}
	if tr.ZoneCount(1) != 64 {
		t.Fatalf("zone 1 lost connections: %d", tr.ZoneCount(1))
	}
	if got := tr.ZoneCount(2) + tr.ZoneCount(3) + 64; got != tr.Count() {
		t.Fatalf("count %d != sum of zones %d", tr.Count(), got)
	}
}

func TestLookupOfExistingConnectionDoesNotAllocate(t *testing.T) {
	tr, _ := newTracker(t)
	establishTCP(t, tr, "ct(commit,zone=9)")
	frame := tcp4(t, cA, cB, 1234, 80, fACK, 101, 501, nil)
	p := packet.FromBytes(frame)
	act := ctParams(t, "ct(zone=9)")
	var b packet.Batch
	allocs := testing.AllocsPerRun(200, func() {
		b.Clear()
		b.Add(p)
		tr.Execute(&b, act)
	})
	if allocs != 0 {
		t.Fatalf("lookup allocates %.1f times per packet", allocs)
	}
	wantState(t, p, "+trk+est")
	// NAT translation of an existing connection does not allocate either.
	run(t, tr, "ct(commit,zone=4,nat(src=192.168.0.1))", udp4(t, cA, cB, 7, 8))
	frame = udp4(t, cA, cB, 7, 8)
	natAct := ctParams(t, "ct(zone=4,nat)")
	allocs = testing.AllocsPerRun(200, func() {
		p.SetData(frame)
		p.Md = packet.Metadata{}
		b.Clear()
		b.Add(p)
		tr.Execute(&b, natAct)
	})
	if allocs != 0 {
		t.Fatalf("nat lookup allocates %.1f times per packet", allocs)
	}
	wantState(t, p, "+trk+new+snat")
}

// TestLookupsNeverMissDuringResize grows and shrinks zone 1 (commits,
// then expiry) while looking up connections that stay in it: the resize
// relinks chains under the readers' feet, and no lookup may miss.
func TestLookupsNeverMissDuringResize(t *testing.T) {
	clk := &fakeClock{ns: 1e9}
	tr := New(Config{Now: func() int64 { return clk.ns }})
	stable := udpPackets(t, 32)
	// The mark tells a hit (mark 7) from a miss (mark 0, also +new).
	execBatches(tr, stable, "ct(commit,zone=1,mark=7)", t)
	churn := udpPackets(t, 4096)[32:]
	done := make(chan struct{})
	go func() {
		defer close(done)
		for round := 0; round < 4; round++ {
			execBatches(tr, churn, "ct(commit,zone=1)", t)
			// Flush the churn by tuple so that the table shrinks again.
			for _, p := range churn {
				var pi pktInfo
				parsePacket(&pi, p, false)
				pi.key.Zone = 1
				tr.FlushTuple(pi.key)
			}
		}
	}()
	act := ctParams(t, "ct(zone=1)")
	var b packet.Batch
	for n := 0; ; n++ {
		select {
		case <-done:
			if tr.ZoneCount(1) != 32 {
				t.Fatalf("zone 1 has %d connections", tr.ZoneCount(1))
			}
			return
		default:
		}
		b.N = 0
		for _, p := range stable {
			p.Md = packet.Metadata{}
			b.Add(p)
		}
		tr.Execute(&b, act)
		for _, p := range b.Slice() {
			if p.Md.CtState != CsTracked|CsNew || p.Md.CtMark != 7 {
				t.Fatalf("lookup %d: ct_state %s", n, stateString(p.Md.CtState))
			}
		}
		if tr.Count() < 32 {
			t.Fatal("lost connections")
		}
	}
}
