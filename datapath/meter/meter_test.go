package meter

import (
	"sync"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/packet"
)

// fakeClock is a settable monotonic clock.
type fakeClock struct{ ns int64 }

func (c *fakeClock) now() int64              { return c.ns }
func (c *fakeClock) advance(d time.Duration) { c.ns += int64(d) }

func batchOf(n, size int) *packet.Batch {
	b := &packet.Batch{}
	for i := 0; i < n; i++ {
		b.Add(packet.FromBytes(make([]byte, size)))
	}
	return b
}

func apply(t *testing.T, tab *Table, clk *fakeClock, id uint32, n, size int) (passed int) {
	t.Helper()
	m := tab.Get(id)
	if m == nil {
		t.Fatalf("meter %d missing", id)
	}
	var drop [packet.BatchSize]bool
	b := batchOf(n, size)
	d := m.Apply(clk.now(), b, &drop)
	cnt := 0
	for i := 0; i < n; i++ {
		if drop[i] {
			cnt++
		}
	}
	if cnt != d {
		t.Fatalf("Apply returned %d drops, flags say %d", d, cnt)
	}
	return n - d
}

func TestPacketRateBandPassesBurstThenRate(t *testing.T) {
	clk := &fakeClock{}
	tab := NewTable(clk.now)
	if err := tab.Set(1, Config{Pktps: true, Bands: []Band{{Rate: 10, Burst: 10}}}); err != nil {
		t.Fatal(err)
	}
	if got := apply(t, tab, clk, 1, 32, 60); got != 10 {
		t.Fatalf("full bucket of 10 packets passed %d of 32", got)
	}
	clk.advance(100 * time.Millisecond) // 10 pps × 0.1 s = 1 packet
	if got := apply(t, tab, clk, 1, 32, 60); got != 1 {
		t.Fatalf("after 100 ms at 10 pps passed %d, want 1", got)
	}
	// The bucket never holds more than the burst, however long the idle.
	clk.advance(time.Hour)
	if got := apply(t, tab, clk, 1, 32, 60); got != 10 {
		t.Fatalf("after an hour idle passed %d, want the burst of 10", got)
	}
	s := tab.Get(1).Stats()
	if s.Packets != 96 || s.Bytes != 96*60 || s.Bands[0].Packets != 96-21 || s.Bands[0].Bytes != (96-21)*60 {
		t.Fatalf("stats %+v", s)
	}
}

func TestKbpsBandCountsBits(t *testing.T) {
	clk := &fakeClock{}
	tab := NewTable(clk.now)
	// 8 kbps = 1 byte per ms; burst 8 kbit = 1000 bytes.
	if err := tab.Set(2, Config{Bands: []Band{{Rate: 8, Burst: 8}}}); err != nil {
		t.Fatal(err)
	}
	if got := apply(t, tab, clk, 2, 20, 100); got != 10 {
		t.Fatalf("1000-byte bucket passed %d 100-byte packets, want 10", got)
	}
	clk.advance(250 * time.Millisecond) // 250 bytes
	if got := apply(t, tab, clk, 2, 20, 100); got != 2 {
		t.Fatalf("250 bytes of refill passed %d 100-byte packets, want 2", got)
	}
}

func TestBurstDefaultsToRate(t *testing.T) {
	clk := &fakeClock{}
	tab := NewTable(clk.now)
	if err := tab.Set(3, Config{Pktps: true, Bands: []Band{{Rate: 5}}}); err != nil {
		t.Fatal(err)
	}
	if got := apply(t, tab, clk, 3, 32, 60); got != 5 {
		t.Fatalf("passed %d, want 5", got)
	}
}

func TestSmallStepsRefillWithoutLosingFractions(t *testing.T) {
	clk := &fakeClock{}
	tab := NewTable(clk.now)
	if err := tab.Set(4, Config{Pktps: true, Bands: []Band{{Rate: 1000, Burst: 1}}}); err != nil {
		t.Fatal(err)
	}
	passed := apply(t, tab, clk, 4, 1, 60) // drains the bucket of 1
	// 1000 pps for 1 s in 10 µs steps, one packet offered per step:
	// exactly 1000 pass although no single step refills a whole packet.
	for i := 0; i < 100000; i++ {
		clk.advance(10 * time.Microsecond)
		passed += apply(t, tab, clk, 4, 1, 60)
	}
	if passed != 1+1000 {
		t.Fatalf("passed %d, want 1001", passed)
	}
}

