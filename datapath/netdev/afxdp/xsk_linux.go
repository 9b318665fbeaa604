package afxdp

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/packet"
)

// Ring and UMEM geometry, per socket.
const (
	frameSize  = 4096 // one UMEM chunk (aligned mode)
	frameShift = 12
	rxRingSize = 2048 // rx and fill rings; the rx frames
	txRingSize = 1024 // tx and completion rings; the tx frames
	numFrames  = rxRingSize + txRingSize
	descSize   = 16 // struct xdp_desc
	addrSize   = 8  // a fill or completion entry
)

// ring is one of a socket's four mapped rings. Producer and consumer
// are free-running u32 indices shared with the kernel; the side this
// process drives is cached in cur, the other is read atomically.
type ring struct {
	mem   []byte
	prod  *uint32
	cons  *uint32
	flags *uint32
	desc  unsafe.Pointer
	mask  uint32
	cur   uint32 // our index: producer for fill/tx, consumer for rx/completion
	_     [32]byte
}

// xsk is one AF_XDP socket with its UMEM and rings, and a second one
// sharing them for transmit: an rx queue and a tx queue of the port.
type xsk struct {
	fd     int
	txFD   int
	umemFD int
	umem   []byte
	fill   ring
	rx     ring
	needWk bool

	// Transmit side, under mu: Send may be called from many workers.
	mu    sync.Mutex
	tx    ring
	comp  ring
	free  [txRingSize]uint64 // free tx frame addresses
	nfree int
	// kicks counts sendto calls that failed with other than a busy
	// ring (reported as tx errors).
	_ [64]byte
}

func getMmapOffsets(fd int) (*unix.XDPMmapOffsets, error) {
	var off unix.XDPMmapOffsets
	l := uint32(unsafe.Sizeof(off))
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_XDP, unix.XDP_MMAP_OFFSETS, uintptr(unsafe.Pointer(&off)), uintptr(unsafe.Pointer(&l)), 0)
	if e != 0 {
		return nil, e
	}
	return &off, nil
}

func setUmemReg(fd int, reg *unix.XDPUmemReg) error {
	_, _, e := unix.Syscall6(unix.SYS_SETSOCKOPT, uintptr(fd), unix.SOL_XDP, unix.XDP_UMEM_REG, uintptr(unsafe.Pointer(reg)), unsafe.Sizeof(*reg), 0)
	if e != 0 {
		return e
	}
	return nil
}

// mapUmem maps the UMEM's memfd.
func mapUmem(fd int) ([]byte, error) {
	return unix.Mmap(fd, 0, numFrames*frameSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
}

// mapRing maps a ring of n entries of size es at page offset pgoff.
func mapRing(r *ring, fd int, off *unix.XDPRingOffset, n, es int, pgoff int64) error {
	mem, err := unix.Mmap(fd, pgoff, int(off.Desc)+n*es, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return err
	}
	r.mem = mem
	r.prod = (*uint32)(unsafe.Pointer(&mem[off.Producer]))
	r.cons = (*uint32)(unsafe.Pointer(&mem[off.Consumer]))
	r.flags = (*uint32)(unsafe.Pointer(&mem[off.Flags]))
	r.desc = unsafe.Pointer(&mem[off.Desc])
	r.mask = uint32(n - 1)
	return nil
}

// openXSK creates a socket with its UMEM and rings and binds it to queue
// q of interface ifindex with bindFlags (XDP_COPY or XDP_ZEROCOPY, and
// XDP_USE_NEED_WAKEUP).
func openXSK(ifindex, q int, bindFlags uint16) (*xsk, error) {
	fd, err := unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket(AF_XDP): %w", err)
	}
	x := &xsk{fd: fd, txFD: -1, umemFD: -1, needWk: bindFlags&unix.XDP_USE_NEED_WAKEUP != 0}
	fail := func(what string, err error) (*xsk, error) {
		x.close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	// The UMEM is a memfd's pages, so that a successor process can map
	// the same frames (Handoff).
	if x.umemFD, err = unix.MemfdCreate("gvs-afxdp-umem", unix.MFD_CLOEXEC); err != nil {
		return fail("memfd for the UMEM", err)
	}
	if err := unix.Ftruncate(x.umemFD, numFrames*frameSize); err != nil {
		return fail("sizing the UMEM", err)
	}
	if x.umem, err = mapUmem(x.umemFD); err != nil {
		return fail("mmap UMEM", err)
	}
	reg := unix.XDPUmemReg{Addr: uint64(uintptr(unsafe.Pointer(&x.umem[0]))), Len: uint64(len(x.umem)), Size: frameSize}
	if err := setUmemReg(fd, &reg); err != nil {
		return fail("XDP_UMEM_REG", err)
	}
	for _, s := range []struct {
		opt, n int
	}{{unix.XDP_UMEM_FILL_RING, rxRingSize}, {unix.XDP_UMEM_COMPLETION_RING, txRingSize}, {unix.XDP_RX_RING, rxRingSize}} {
		if err := unix.SetsockoptInt(fd, unix.SOL_XDP, s.opt, s.n); err != nil {
			return fail("ring size", err)
		}
	}
	if err := x.mapRxRings(); err != nil {
		return fail("mmap", err)
	}
	// Frames [0, rxRingSize) go to the fill ring, the rest are for tx.
	for i := uint32(0); i < rxRingSize; i++ {
		*x.fill.addr(i) = uint64(i) << frameShift
	}
	x.fill.cur = rxRingSize
	atomic.StoreUint32(x.fill.prod, x.fill.cur)
	for i := 0; i < txRingSize; i++ {
		x.free[i] = uint64(rxRingSize+i) << frameShift
	}
	x.nfree = txRingSize
	// A socket closed just before (a mode best-effort gave up on, a
	// port re-added) releases its queue from a kernel work item, so the
	// queue may stay busy for a moment.
	sa := &unix.SockaddrXDP{Flags: bindFlags, Ifindex: uint32(ifindex), QueueID: uint32(q)}
	for try := 0; ; try++ {
		err = unix.Bind(fd, sa)
		if err != unix.EBUSY || try == 50 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		return fail("bind", err)
	}
	// Transmit goes through a second socket on the same queue and UMEM
	// (XDP_SHARED_UMEM: it shares the fill and completion rings) with
	// only a tx ring. The kernel wakes a socket's waiters each time it
	// frees a transmitted frame; nobody waits on this one, whereas the
	// first is in the worker's epoll set. With one socket those wake-ups
	// (spinlocks under sock_wfree) took 12 % of the switch core's
	// samples in a perf profile of dpbench's output pipeline, 4 % with
	// two.
	if x.txFD, err = unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0); err != nil {
		return fail("tx socket", err)
	}
	if err := unix.SetsockoptInt(x.txFD, unix.SOL_XDP, unix.XDP_TX_RING, txRingSize); err != nil {
		return fail("tx ring size", err)
	}
	if err := x.mapTxRing(); err != nil {
		return fail("mmap", err)
	}
	if err := unix.Bind(x.txFD, &unix.SockaddrXDP{Flags: unix.XDP_SHARED_UMEM, Ifindex: uint32(ifindex), QueueID: uint32(q), SharedUmemFD: uint32(fd)}); err != nil {
		return fail("bind tx socket", err)
	}
	return x, nil
}

