package afxdp

import (
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/internal/nstest"
)

const pkgName = "datapath/netdev/afxdp"

// requireXDP fails (under CI=true) or skips the test unless it runs as
// root with ip(8) and the kernel has AF_XDP sockets.
func requireXDP(t testing.TB) {
	t.Helper()
	nstest.Require(t, pkgName)
	fd, err := unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: AF_XDP sockets unavailable: %v", pkgName, err)
		}
		t.Skipf("%s: skipping, AF_XDP sockets unavailable: %v", pkgName, err)
	}
	unix.Close(fd)
}

func open(t testing.TB, cfg Config) *Device {
	t.Helper()
	d, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// udpFrame is an Ethernet/IPv4/UDP frame of 64 bytes with sequence
// number seq in its payload.
func udpFrame(seq int) []byte {
	f := make([]byte, 60)
	copy(f[0:], []byte{0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1})
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:]
	ip[0], ip[8], ip[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(ip[2:], 46)
	copy(ip[12:], []byte{10, 9, 0, 1, 10, 9, 0, 2})
	binary.BigEndian.PutUint16(f[34:], 1000)
	binary.BigEndian.PutUint16(f[36:], 2000)
	binary.BigEndian.PutUint16(f[38:], 26)
	binary.BigEndian.PutUint32(f[42:], uint32(seq))
	return f
}

// sendBatch sends frames on queue 0 in batches.
func sendBatch(d *Device, pool *packet.Pool, frames [][]byte) error {
	for len(frames) > 0 {
		var b packet.Batch
		for len(frames) > 0 && b.N < packet.BatchSize {
			p := pool.Get()
			p.SetData(frames[0])
			b.Add(p)
			frames = frames[1:]
		}
		if err := d.Send(0, &b, pool); err != nil {
			return err
		}
	}
	return nil
}

// recvUntil receives on queue 0 of d until want frames of ours (UDP to
// port 2000) arrived or the timeout passed, sleeping in a Poller.
func recvUntil(t testing.TB, d *Device, pool *packet.Pool, want int, timeout time.Duration) [][]byte {
	t.Helper()
	pl, err := netdev.NewPoller()
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	if err := pl.Add(d, 0); err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	deadline := time.Now().Add(timeout)
	for len(got) < want && time.Now().Before(deadline) {
		var b packet.Batch
		n, err := d.Recv(0, &b, pool)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range b.Slice() {
			if f := p.Data(); len(f) == 60 && binary.BigEndian.Uint16(f[36:]) == 2000 {
				got = append(got, append([]byte(nil), f...))
			}
		}
		netdev.FreeBatch(&b, pool)
		if n == 0 {
			pl.Wait(50 * time.Millisecond)
		}
	}
	return got
}

// xdpAttached reports what ip(8) says is attached to link: "xdp",
// "xdpgeneric" or "".
func xdpAttached(t testing.TB, link string) string {
	out := nstest.Run(t, "ip", "link", "show", link)
	for _, f := range strings.Fields(out) {
		if f == "xdp" || f == "xdpgeneric" || f == "xdpdrv" {
			return f
		}
	}
	return ""
}

// TestFramesCrossAVethBetweenTwoAFXDPPorts: with both ends of a veth
// opened as AF_XDP ports, 200 UDP frames sent on one arrive on the other
// exactly, in order and intact, in each mode; the counters say so; the
// program is attached in the mode asked and gone after Close.
func TestFramesCrossAVethBetweenTwoAFXDPPorts(t *testing.T) {
	requireXDP(t)
	for _, tc := range []struct {
		mode   Mode
		inUse  Mode
		ipSays string
	}{
		{ModeBestEffort, ModeNative, "xdp"},
		{ModeNative, ModeNative, "xdp"},
		{ModeGeneric, ModeGeneric, "xdpgeneric"},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			a, b := nstest.Veth(t)
			pool := packet.NewPool(256)
			da := open(t, Config{Name: a, Mode: tc.mode, NeedWakeup: true})
			db := open(t, Config{Name: b, Mode: tc.mode, NeedWakeup: true})
			if da.ModeInUse() != tc.inUse || db.ModeInUse() != tc.inUse {
				t.Fatalf("mode in use %s/%s, want %s", da.ModeInUse(), db.ModeInUse(), tc.inUse)
			}
			if got := xdpAttached(t, a); got != tc.ipSays {
				t.Fatalf("ip link show %s: %q attached, want %q", a, got, tc.ipSays)
			}
			var frames [][]byte
			for i := range 200 {
				frames = append(frames, udpFrame(i))
			}
			sent := make(chan error, 1)
			go func() {
				// In batches with pauses, so the rings never overflow.
				txPool := packet.NewPool(64)
				for i := 0; i < len(frames); i += 40 {
					if err := sendBatch(da, txPool, frames[i:i+40]); err != nil {
						sent <- err
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
				sent <- nil
			}()
			got := recvUntil(t, db, pool, 200, 10*time.Second)
			if err := <-sent; err != nil {
				t.Fatal(err)
			}
			if len(got) != 200 {
				t.Fatalf("received %d frames, want 200", len(got))
			}
			for i, f := range got {
				if string(f) != string(frames[i]) {
					t.Fatalf("frame %d: got % x, want % x", i, f, frames[i])
				}
			}
			if st := da.Stats(); st.TxPackets != 200 || st.TxBytes != 200*60 || st.TxDropped != 0 {
				t.Errorf("sender stats %+v", st)
			}
			if st := db.Stats(); st.RxPackets < 200 {
				t.Errorf("receiver stats %+v", st)
			}
			if want := "n_rxq=1, use-need-wakeup=true, xdp-mode=" + tc.mode.String() + ", xdp-mode-in-use=" + tc.inUse.String(); da.ConfigText() != want {
				t.Errorf("ConfigText %q, want %q", da.ConfigText(), want)
			}
			da.Close()
			db.Close()
			if got := xdpAttached(t, a) + xdpAttached(t, b); got != "" {
				t.Errorf("after Close: %q still attached", got)
			}
		})
	}
}

// TestTwoQueuesEachGetTheirOwnSocket: on a veth with two queues, n_rxq=2
// binds a socket to each; a frame sent on queue q of one end arrives on
// queue q of the other (a veth keeps the queue across), counted per
// queue; a third queue, which the veth does not have, is refused.
func TestTwoQueuesEachGetTheirOwnSocket(t *testing.T) {
	requireXDP(t)
	s := nstest.Suffix()
	a, c := "gvxa"+s, "gvxb"+s
	nstest.Run(t, "ip", "link", "add", a, "numtxqueues", "2", "numrxqueues", "2", "type", "veth", "peer", "name", c, "numtxqueues", "2", "numrxqueues", "2")
	nstest.DeleteLinkAtCleanup(t, a)
	nstest.Run(t, "ip", "link", "set", a, "up")
	nstest.Run(t, "ip", "link", "set", c, "up")
	if _, err := Open(Config{Name: a, RxQueues: 3, Mode: ModeNative}); !errors.Is(err, unix.EINVAL) {
		t.Fatalf("3 queues on a 2-queue veth: %v, want EINVAL", err)
	}
	tx := open(t, Config{Name: a, RxQueues: 2, Mode: ModeNative, NeedWakeup: true})
	rx := open(t, Config{Name: c, RxQueues: 2, Mode: ModeNative, NeedWakeup: true})
	if tx.NumRxQueues() != 2 || !strings.HasPrefix(tx.ConfigText(), "n_rxq=2,") {
		t.Fatalf("%d queues, config %q", tx.NumRxQueues(), tx.ConfigText())
	}
	pool := packet.NewPool(256)
	for q := range 2 {
		var b packet.Batch
		for i := range 20 {
			p := pool.Get()
			p.SetData(udpFrame(q*100 + i))
			b.Add(p)
		}
		if err := tx.Send(q, &b, pool); err != nil {
			t.Fatal(err)
		}
	}
	for q := range 2 {
		got := 0
		for end := time.Now().Add(5 * time.Second); got < 20 && time.Now().Before(end); {
			var b packet.Batch
			rx.Recv(q, &b, pool)
			for _, p := range b.Slice() {
				if f := p.Data(); len(f) == 60 && binary.BigEndian.Uint16(f[36:]) == 2000 {
					if seq := int(binary.BigEndian.Uint32(f[42:])); seq/100 != q {
						t.Errorf("queue %d: frame %d sent on queue %d", q, seq, seq/100)
					}
					got++
				}
			}
			netdev.FreeBatch(&b, pool)
			time.Sleep(time.Millisecond)
		}
		if got != 20 {
			t.Errorf("queue %d: %d frames, want 20", q, got)
		}
	}
}

// TestZeroCopyOnVethIsRefused: a veth has no zero-copy AF_XDP, so
// native-with-zerocopy fails with EOPNOTSUPP and leaves nothing attached.
func TestZeroCopyOnVethIsRefused(t *testing.T) {
	requireXDP(t)
	a, _ := nstest.Veth(t)
	var failed []string
	_, err := Open(Config{Name: a, Mode: ModeNativeZC, Failed: func(m Mode, q int, err error) {
		failed = append(failed, m.String())
	}})
	if !errors.Is(err, unix.EOPNOTSUPP) {
		t.Fatalf("Open: %v, want EOPNOTSUPP", err)
	}
	if strings.Join(failed, ",") != "native-with-zerocopy" {
		t.Errorf("failed modes %v", failed)
	}
	if got := xdpAttached(t, a); got != "" {
		t.Errorf("%q attached after a failed open", got)
	}
}

// TestOpenNoSuchDevice: a missing interface is ENODEV.
func TestOpenNoSuchDevice(t *testing.T) {
	if _, err := Open(Config{Name: "gvs-nosuch0"}); !errors.Is(err, unix.ENODEV) {
		t.Fatalf("Open: %v, want ENODEV", err)
	}
}

// TestParseModeIgnoresCase: xdp-mode names as Open vSwitch reads them.
func TestParseModeIgnoresCase(t *testing.T) {
	for s, want := range map[string]Mode{"best-effort": ModeBestEffort, "Native": ModeNative, "GENERIC": ModeGeneric, "native-with-zerocopy": ModeNativeZC} {
		if m, ok := ParseMode(s); !ok || m != want {
			t.Errorf("ParseMode(%q) = %v, %v", s, m, ok)
		}
	}
	if _, ok := ParseMode("bogus"); ok {
		t.Error("ParseMode(bogus) ok")
	}
}

// BenchmarkAFXDPVethPair sends a batch of 32 64-byte frames on one end
// of a veth and receives them on the other, both AF_XDP ports in native
// mode: -benchmem shows the hot path allocates nothing.
func BenchmarkAFXDPVethPair(b *testing.B) {
	requireXDP(b)
	a, c := nstest.Veth(b)
	tx := open(b, Config{Name: a, Mode: ModeNative, NeedWakeup: true})
	rx := open(b, Config{Name: c, Mode: ModeNative, NeedWakeup: true})
	pool := packet.NewPool(256)
	frame := udpFrame(1)
	var sb, rb packet.Batch
	b.ReportAllocs()
	b.ResetTimer()
	lost := 0
	for i := 0; i < b.N; i++ {
		for sb.N < packet.BatchSize {
			p := pool.Get()
			p.SetData(frame)
			sb.Add(p)
		}
		if err := tx.Send(0, &sb, pool); err != nil {
			b.Fatal(err)
		}
		got := 0
		for spins := 0; got < packet.BatchSize && spins < 100000; spins++ {
			n, _ := rx.Recv(0, &rb, pool)
			got += n
			netdev.FreeBatch(&rb, pool)
		}
		lost += packet.BatchSize - got
	}
	b.StopTimer()
	b.ReportMetric(float64(lost)/float64(b.N*packet.BatchSize), "lost/pkt")
}
