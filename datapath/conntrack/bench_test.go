package conntrack

import (
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/gvs-project/gvs/datapath/packet"
)

// udpPackets returns n UDP packets of distinct 5-tuples.
func udpPackets(b testing.TB, n int) []*packet.Packet {
	base := udp4(b, cA, cB, 1, 1)
	pkts := make([]*packet.Packet, n)
	for i := range pkts {
		f := append([]byte(nil), base...)
		l4 := f[34:]
		old := binary.BigEndian.Uint32(l4)
		nw := uint32(i>>16+1)<<16 | uint32(uint16(i))
		binary.BigEndian.PutUint32(l4, nw)
		binary.BigEndian.PutUint16(l4[6:], packet.UpdateChecksum32(binary.BigEndian.Uint16(l4[6:]), old, nw))
		// Small buffers, as a port's pool would keep hot packets dense.
		pkts[i] = packet.New(len(f))
		pkts[i].SetData(f)
	}
	return pkts
}

func execBatches(tr *Tracker, pkts []*packet.Packet, act string, b testing.TB) {
	execVia(b, tr, nil, pkts, act, tr.Now())
}

func BenchmarkLookupExisting(b *testing.B) {
	tr, _ := newTracker(b)
	pkts := udpPackets(b, 10000)
	execBatches(tr, pkts, "ct(commit,zone=1)", b)
	a := ctParams(b, "ct(zone=1)")
	var batch packet.Batch
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i * packet.BatchSize % len(pkts)
		batch.N = 0
		for _, p := range pkts[j:min(j+packet.BatchSize, len(pkts))] {
			p.Md = packet.Metadata{}
			batch.Add(p)
		}
		tr.Execute(&batch, a)
	}
	b.SetBytes(0)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*packet.BatchSize), "ns/pkt")
}

func BenchmarkCommitZone10000(b *testing.B) {
	tr, _ := newTracker(b)
	pkts := udpPackets(b, 10000)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tr.FlushZone(1)
		execBatches(tr, pkts, "ct(commit,zone=1)", b)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pkts)), "ns/conn")
}

// BenchmarkCommitZone10000Reader is BenchmarkCommitZone10000 through a
// Reader that quiesces after each flush, as a datapath worker between
// batches: the flushed connections are reused.
func BenchmarkCommitZone10000Reader(b *testing.B) {
	tr, clk := newTracker(b)
	r := tr.NewReader()
	defer r.Close()
	pkts := udpPackets(b, 10000)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tr.FlushZone(1)
		r.Quiesce()
		execVia(b, tr, r, pkts, "ct(commit,zone=1)", clk.ns)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pkts)), "ns/conn")
}

func BenchmarkFlushFullZone(b *testing.B) {
	tr, _ := newTracker(b)
	pkts := udpPackets(b, 10000)
	var flush time.Duration
	for i := 0; i < b.N; i++ {
		execBatches(tr, pkts, "ct(commit,zone=1)", b)
		t0 := time.Now()
		n := tr.FlushZone(1)
		flush += time.Since(t0)
		if n != 10000 {
			b.Fatal("flush")
		}
	}
	// The timer includes the refill; the flush alone is this metric.
	b.ReportMetric(float64(flush.Nanoseconds())/float64(b.N), "ns/flush")
}

func BenchmarkFlushEmptyZone(b *testing.B) {
	tr, _ := newTracker(b)
	for i := 0; i < b.N; i++ {
		tr.FlushZone(0xffff)
	}
}

// TestMemoryPerConnection measures the heap per committed connection
// (connection, both keys' chain nodes and the bucket arrays).
func TestMemoryPerConnection(t *testing.T) {
	if testing.Short() {
		t.Skip("conntrack: memory measurement skipped in -short")
	}
	const n = 200000
	pkts := udpPackets(t, n)
	tr, _ := newTracker(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	execBatches(tr, pkts, "ct(commit,zone=1)", t)
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	t.Logf("heap per connection: %.1f bytes (%d connections)", per, tr.Count())
	if tr.Count() != n || per > 256 {
		t.Fatalf("%d connections, %.1f bytes each (want <= 256)", tr.Count(), per)
	}
	runtime.KeepAlive(pkts)
}

// BenchmarkLookupOneByOne is ovstest's benchmark-zones lookup phase: one
// packet per Execute over 10,000 established connections of one zone.
func BenchmarkLookupOneByOne(b *testing.B) { benchLookupOneByOne(b, false) }

// BenchmarkLookupOneByOneReader is BenchmarkLookupOneByOne through a
// Reader (no shared write per call).
func BenchmarkLookupOneByOneReader(b *testing.B) { benchLookupOneByOne(b, true) }

func benchLookupOneByOne(b *testing.B, viaReader bool) {
	tr, clk := newTracker(b)
	var r *Reader
	if viaReader {
		r = tr.NewReader()
		defer r.Close()
	}
	pkts := udpPackets(b, 10000)
	execBatches(tr, pkts, "ct(commit,zone=1)", b)
	a := ctParams(b, "ct(zone=1)")
	var batch packet.Batch
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := pkts[i%len(pkts)]
		p.Md.CtConn = 0
		batch.N = 0
		batch.Add(p)
		if r != nil {
			r.ExecuteAt(&batch, a, clk.ns)
		} else {
			tr.Execute(&batch, a)
		}
	}
}

// TestConnNodesAreCacheLines checks the layout the lookup relies on:
// committed connections are 64-byte aligned, so each direction's node
// (with its key) is exactly one cache line.
func TestConnNodesAreCacheLines(t *testing.T) {
	tr, _ := newTracker(t)
	pkts := udpPackets(t, 1000)
	execBatches(tr, pkts, "ct(commit,zone=1)", t)
	z := tr.zones[1].Load()
	n := 0
	z.forEach(func(c *Conn) bool {
		if a := uintptr(unsafe.Pointer(c)); a%64 != 0 {
			t.Errorf("connection at %#x: not 64-byte aligned", a)
			return false
		}
		if c.nodes[0].conn() != c || c.nodes[1].conn() != c {
			t.Error("node.conn does not return the node's connection")
			return false
		}
		n++
		return true
	})
	if n != 1000 {
		t.Fatalf("visited %d connections, want 1000", n)
	}
}

// BenchmarkLookupThenCommitReader is the conntrack pipeline of a
// datapath worker (tests/perf/dpbench's "ct"): ct(zone=1), then, after
// the packet recirculates, ct(commit,zone=1), through the worker's
// Reader, over 100,000 established connections in random order.
func BenchmarkLookupThenCommitReader(b *testing.B) {
	tr, _ := newTracker(b)
	r := tr.NewReader()
	pkts := udpPackets(b, 100000)
	execVia(b, tr, r, pkts, "ct(commit,zone=1)", tr.Now())
	order := rand.New(rand.NewPCG(1, 2)).Perm(len(pkts))
	lookup, commit := ctParams(b, "ct(zone=1)"), ctParams(b, "ct(commit,zone=1)")
	var batch packet.Batch
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i * packet.BatchSize % (len(pkts) - packet.BatchSize)
		batch.N = 0
		for _, k := range order[j : j+packet.BatchSize] {
			p := pkts[k]
			p.Md = packet.Metadata{}
			batch.Add(p)
		}
		now := tr.Now()
		r.ExecuteAt(&batch, lookup, now)
		r.ExecuteAt(&batch, commit, now)
		r.Quiesce()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*packet.BatchSize), "ns/pkt")
}