// mapRxRings maps the fill, completion and rx rings of the first socket.
func (x *xsk) mapRxRings() error {
	off, err := getMmapOffsets(x.fd)
	if err != nil {
		return fmt.Errorf("XDP_MMAP_OFFSETS: %w", err)
	}
	if err := mapRing(&x.fill, x.fd, &off.Fr, rxRingSize, addrSize, unix.XDP_UMEM_PGOFF_FILL_RING); err != nil {
		return fmt.Errorf("fill ring: %w", err)
	}
	if err := mapRing(&x.comp, x.fd, &off.Cr, txRingSize, addrSize, unix.XDP_UMEM_PGOFF_COMPLETION_RING); err != nil {
		return fmt.Errorf("completion ring: %w", err)
	}
	if err := mapRing(&x.rx, x.fd, &off.Rx, rxRingSize, descSize, unix.XDP_PGOFF_RX_RING); err != nil {
		return fmt.Errorf("rx ring: %w", err)
	}
	return nil
}

// mapTxRing maps the tx ring of the second socket.
func (x *xsk) mapTxRing() error {
	off, err := getMmapOffsets(x.txFD)
	if err != nil {
		return fmt.Errorf("tx XDP_MMAP_OFFSETS: %w", err)
	}
	if err := mapRing(&x.tx, x.txFD, &off.Tx, txRingSize, descSize, unix.XDP_PGOFF_TX_RING); err != nil {
		return fmt.Errorf("tx ring: %w", err)
	}
	return nil
}

func (x *xsk) close() error {
	var err error
	for _, r := range []*ring{&x.fill, &x.comp, &x.rx, &x.tx} {
		if r.mem != nil {
			if e := unix.Munmap(r.mem); e != nil && err == nil {
				err = e
			}
			r.mem = nil
		}
	}
	for _, fd := range []*int{&x.txFD, &x.fd} {
		if *fd >= 0 {
			if e := unix.Close(*fd); e != nil && err == nil {
				err = e
			}
			*fd = -1
		}
	}
	// The UMEM is unmapped after the socket is closed: the kernel
	// unpins it only then.
	if x.umem != nil {
		if e := unix.Munmap(x.umem); e != nil && err == nil {
			err = e
		}
		x.umem = nil
	}
	if x.umemFD >= 0 {
		if e := unix.Close(x.umemFD); e != nil && err == nil {
			err = e
		}
		x.umemFD = -1
	}
	return err
}

// addr is entry i of a fill or completion ring.
func (r *ring) addr(i uint32) *uint64 {
	return (*uint64)(unsafe.Add(r.desc, uintptr(i&r.mask)*addrSize))
}

// xdpDesc is struct xdp_desc.
type xdpDesc struct {
	addr    uint64
	len     uint32
	options uint32
}

