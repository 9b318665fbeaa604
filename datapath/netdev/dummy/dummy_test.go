package dummy

import (
	"bytes"
	"github.com/gvs-project/gvs/internal/race"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/packet"
)

func frame(n int, tag byte) []byte {
	f := make([]byte, n)
	copy(f, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xaa, 0x55, 0xaa, 0x55, 0, 1, 0x08, 0x00})
	for i := 14; i < n; i++ {
		f[i] = tag
	}
	return f
}

func open(t *testing.T, cfg Config) *Device {
	t.Helper()
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestInjectedFramesAreReceivedInOrderAndCounted(t *testing.T) {
	d := open(t, Config{Name: "p1"})
	pool := packet.NewPool(64)
	for i := 0; i < 3; i++ {
		if !d.Inject(frame(60+i, byte(i))) {
			t.Fatalf("inject %d refused", i)
		}
	}
	var b packet.Batch
	n, err := d.Recv(0, &b, pool)
	if err != nil || n != 3 || b.N != 3 {
		t.Fatalf("Recv = %d, %v (batch %d), want 3", n, err, b.N)
	}
	for i, p := range b.Slice() {
		if !bytes.Equal(p.Data(), frame(60+i, byte(i))) {
			t.Fatalf("packet %d = %x", i, p.Data())
		}
	}
	if n, _ := d.Recv(0, &b, pool); n != 0 {
		t.Fatalf("second Recv = %d, want 0", n)
	}
	want := netdev.Stats{RxPackets: 3, RxBytes: 60 + 61 + 62}
	if got := d.Stats(); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
}

func TestRecvFillsOnlyFreeBatchSlots(t *testing.T) {
	d := open(t, Config{Name: "p1"})
	pool := packet.NewPool(64)
	for i := 0; i < 40; i++ {
		d.Inject(frame(60, byte(i)))
	}
	var b packet.Batch
	b.Add(pool.Get())
	if n, _ := d.Recv(0, &b, pool); n != packet.BatchSize-1 {
		t.Fatalf("Recv = %d, want %d", n, packet.BatchSize-1)
	}
	netdev.FreeBatch(&b, pool)
	if n, _ := d.Recv(0, &b, pool); n != 40-(packet.BatchSize-1) {
		t.Fatalf("Recv = %d, want %d", n, 40-(packet.BatchSize-1))
	}
}

func TestFullQueueDropsAndCounts(t *testing.T) {
	d := open(t, Config{Name: "p1", QueueLen: 2})
	ok := []bool{d.Inject(frame(60, 1)), d.Inject(frame(60, 2)), d.Inject(frame(60, 3))}
	if !ok[0] || !ok[1] || ok[2] {
		t.Fatalf("inject results %v, want [true true false]", ok)
	}
	if s := d.Stats(); s.RxDropped != 1 {
		t.Fatalf("rx dropped %d, want 1", s.RxDropped)
	}
}

func TestSendCapturesFramesAndDropsOversize(t *testing.T) {
	d := open(t, Config{Name: "p1", MTU: 100, CaptureLen: 2})
	pool := packet.NewPool(8)
	var seen int
	d.OnTransmit(func(f []byte) { seen++ })
	var b packet.Batch
	for _, f := range [][]byte{frame(60, 1), frame(118, 2), frame(119, 3), frame(10, 4), frame(64, 5)} {
		p := pool.Get()
		p.SetData(f)
		b.Add(p)
	}
	free := pool.Free()
	if err := d.Send(0, &b, pool); err != nil {
		t.Fatal(err)
	}
	if b.N != 0 || pool.Free() != free+5 {
		t.Fatalf("after Send batch %d, pool free %d; want 0, %d", b.N, pool.Free(), free+5)
	}
	got := d.Captured()
	// CaptureLen 2 keeps the newest two of the three sent.
	if len(got) != 2 || !bytes.Equal(got[0], frame(118, 2)) || !bytes.Equal(got[1], frame(64, 5)) {
		t.Fatalf("captured %d frames: %x", len(got), got)
	}
	if len(d.Captured()) != 0 {
		t.Fatal("Captured did not drain")
	}
	want := netdev.Stats{TxPackets: 3, TxBytes: 60 + 118 + 64, TxDropped: 2}
	if s := d.Stats(); s != want || seen != 3 {
		t.Fatalf("stats %+v seen %d, want %+v seen 3", s, seen, want)
	}
}

func TestLinkDownDropsBothDirections(t *testing.T) {
	d := open(t, Config{Name: "p1", CaptureLen: 4})
	d.SetLinkState(netdev.LinkDown)
	if d.Inject(frame(60, 1)) {
		t.Fatal("inject on down link accepted")
	}
	pool := packet.NewPool(1)
	var b packet.Batch
	b.Add(pool.Get())
	d.Send(0, &b, pool)
	if s := d.Stats(); s.RxDropped != 1 || s.TxDropped != 1 || s.TxPackets != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestOnTransmitPatchesTwoPorts(t *testing.T) {
	a := open(t, Config{Name: "a"})
	z := open(t, Config{Name: "z"})
	a.OnTransmit(func(f []byte) { z.Inject(f) })
	pool := packet.NewPool(8)
	var b packet.Batch
	p := pool.Get()
	p.SetData(frame(70, 9))
	b.Add(p)
	a.Send(0, &b, pool)
	if n, _ := z.Recv(0, &b, pool); n != 1 || !bytes.Equal(b.Pkts[0].Data(), frame(70, 9)) {
		t.Fatalf("peer received %d", n)
	}
}

func TestPcapWriteThenReplayRoundTrip(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.pcap")
	d := open(t, Config{Name: "p1", Pcap: file})
	pool := packet.NewPool(8)
	d.Inject(frame(60, 1)) // rx: written when queued
	var b packet.Batch
	p := pool.Get()
	p.SetData(frame(80, 2))
	b.Add(p)
	d.Send(0, &b, pool) // tx
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopening appends without a second file header.
	d2 := open(t, Config{Name: "p1", TxPcap: file})
	p = pool.Get()
	p.SetData(frame(90, 3))
	b.Add(p)
	d2.Send(0, &b, pool)
	d2.Close()

	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := open(t, Config{Name: "replay"})
	n, err := r.ReplayPcap(f)
	if err != nil || n != 3 {
		t.Fatalf("replay = %d, %v; want 3", n, err)
	}
	r.Recv(0, &b, pool)
	want := [][]byte{frame(60, 1), frame(80, 2), frame(90, 3)}
	if b.N != 3 {
		t.Fatalf("received %d, want 3", b.N)
	}
	for i := range want {
		if !bytes.Equal(b.Pkts[i].Data(), want[i]) {
			t.Fatalf("frame %d = %x", i, b.Pkts[i].Data())
		}
	}
}

func TestRxFdIsReadableOnlyWhileQueueHoldsFrames(t *testing.T) {
	d := open(t, Config{Name: "p1"})
	pl, err := netdev.NewPoller()
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	if err := pl.Add(d, 0); err != nil {
		t.Fatal(err)
	}
	if r, _ := pl.Wait(0); len(r) != 0 {
		t.Fatalf("idle port ready: %v", r)
	}
	d.Inject(frame(60, 1))
	d.Inject(frame(60, 2))
	r, err := pl.Wait(time.Second)
	if err != nil || len(r) != 1 || r[0].Dev != netdev.Device(d) || r[0].Queue != 0 {
		t.Fatalf("Wait = %v, %v", r, err)
	}
	pool := packet.NewPool(8)
	var b packet.Batch
	d.Recv(0, &b, pool)
	if r, _ := pl.Wait(0); len(r) != 0 {
		t.Fatalf("drained port still ready: %v", r)
	}
	if err := pl.Remove(d, 0); err != nil {
		t.Fatal(err)
	}
}

func TestRecvAndSendDoNotAllocate(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	d := open(t, Config{Name: "p1", CaptureLen: 16})
	pool := packet.NewPool(64)
	f := frame(64, 1)
	var b packet.Batch
	cycle := func() {
		for i := 0; i < packet.BatchSize; i++ {
			d.Inject(f)
		}
		d.Recv(0, &b, pool)
		d.Send(0, &b, pool)
	}
	// The ring's slot buffers are allocated on first use; go round once.
	for i := 0; i < DefaultQueueLen/packet.BatchSize; i++ {
		cycle()
	}
	allocs := testing.AllocsPerRun(200, cycle)
	if allocs != 0 {
		t.Fatalf("inject+recv+send allocates %v per batch", allocs)
	}
}

func TestClosedPortRefusesIO(t *testing.T) {
	d := open(t, Config{Name: "p1"})
	d.Close()
	pool := packet.NewPool(1)
	var b packet.Batch
	if _, err := d.Recv(0, &b, pool); err == nil {
		t.Fatal("Recv on closed port succeeded")
	}
	if d.Inject(frame(60, 1)) {
		t.Fatal("Inject on closed port accepted")
	}
	b.Add(pool.Get())
	if err := d.Send(0, &b, pool); err == nil || b.N != 0 {
		t.Fatalf("Send on closed port: %v, batch %d", err, b.N)
	}
}

// BenchmarkDummy measures a full inject, receive, send cycle per 64-byte
// frame in batches of 32.
func BenchmarkDummy(b *testing.B) {
	d, _ := New(Config{Name: "bench"})
	defer d.Close()
	pool := packet.NewPool(64)
	f := frame(64, 1)
	var batch packet.Batch
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += packet.BatchSize {
		for j := 0; j < packet.BatchSize; j++ {
			d.Inject(f)
		}
		d.Recv(0, &batch, pool)
		d.Send(0, &batch, pool)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mpps")
}
