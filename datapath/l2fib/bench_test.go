package l2fib

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/internal/race"
)

// Benchmarks build big tables once per process and share them between
// the runs that testing makes with growing b.N.
var (
	benchMu     sync.Mutex
	benchTables = map[int]*Table{}
)

func filledTable(tb testing.TB, n int) *Table {
	benchMu.Lock()
	defer benchMu.Unlock()
	if t := benchTables[n]; t != nil {
		return t
	}
	t := newTable(tb, Config{Capacity: max(n, 1024)})
	for i := 0; i < n; i++ {
		t.Learn(0, mac(i), uint32(i%8+1))
	}
	benchTables[n] = t
	return t
}

// BenchmarkLookupLearn is one source learn (a refresh) plus one
// destination lookup on random keys of a table holding entries entries.
func BenchmarkLookupLearn(b *testing.B) {
	for _, n := range []int{256, 10_000, 100_000, 1_000_000, 16 << 20} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			if n > 1_000_000 && testing.Short() {
				b.Skip("16M entries take ~1 GiB; skipped with -short")
			}
			t := filledTable(b, n)
			x := uint64(88172645463325252)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				s, d := int(x%uint64(n)), int((x>>32)%uint64(n))
				t.Learn(0, mac(s), uint32(s%8+1))
				if _, ok := t.Lookup(0, mac(d)); !ok {
					b.Fatal("miss")
				}
			}
		})
	}
}

// heapBytes returns the live heap after a full collection.
func heapBytes() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// sixteenMillion fills a 16 Mi-entry table and returns it with the heap
// bytes it costs per entry.
func sixteenMillion(tb testing.TB) (*Table, float64) {
	const n = 16 << 20
	before := heapBytes()
	t := newTable(tb, Config{Capacity: n})
	for i := 0; i < n; i++ {
		t.Learn(uint16(i&0xfff), mac(i), uint32(i%64+1))
	}
	after := heapBytes()
	runtime.KeepAlive(t)
	// Chunks and buckets live in the huge-page arena, outside the heap.
	return t, float64(after-before+uint64(t.mem.bytes())) / n
}

func TestSixteenMillionEntriesFitIn64BytesEach(t *testing.T) {
	if testing.Short() {
		t.Skip("16M entries take ~1 GiB and several seconds; skipped with -short")
	}
	if race.Enabled {
		// The race detector multiplies memory and time several times over;
		// this test measures memory, not concurrency (the plain run does it).
		t.Skip("16M entries under the race detector take ~10 GiB; measured by the plain test run")
	}
	tb, per := sixteenMillion(t)
	if n := tb.Len(); n != 16<<20 {
		t.Fatalf("Len = %d, want %d", n, 16<<20)
	}
	for i := 0; i < 16<<20; i += 4099 {
		if p, ok := tb.Lookup(uint16(i&0xfff), mac(i)); !ok || p != uint32(i%64+1) {
			t.Fatalf("entry %d: port %d, found %v", i, p, ok)
		}
	}
	if s := tb.Stats(); s.Evicted != 0 || s.Learned != 16<<20 {
		t.Errorf("stats %+v", s)
	}
	t.Logf("%.1f bytes per entry at 16M entries", per)
	if per > 64 {
		t.Errorf("%.1f bytes per entry, want at most 64", per)
	}
	// One more MAC evicts exactly one entry.
	tb.Learn(0, MAC{0x02}, 1)
	if s := tb.Stats(); s.Evicted != 1 || s.Current != 16<<20 {
		t.Errorf("over capacity: %+v", s)
	}
}

// BenchmarkMemoryPerEntry reports the heap bytes per entry of a table
// holding 16 Mi entries (one fill per run; ns/op is the insert cost).
func BenchmarkMemoryPerEntry(b *testing.B) {
	if testing.Short() {
		b.Skip("16M entries take ~1 GiB; skipped with -short")
	}
	var per float64
	for i := 0; i < b.N; i++ {
		_, per = sixteenMillion(b)
	}
	b.ReportMetric(per, "bytes/entry")
}

// scenarioDP stands for the wire between the two bridges: output on the
// physical port (1) is captured to enter the other bridge, output on a
// guest port (2) is delivered and freed.
type scenarioDP struct {
	capture   packet.Batch
	delivered uint64
}

func (d *scenarioDP) Output(ctx *odp.Context, port uint32, b *packet.Batch) {
	for _, p := range b.Slice() {
		if port == 1 && d.capture.Add(p) {
			continue
		}
		if port == 2 {
			d.delivered++
		}
		ctx.Pool.Put(p)
	}
	b.Clear()
}
func (d *scenarioDP) Recirc(ctx *odp.Context, _ uint32, b *packet.Batch)        { d.free(ctx, b) }
func (d *scenarioDP) Userspace(*odp.Context, *odp.Action, *packet.Batch)        {}
func (d *scenarioDP) Conntrack(*odp.Context, *odp.Action, *packet.Batch)        {}
func (d *scenarioDP) MACLearn(ctx *odp.Context, _ *odp.Action, b *packet.Batch) { d.free(ctx, b) }
func (d *scenarioDP) Meter(*odp.Context, uint32, *packet.Batch)                 {}
func (d *scenarioDP) TunnelPush(*odp.Context, *odp.Action, *packet.Batch)       {}
func (d *scenarioDP) TunnelPop(ctx *odp.Context, _ uint32, b *packet.Batch)     { d.free(ctx, b) }
func (d *scenarioDP) free(ctx *odp.Context, b *packet.Batch) {
	for _, p := range b.Slice() {
		ctx.Pool.Put(p)
	}
	b.Clear()
}