// descAt is entry i of an rx or tx ring.
func (r *ring) descAt(i uint32) *xdpDesc {
	return (*xdpDesc)(unsafe.Add(r.desc, uintptr(i&r.mask)*descSize))
}

// frame returns the UMEM bytes of a descriptor, nil if it is out of range.
func (x *xsk) frame(addr uint64, n uint32) []byte {
	end := addr + uint64(n)
	if end > uint64(len(x.umem)) || end < addr {
		return nil
	}
	return x.umem[addr:end:end]
}

// recv copies up to the batch's free slots of frames from the rx ring and
// gives their frames back on the fill ring.
func (x *xsk) recv(b *packet.Batch, pool *packet.Pool, r *netdev.RxBatch) {
	avail := atomic.LoadUint32(x.rx.prod) - x.rx.cur
	if avail == 0 {
		if x.needWk && atomic.LoadUint32(x.fill.flags)&unix.XDP_RING_NEED_WAKEUP != 0 {
			unix.Syscall6(unix.SYS_RECVFROM, uintptr(x.fd), 0, 0, unix.MSG_DONTWAIT, 0, 0)
		}
		return
	}
	n := min(avail, uint32(packet.BatchSize-b.N))
	// Every rx frame is in the fill ring or the rx ring, so the fill
	// ring has room for those taken out of the rx ring.
	for i := uint32(0); i < n; i++ {
		d := x.rx.descAt(x.rx.cur + i)
		data := x.frame(d.addr, d.len)
		*x.fill.addr(x.fill.cur + i) = d.addr &^ (frameSize - 1)
		switch {
		case data == nil || len(data) < 14:
			r.Errors++
			continue
		}
		p := pool.Get()
		buf := p.RecvBuffer()
		if len(data) > len(buf) {
			pool.Put(p)
			r.Dropped++
			continue
		}
		copy(buf, data)
		p.SetLen(len(data))
		b.Add(p)
		r.Pkts++
		r.Bytes += len(data)
	}
	x.rx.cur += n
	x.fill.cur += n
	atomic.StoreUint32(x.fill.prod, x.fill.cur)
	atomic.StoreUint32(x.rx.cons, x.rx.cur)
}

// reclaim returns completed tx frames to the free list (x.mu held).
func (x *xsk) reclaim() {
	done := atomic.LoadUint32(x.comp.prod) - x.comp.cur
	for i := uint32(0); i < done; i++ {
		x.free[x.nfree] = *x.comp.addr(x.comp.cur + i) &^ (frameSize - 1)
		x.nfree++
	}
	x.comp.cur += done
	atomic.StoreUint32(x.comp.cons, x.comp.cur)
}

// send posts a copy of every packet of b on the tx ring and wakes the
// kernel to send them. Packets that do not fit in a frame, or find no
// free frame or ring slot, are dropped. err reports a failed wake-up.
func (x *xsk) send(b *packet.Batch) (sent, bytes, dropped int, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.reclaim()
	room := txRingSize - (x.tx.cur - atomic.LoadUint32(x.tx.cons))
	for _, p := range b.Slice() {
		d := p.Data()
		if x.nfree == 0 || room == 0 || len(d) > frameSize || len(d) == 0 {
			dropped++
			continue
		}
		x.nfree--
		addr := x.free[x.nfree]
		copy(x.umem[addr:addr+frameSize], d)
		desc := x.tx.descAt(x.tx.cur)
		desc.addr, desc.len, desc.options = addr, uint32(len(d)), 0
		x.tx.cur++
		room--
		sent++
		bytes += len(d)
	}
	if sent == 0 {
		return 0, 0, dropped, nil
	}
	atomic.StoreUint32(x.tx.prod, x.tx.cur)
	if !x.needWk || atomic.LoadUint32(x.tx.flags)&unix.XDP_RING_NEED_WAKEUP != 0 {
		_, _, e := unix.Syscall6(unix.SYS_SENDTO, uintptr(x.txFD), 0, 0, unix.MSG_DONTWAIT, 0, 0)
		switch e {
		case 0, unix.EAGAIN, unix.EBUSY, unix.ENOBUFS, unix.ENETDOWN:
			// Busy: the frames stay on the ring for the next wake-up.
		default:
			err = e
		}
	}
	x.reclaim()
	return sent, bytes, dropped, err
}

// stats reads the kernel's counters of the sockets: the rx socket's,
// with the tx socket's tx_invalid_descs.
func (x *xsk) stats() (unix.XDPStatistics, bool) {
	st, ok := xdpStats(x.fd)
	if tst, tok := xdpStats(x.txFD); tok {
		st.Tx_invalid_descs += tst.Tx_invalid_descs
	}
	return st, ok
}

func xdpStats(fd int) (unix.XDPStatistics, bool) {
	var st unix.XDPStatistics
	if fd < 0 {
		return st, false
	}
	l := uint32(unsafe.Sizeof(st))
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_XDP, unix.XDP_STATISTICS, uintptr(unsafe.Pointer(&st)), uintptr(unsafe.Pointer(&l)), 0)
	return st, e == 0
}
