package afpacket

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/packet"
)

// dupHandoff duplicates h's descriptors, as SCM_RIGHTS does for the
// process that receives them.
func dupHandoff(t *testing.T, h netdev.Handoff) netdev.Handoff {
	t.Helper()
	fds := make([]int, len(h.Fds))
	for i, fd := range h.Fds {
		n, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		fds[i] = n
	}
	h.Fds = fds
	return h
}

// arpTargets sends one ARP request per sender address 10.201.7.10+i for
// the peer, whose replies are told apart by their target address.
func arpTargets(t *testing.T, d *Device, pool *packet.Pool, p *peerNS, from, n int) {
	t.Helper()
	var frames [][]byte
	for i := from; i < from+n; i++ {
		frames = append(frames, arpRequest(d.MAC(), net.IPv4(10, 201, 7, byte(10+i)).To4(), p.peerIP))
	}
	send(t, d, pool, frames...)
}

func replyTarget(t *testing.T, f []byte) int {
	t.Helper()
	if len(f) < 42 || binary.BigEndian.Uint16(f[12:]) != 0x0806 || binary.BigEndian.Uint16(f[20:]) != 2 {
		t.Fatalf("not an ARP reply: %x", f)
	}
	return int(f[41]) - 10
}

// A port handed to a new owner in the middle of a ring block goes on
// from the next frame: the frames the old owner had not taken and those
// that arrived while nobody received are all delivered, once, in order,
// and the counters go on from the old owner's.
func TestHandedOverPortContinuesWhereTheOldOwnerStopped(t *testing.T) {
	p := setupPeer(t)
	old, err := Open(Config{Name: p.root})
	if err != nil {
		t.Fatal(err)
	}
	pool := packet.NewPool(128)
	arpTargets(t, old, pool, p, 0, 4)
	time.Sleep(100 * time.Millisecond) // the four replies are in the ring
	// A nearly full batch makes the old owner take one frame only.
	var b packet.Batch
	for b.N < packet.BatchSize-1 {
		b.Add(pool.Get())
	}
	if n, err := old.Recv(0, &b, pool); err != nil || n != 1 {
		t.Fatalf("old owner received %d frames, %v; want 1", n, err)
	}
	var order []int
	order = append(order, replyTarget(t, b.Pkts[b.N-1].Data()))
	netdev.FreeBatch(&b, pool)

	h, err := old.Handoff()
	if err != nil {
		t.Fatal(err)
	}
	if h.Stats.RxPackets != 1 || h.Stats.TxPackets != 4 {
		t.Fatalf("handed counters %+v", h.Stats)
	}
	taken := dupHandoff(t, h)
	arpTargets(t, old, pool, p, 4, 4) // answered while nobody receives
	time.Sleep(100 * time.Millisecond)
	if err := old.Close(); err != nil { // the old owner exits
		t.Fatal(err)
	}
	d, err := Adopt(p.root, taken)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, f := range recvUntil(t, d, pool, 7, 3*time.Second) {
		order = append(order, replyTarget(t, f))
	}
	want := []int{0, 1, 2, 3, 4, 5, 6, 7}
	if len(order) != len(want) {
		t.Fatalf("replies received in order %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("replies received in order %v, want %v", order, want)
		}
	}
	// The new owner sends on the handed tx socket too.
	arpTargets(t, d, pool, p, 8, 1)
	if got := recvUntil(t, d, pool, 1, 3*time.Second); len(got) != 1 || replyTarget(t, got[0]) != 8 {
		t.Fatalf("after sending on the adopted port: %d replies", len(got))
	}
	s := d.Stats()
	// Sent: 4 before the handoff and 1 since; the 4 the old owner sent
	// after handing off are its own (a quiet port sends none).
	if s.RxPackets != 9 || s.TxPackets != 5 {
		t.Fatalf("counters %+v, want 9 received and 5 sent", s)
	}
}

// What does not check out is refused before anything is used, and the
// descriptors stay the caller's.
func TestAdoptRefusesStateThatFailsItsChecks(t *testing.T) {
	p := setupPeer(t)
	d := open(t, Config{Name: p.root})
	h, err := d.Handoff()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	with := func(f func(h *netdev.Handoff)) netdev.Handoff {
		c := h
		c.Fds = append([]int(nil), h.Fds...)
		c.State = append([]byte(nil), h.State...)
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name string
		h    netdev.Handoff
		want string
	}{
		{"other port", with(func(h *netdev.Handoff) { h.Name = "eth9" }), `handed a system port "eth9"`},
		{"newer format", with(func(h *netdev.Handoff) { h.State[0] = 2 }), "state version 2, this build reads 1"},
		{"missing descriptor", with(func(h *netdev.Handoff) { h.Fds = h.Fds[:1] }), "1 queues, 23 bytes of state and 1 descriptors do not agree"},
		{"block outside the ring", with(func(h *netdev.Handoff) { binary.BigEndian.PutUint32(h.State[3+8:], DefaultNumBlocks) }),
			fmt.Sprintf("rx queue 0: current block %d of %d", DefaultNumBlocks, DefaultNumBlocks)},
		{"pipe for a socket", with(func(h *netdev.Handoff) { h.Fds[0] = int(r.Fd()) }), "is not a socket"},
		{"tx socket as rx", with(func(h *netdev.Handoff) { h.Fds[0] = h.Fds[1] }), "rx queue 0: socket uses TPACKET version 1, not V3"},
		{"wrong ring size", with(func(h *netdev.Handoff) { binary.BigEndian.PutUint32(h.State[3+4:], 16) }), "mapping a ring of 16 blocks"},
	} {
		_, err := Adopt(p.root, tc.h)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	// The handing device still works: nothing was closed.
	pool := packet.NewPool(8)
	arpTargets(t, d, pool, p, 0, 1)
	if got := recvUntil(t, d, pool, 1, 3*time.Second); len(got) != 1 {
		t.Fatalf("after refused adoptions the port received %d replies", len(got))
	}
}

func FuzzDecodeHandoffState(f *testing.F) {
	st := []byte{1, 0, 1}
	for _, v := range []uint32{DefaultBlockSize, DefaultNumBlocks, 3, 48, 2} {
		st = binary.BigEndian.AppendUint32(st, v)
	}
	f.Add(st, 2)
	f.Add([]byte{1, 0, 0}, 0)
	f.Add([]byte{2}, 2)
	f.Fuzz(func(t *testing.T, st []byte, nfds int) {
		qs, err := decodeState(st, nfds)
		if err != nil {
			return
		}
		for _, q := range qs {
			if q.cur >= q.numBlocks || (q.left > 0 && q.off+pktHdrLen > q.blockSize) {
				t.Fatalf("accepted a position outside the ring: %+v", q)
			}
		}
	})
}