func TestHighestRateExceededBandCountsTheDrop(t *testing.T) {
	clk := &fakeClock{}
	tab := NewTable(clk.now)
	if err := tab.Set(5, Config{Pktps: true, Bands: []Band{{Rate: 4, Burst: 4}, {Rate: 8, Burst: 8}}}); err != nil {
		t.Fatal(err)
	}
	// Packets 1-4 pass both; 5-8 exceed band 0 only; 9-16 exceed both and
	// are counted by band 1, the higher rate.
	if got := apply(t, tab, clk, 5, 16, 60); got != 4 {
		t.Fatalf("passed %d, want 4", got)
	}
	s := tab.Get(5).Stats()
	if s.Bands[0].Packets != 4 || s.Bands[1].Packets != 8 {
		t.Fatalf("band stats %+v", s.Bands)
	}
}

func TestModifyKeepsCountersAndDeleteReturnsThem(t *testing.T) {
	clk := &fakeClock{}
	tab := NewTable(clk.now)
	if err := tab.Set(6, Config{Pktps: true, Bands: []Band{{Rate: 1, Burst: 1}}}); err != nil {
		t.Fatal(err)
	}
	apply(t, tab, clk, 6, 3, 100)
	if err := tab.Set(6, Config{Pktps: true, Bands: []Band{{Rate: 100, Burst: 100}}}); err != nil {
		t.Fatal(err)
	}
	if got := apply(t, tab, clk, 6, 3, 100); got != 3 {
		t.Fatalf("after modify to 100 pps passed %d, want 3", got)
	}
	s, err := tab.Delete(6)
	if err != nil {
		t.Fatal(err)
	}
	if s.Packets != 6 || s.Bytes != 600 || s.Bands[0].Packets != 2 {
		t.Fatalf("stats %+v", s)
	}
	if tab.Get(6) != nil || tab.Len() != 0 {
		t.Fatal("meter still present after delete")
	}
	if _, err := tab.Delete(6); err == nil {
		t.Fatal("deleting a missing meter succeeded")
	}
}

func TestSetRejectsBadConfigs(t *testing.T) {
	tab := NewTable(nil)
	for name, tc := range map[string]struct {
		id  uint32
		cfg Config
	}{
		"no bands":     {1, Config{}},
		"zero rate":    {1, Config{Bands: []Band{{Rate: 0}}}},
		"id too large": {MaxMeters, Config{Bands: []Band{{Rate: 1}}}},
		"too many":     {1, Config{Bands: make([]Band, MaxBands+1)}},
	} {
		if err := tab.Set(tc.id, tc.cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if tab.Len() != 0 {
		t.Fatalf("%d meters after rejected sets", tab.Len())
	}
}

func TestConcurrentWorkersCountEveryPacket(t *testing.T) {
	tab := NewTable(nil)
	if err := tab.Set(7, Config{Pktps: true, Bands: []Band{{Rate: 1, Burst: 1}}}); err != nil {
		t.Fatal(err)
	}
	m := tab.Get(7)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var drop [packet.BatchSize]bool
			b := batchOf(32, 64)
			for i := 0; i < 200; i++ {
				m.Apply(tab.clock(), b, &drop)
			}
		}()
	}
	wg.Wait()
	s := m.Stats()
	if s.Packets != 4*200*32 || s.Bytes != 4*200*32*64 {
		t.Fatalf("stats %+v", s)
	}
	if s.Bands[0].Packets < s.Packets-10 || s.Bands[0].Packets >= s.Packets {
		t.Fatalf("1 pps meter dropped %d of %d", s.Bands[0].Packets, s.Packets)
	}
}

func TestApplyAllocatesNothing(t *testing.T) {
	clk := &fakeClock{}
	tab := NewTable(clk.now)
	if err := tab.Set(8, Config{Bands: []Band{{Rate: 1000}}}); err != nil {
		t.Fatal(err)
	}
	m := tab.Get(8)
	b := batchOf(32, 1500)
	var drop [packet.BatchSize]bool
	if n := testing.AllocsPerRun(100, func() {
		clk.advance(time.Millisecond)
		m.Apply(clk.now(), b, &drop)
	}); n != 0 {
		t.Fatalf("%v allocations per batch", n)
	}
}

func BenchmarkApplyBatch32(b *testing.B) {
	tab := NewTable(nil)
	if err := tab.Set(1, Config{Bands: []Band{{Rate: 10_000_000}}}); err != nil {
		b.Fatal(err)
	}
	m := tab.Get(1)
	batch := batchOf(32, 64)
	var drop [packet.BatchSize]bool
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m.Apply(tab.clock(), batch, &drop)
	}
}

func TestAllocHandsOutLowestFreeID(t *testing.T) {
	tab := NewTable(nil)
	for want := uint32(0); want < 3; want++ {
		if id, err := tab.Alloc(); err != nil || id != want {
			t.Fatalf("Alloc = %d, %v; want %d", id, err, want)
		}
	}
	tab.Free(1)
	if id, _ := tab.Alloc(); id != 1 {
		t.Fatalf("after Free(1) Alloc = %d, want 1", id)
	}
	if id, _ := tab.Alloc(); id != 3 {
		t.Fatalf("Alloc = %d, want 3", id)
	}
}