// scenario is issue 6's topology: bridges A and B, each joining a
// physical port (1) and a guest port (2) through NORMAL (one mac_learn
// action per input port); flow i is guest MAC x_i behind A talking to
// guest MAC y_i behind B, so each bridge learns 2N entries (4N in all).
type scenario struct {
	n      int
	a, b   *Table
	reg    Registry
	fw     *Forwarder
	ctx    *odp.Context
	dp     *scenarioDP
	act    odp.Actions
	tmpl   []byte
	x      uint64
	batch  packet.Batch
	warmed bool
}

func newScenario(tb testing.TB, n int) *scenario {
	s := &scenario{n: n, dp: &scenarioDP{}, tmpl: frame(MAC{}, MAC{}, -1)}
	var err error
	if s.a, err = New(Config{}, t0); err != nil { // the default capacity holds N = 1M
		tb.Fatal(err)
	}
	if s.b, err = New(Config{}, t0); err != nil {
		tb.Fatal(err)
	}
	s.reg.Set(1, s.a)
	s.reg.Set(2, s.b)
	s.fw = NewForwarder(&s.reg)
	s.ctx = odp.NewContext(packet.NewPool(128), s.dp, 1)
	s.act, err = odp.ParseActions("mac_learn(table=1,ports(1,2)),mac_learn(table=2,ports(1,2))")
	if err != nil {
		tb.Fatal(err)
	}
	s.x = 0x9e3779b97f4a7c15
	return s
}

func guestMAC(side byte, i int) MAC {
	return MAC{0x02, side, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}
}

// pass sends one batch of flows first..first+32 (or random flows if
// first < 0) in one direction through both bridges.
func (s *scenario) pass(first int, reverse bool) {
	for k := 0; k < packet.BatchSize; k++ {
		i := first + k
		if first < 0 {
			s.x ^= s.x << 13
			s.x ^= s.x >> 7
			s.x ^= s.x << 17
			i = int(s.x % uint64(s.n))
		} else if i >= s.n {
			break
		}
		src, dst := guestMAC(0xa, i), guestMAC(0xb, i)
		if reverse {
			src, dst = dst, src
		}
		p := s.ctx.Pool.Get()
		p.SetData(s.tmpl)
		d := p.Data()
		copy(d[0:6], dst[:])
		copy(d[6:12], src[:])
		p.Md.InPort = 2
		s.batch.Add(p)
	}
	first1, second := &s.act[0], &s.act[1]
	if reverse {
		first1, second = second, first1
	}
	s.fw.Forward(s.ctx, first1, &s.batch)
	for _, p := range s.dp.capture.Slice() {
		p.Md.InPort = 1
		s.batch.Add(p)
	}
	s.dp.capture.Clear()
	s.fw.Forward(s.ctx, second, &s.batch)
}

func (s *scenario) warm() {
	for i := 0; i < s.n; i += packet.BatchSize {
		s.pass(i, false)
		s.pass(i, true)
	}
	s.a.ClearStats()
	s.b.ClearStats()
	s.dp.delivered = 0
	s.warmed = true
}

var scenarios = map[int]*scenario{}

func TestScenarioSteadyStateDoesNotFlood(t *testing.T) {
	for _, n := range []int{256, 10_000} {
		s := newScenario(t, n)
		s.warm()
		if got := s.a.Len() + s.b.Len(); got != 4*n {
			t.Fatalf("N=%d: %d entries, want 4N = %d", n, got, 4*n)
		}
		for k := 0; k < 1000; k++ {
			s.pass(-1, k%2 == 1)
		}
		sa, sb := s.a.Stats(), s.b.Stats()
		if sa.Flooded+sb.Flooded != 0 || s.dp.delivered != 1000*packet.BatchSize || sa.Unicast+sb.Unicast != 2*1000*packet.BatchSize {
			t.Errorf("N=%d: flooded %d, delivered %d, unicast %d", n, sa.Flooded+sb.Flooded, s.dp.delivered, sa.Unicast+sb.Unicast)
		}
		if n := testing.AllocsPerRun(100, func() { s.pass(-1, false) }); n != 0 {
			t.Errorf("steady state allocates %v per batch", n)
		}
	}
}

// BenchmarkScenario reports the steady-state rate (Mpps: packets through
// both bridges per second) and flood ratio after one warm-up pass, at N
// bidirectional flows (4N entries).
func BenchmarkScenario(b *testing.B) {
	for _, n := range []int{256, 10_000, 100_000, 400_000, 1_000_000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			s := scenarios[n]
			if s == nil {
				s = newScenario(b, n)
				s.warm()
				scenarios[n] = s
			}
			fa, fb := s.a.Stats().Flooded, s.b.Stats().Flooded
			start := time.Now()
			b.ResetTimer()
			pkts := 0
			for k := 0; pkts < b.N; k++ {
				s.pass(-1, k%2 == 1)
				pkts += packet.BatchSize
			}
			el := time.Since(start)
			b.StopTimer()
			flooded := s.a.Stats().Flooded - fa + s.b.Stats().Flooded - fb
			b.ReportMetric(float64(pkts)/el.Seconds()/1e6, "Mpps")
			b.ReportMetric(100*float64(flooded)/float64(2*pkts), "flood%")
			b.ReportMetric(float64(s.a.Len()+s.b.Len())/float64(n), "entries/N")
		})
	}
}
