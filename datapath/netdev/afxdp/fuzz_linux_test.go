package afxdp

import (
	"encoding/binary"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/packet"
)

// fakeRing lays out a ring in Go memory as the kernel maps it:
// producer, consumer, flags, then n entries of es bytes.
func fakeRing(r *ring, n, es int) {
	r.mem = make([]byte, 64+n*es)
	r.prod = (*uint32)(unsafe.Pointer(&r.mem[0]))
	r.cons = (*uint32)(unsafe.Pointer(&r.mem[4]))
	r.flags = (*uint32)(unsafe.Pointer(&r.mem[8]))
	r.desc = unsafe.Pointer(&r.mem[64])
	r.mask = uint32(n - 1)
}

// fakeXSK is a socket without a kernel: Go memory for its UMEM and rings.
func fakeXSK() *xsk {
	x := &xsk{fd: -1, txFD: -1, umem: make([]byte, numFrames*frameSize)}
	fakeRing(&x.fill, rxRingSize, addrSize)
	fakeRing(&x.rx, rxRingSize, descSize)
	fakeRing(&x.tx, txRingSize, descSize)
	fakeRing(&x.comp, txRingSize, addrSize)
	return x
}

// FuzzRecvDescriptors feeds recv rx descriptors as a kernel (or a
// corrupted ring) might write them, 12 bytes each (address, length):
// it never panics, never delivers a frame outside the UMEM, and gives
// every descriptor's frame back on the fill ring.
func FuzzRecvDescriptors(f *testing.F) {
	seed := func(descs ...[2]uint64) []byte {
		var b []byte
		for _, d := range descs {
			b = binary.LittleEndian.AppendUint64(b, d[0])
			b = binary.LittleEndian.AppendUint32(b, uint32(d[1]))
		}
		return b
	}
	f.Add(seed([2]uint64{256, 60}))
	f.Add(seed([2]uint64{4096 + 256, 1514}, [2]uint64{8192 + 256, 64}))
	f.Add(seed([2]uint64{numFrames*frameSize - 10, 60}))        // runs off the UMEM
	f.Add(seed([2]uint64{1 << 63, 1 << 31}, [2]uint64{256, 0})) // absurd
	f.Add(seed([2]uint64{256, 4000}, [2]uint64{256, 13}))       // too big for a packet, too short
	x := fakeXSK()
	pool := packet.NewPool(64)
	f.Fuzz(func(t *testing.T, data []byte) {
		n := min(len(data)/12, packet.BatchSize)
		start := x.rx.cur
		for i := range n {
			d := x.rx.descAt(start + uint32(i))
			d.addr = binary.LittleEndian.Uint64(data[i*12:])
			d.len = binary.LittleEndian.Uint32(data[i*12+8:])
		}
		atomic.StoreUint32(x.rx.prod, start+uint32(n))
		fillBefore := x.fill.cur
		var b packet.Batch
		var r netdev.RxBatch
		x.recv(&b, pool, &r)
		if r.Pkts+r.Dropped+r.Errors != n || b.N != r.Pkts {
			t.Fatalf("%d descriptors: %+v, batch %d", n, r, b.N)
		}
		if x.fill.cur-fillBefore != uint32(n) || x.rx.cur-start != uint32(n) {
			t.Fatalf("fill ring advanced %d, rx ring %d, want %d", x.fill.cur-fillBefore, x.rx.cur-start, n)
		}
		for i := range n {
			if a := *x.fill.addr(fillBefore + uint32(i)); a%frameSize != 0 {
				t.Fatalf("fill address %#x not a frame start", a)
			}
		}
		netdev.FreeBatch(&b, pool)
	})
}

// FuzzDecodeHandoffState: a handed state from another process (of
// another build, or corrupted) is refused or decoded into a state whose
// numbers Adopt can use: queues within MaxQueues matching the
// descriptors, known modes, a concrete mode in use.
func FuzzDecodeHandoffState(f *testing.F) {
	f.Add([]byte{handoffVersion, 1, byte(ModeBestEffort), byte(ModeNative), 1}, 7)
	f.Add([]byte{handoffVersion, 2, byte(ModeGeneric), byte(ModeGeneric), 0}, 10)
	f.Add([]byte{2, 1, 0, 2, 1}, 7)
	f.Add([]byte{handoffVersion, 17, 0, 2, 1}, 55)
	f.Add([]byte{handoffVersion, 1, 0, 0, 1}, 7)
	f.Fuzz(func(t *testing.T, st []byte, nfds int) {
		hs, err := decodeState(st, nfds)
		if err != nil {
			return
		}
		if hs.queues < 1 || hs.queues > MaxQueues || nfds != hs.queues*fdsPerQueue+fdsPerDevice ||
			int(hs.mode) >= len(modeNames) || hs.inUse == ModeBestEffort || int(hs.inUse) >= len(modeNames) {
			t.Fatalf("%v, %d descriptors: accepted %+v", st, nfds, hs)
		}
	})
}
