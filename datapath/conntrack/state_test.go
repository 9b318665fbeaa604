package conntrack

import (
	"sync"
	"testing"

	"github.com/gvs-project/gvs/datapath/packet"
)

// connOf returns the connection frame's key maps to in zone z.
func connOf(t *testing.T, tr *Tracker, z uint16, frame []byte) (*Conn, bool) {
	t.Helper()
	var pi pktInfo
	if r := parsePacket(&pi, packet.FromBytes(frame), true); r != parseOK {
		t.Fatalf("parse: %d", r)
	}
	pi.key.Zone = z
	zz := tr.zones[z].Load()
	if zz == nil {
		t.Fatalf("zone %d has no table", z)
	}
	c, reply := zz.lookup(&pi.key, pi.key.hash(tr.seed))
	if c == nil {
		t.Fatal("connection not found")
	}
	return c, reply
}

func TestExpiryIsRoundedUpToTheMillisecondBesideTheState(t *testing.T) {
	tr, clk := newTracker(t)
	clk.ns = 1e9 + 1
	run(t, tr, "ct(commit)", udp4(t, cA, cB, 5000, 53))
	c, _ := connOf(t, tr, 0, udp4(t, cA, cB, 5000, 53))
	const want = 61_001_000_000 // 1 s + 1 ns + udp_first (60 s), rounded up to the ms
	if got := c.expiry(); got != want {
		t.Fatalf("expiry %d, want %d", got, want)
	}
	if c.expired(want-1) || !c.expired(want) {
		t.Fatalf("expired(%d) = %v, expired(%d) = %v", want-1, c.expired(want-1), want, c.expired(want))
	}
	run(t, tr, "ct", udp4(t, cB, cA, 53, 5000))
	if st := c.pstate(); st != othersBidir {
		t.Fatalf("state %d after a reply, want %d", st, othersBidir)
	}
	if got, want := c.expiry(), int64(31_001_000_000); got != want { // udp_multiple: 30 s
		t.Fatalf("expiry after a reply %d, want %d", got, want)
	}
}

func TestExecuteAtUsesTheCallersTime(t *testing.T) {
	tr, _ := newTracker(t) // the tracker's clock says 1 s
	var b packet.Batch
	b.Add(packet.FromBytes(udp4(t, cA, cB, 5000, 53)))
	tr.ExecuteAt(&b, ctParams(t, "ct(commit)"), 5e9)
	c, _ := connOf(t, tr, 0, udp4(t, cA, cB, 5000, 53))
	if got, want := c.expiry(), int64(65e9); got != want {
		t.Fatalf("expiry %d, want %d (5 s + udp_first)", got, want)
	}
}

// TestUDPStateUpdatesRaceFree sends both directions of one UDP
// connection from several goroutines at once (run with -race): the
// lock-free state update must end in the two-way state with the two-way
// timeout, whatever the interleaving.
func TestUDPStateUpdatesRaceFree(t *testing.T) {
	tr, clk := newTracker(t)
	run(t, tr, "ct(commit,zone=3)", udp4(t, cA, cB, 5000, 53))
	act := ctParams(t, "ct(zone=3)")
	frames := [2][]byte{udp4(t, cA, cB, 5000, 53), udp4(t, cB, cA, 53, 5000)}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := packet.FromBytes(frames[g%2])
			var b packet.Batch
			for range 500 {
				p.Md = packet.Metadata{}
				b.Clear()
				b.Add(p)
				tr.Execute(&b, act)
				if p.Md.CtState&(CsNew|CsEstablished) == 0 {
					t.Errorf("state %#x", p.Md.CtState)
					return
				}
			}
		}()
	}
	wg.Wait()
	c, _ := connOf(t, tr, 3, frames[0])
	if st := c.pstate(); st != othersBidir {
		t.Fatalf("state %d, want %d", st, othersBidir)
	}
	if got, want := c.expiry(), clk.now()+30e9; got != want {
		t.Fatalf("expiry %d, want %d (udp_multiple)", got, want)
	}
	wantState(t, run(t, tr, "ct(zone=3)", frames[0]), "+trk+est")
}
