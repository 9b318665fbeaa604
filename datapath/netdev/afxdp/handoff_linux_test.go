package afxdp

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/internal/nstest"
)

// dupHandoff is h with duplicated descriptors, as another process
// receives them.
func dupHandoff(t *testing.T, h netdev.Handoff) netdev.Handoff {
	t.Helper()
	out := h
	out.Fds = nil
	for _, fd := range h.Fds {
		n, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		out.Fds = append(out.Fds, n)
	}
	return out
}

// recvSeqs receives on queue 0 until want of our frames arrived (or 5 s)
// and returns their sequence numbers.
func recvSeqs(d *Device, pool *packet.Pool, want int) []int {
	var got []int
	for end := time.Now().Add(5 * time.Second); len(got) < want && time.Now().Before(end); {
		var b packet.Batch
		d.Recv(0, &b, pool)
		for _, p := range b.Slice() {
			if f := p.Data(); len(f) == 60 && binary.BigEndian.Uint16(f[36:]) == 2000 {
				got = append(got, int(binary.BigEndian.Uint32(f[42:])))
			}
		}
		netdev.FreeBatch(&b, pool)
		if b.N == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	return got
}

// TestHandedPortsGoOnWhereTheyStopped: both ends of a veth are AF_XDP
// ports; 100 frames are sent and 32 received, then both ports are
// handed over (descriptors duplicated as another process receives them)
// and adopted: the adopted receiver delivers the 68 frames waiting in
// its ring, in order, the adopted sender's 50 more frames arrive, the
// program stays attached throughout, and the counters carry over.
func TestHandedPortsGoOnWhereTheyStopped(t *testing.T) {
	requireXDP(t)
	a, c := nstest.Veth(t)
	pool := packet.NewPool(256)
	tx := open(t, Config{Name: a, Mode: ModeNative, NeedWakeup: true})
	rx := open(t, Config{Name: c, Mode: ModeGeneric})
	var frames [][]byte
	for i := range 150 {
		frames = append(frames, udpFrame(i))
	}
	if err := sendBatch(tx, pool, frames[:100]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	var b packet.Batch
	if n, _ := rx.Recv(0, &b, pool); n != 32 {
		t.Fatalf("first Recv: %d frames, want 32", n)
	}
	netdev.FreeBatch(&b, pool)

	var adopted [2]*Device
	for i, d := range []*Device{tx, rx} {
		h, err := d.Handoff()
		if err != nil {
			t.Fatal(err)
		}
		nd, err := Adopt(d.Name(), dupHandoff(t, h))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nd.Close() })
		adopted[i] = nd
		// The old process exits without closing; here its descriptors
		// and mappings are simply released.
		d.Close()
	}
	ntx, nrx := adopted[0], adopted[1]
	if got := xdpAttached(t, a) + "/" + xdpAttached(t, c); got != "xdp/xdpgeneric" {
		t.Fatalf("attached after the handover: %s", got)
	}
	if want := "n_rxq=1, use-need-wakeup=false, xdp-mode=generic, xdp-mode-in-use=generic"; nrx.ConfigText() != want {
		t.Errorf("adopted ConfigText %q, want %q", nrx.ConfigText(), want)
	}
	got := recvSeqs(nrx, pool, 68)
	if err := sendBatch(ntx, pool, frames[100:]); err != nil {
		t.Fatal(err)
	}
	got = append(got, recvSeqs(nrx, pool, 50)...)
	if len(got) != 118 {
		t.Fatalf("after the handover: %d frames, want 118: %v", len(got), got)
	}
	for i, s := range got {
		if s != 32+i {
			t.Fatalf("frame %d after the handover is %d, want %d", i, s, 32+i)
		}
	}
	if st := ntx.Stats(); st.TxPackets != 150 {
		t.Errorf("adopted sender's tx_packets %d, want 150", st.TxPackets)
	}
}

// TestAdoptRefusesWhatItWasNotHanded: a wrong type or name, a state of
// another version, descriptors that are not what the state says.
func TestAdoptRefusesWhatItWasNotHanded(t *testing.T) {
	requireXDP(t)
	a, c := nstest.Veth(t)
	d := open(t, Config{Name: a, Mode: ModeGeneric})
	h, err := d.Handoff()
	if err != nil {
		t.Fatal(err)
	}
	bad := func(what string, mod func(*netdev.Handoff), name, want string) {
		t.Helper()
		x := h
		x.Fds = append([]int(nil), h.Fds...)
		x.State = append([]byte(nil), h.State...)
		mod(&x)
		if _, err := Adopt(name, x); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", what, err, want)
		}
	}
	bad("type", func(x *netdev.Handoff) { x.Type = netdev.TypeSystem }, a, "handed a system port")
	bad("name", func(x *netdev.Handoff) {}, c, "handed a afxdp port")
	bad("version", func(x *netdev.Handoff) { x.State[0] = 9 }, a, "state version 9")
	bad("queues", func(x *netdev.Handoff) { x.State[1] = 2 }, a, "2 queues and 7 descriptors")
	bad("swapped", func(x *netdev.Handoff) { x.Fds[0], x.Fds[2] = x.Fds[2], x.Fds[0] }, a, "rx socket")
	bad("link", func(x *netdev.Handoff) { x.Fds[5], x.Fds[3] = x.Fds[3], x.Fds[5] }, a, "BPF link")
}
