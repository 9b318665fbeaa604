package afxdp

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/netdev/internal/linkutil"
)

// handoffVersion is the version of the state Handoff writes; Adopt
// refuses any other.
const handoffVersion = 1

// The state is five bytes: version, queue count, xdp-mode, mode in use,
// need-wakeup (0 or 1). The descriptors are, per queue, the rx socket,
// the tx socket and the UMEM's memfd, then the XSKMAP, the program, the
// BPF link and the promiscuous-mode packet socket. Positions need no
// encoding: every index this side drives is written back to its ring
// after each call, and Handoff waits for the transmitted frames to
// complete, so the rings say where everything is.
const (
	handoffState   = 5
	fdsPerQueue    = 3
	fdsPerDevice   = 4
	handoffTxDrain = 200 * time.Millisecond
)

var _ netdev.HandingOff = (*Device)(nil)

// Handoff gives the port's sockets, UMEMs and XDP objects. The port must
// be quiet (netdev.HandingOff); Handoff first waits (up to 200 ms) until
// the kernel has completed every frame this port sent.
func (d *Device) Handoff() (netdev.Handoff, error) {
	d.closeMu.RLock()
	defer d.closeMu.RUnlock()
	if d.closed.Load() {
		return netdev.Handoff{}, netdev.ErrClosed
	}
	for q, x := range d.xsks {
		if err := x.drainTx(handoffTxDrain); err != nil {
			return netdev.Handoff{}, fmt.Errorf("afxdp %s: queue %d: %w", d.name, q, err)
		}
	}
	h := netdev.Handoff{Type: Type, Name: d.name, Stats: netdev.Sum(d.counters)}
	for _, x := range d.xsks {
		h.Fds = append(h.Fds, x.fd, x.txFD, x.umemFD)
	}
	h.Fds = append(h.Fds, d.mapFD, d.progFD, d.linkFD, d.promFD)
	wk := byte(0)
	if d.cfg.NeedWakeup {
		wk = 1
	}
	h.State = []byte{handoffVersion, byte(len(d.xsks)), byte(d.cfg.Mode), byte(d.inUse), wk}
	return h, nil
}

// drainTx waits until every tx frame is back on the free list.
func (x *xsk) drainTx(limit time.Duration) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	for end := time.Now().Add(limit); ; time.Sleep(time.Millisecond) {
		unix.Syscall6(unix.SYS_SENDTO, uintptr(x.txFD), 0, 0, unix.MSG_DONTWAIT, 0, 0)
		x.reclaim()
		if x.nfree == txRingSize {
			return nil
		}
		if time.Now().After(end) {
			return fmt.Errorf("%d transmitted frames not completed after %v", txRingSize-x.nfree, limit)
		}
	}
}

// Adopt makes a Device of the objects another process handed over for
// interface name. Everything is checked before anything is used: the
// state; each socket's family; each UMEM's size; that the link attaches
// the handed program to this interface's XDP hook, and that the handed
// map is an XSKMAP with a slot per queue; that every ring's indices are
// in range and nothing is left on the tx and completion rings. On
// success the Device owns the descriptors; on error they stay the
// caller's.
func Adopt(name string, h netdev.Handoff) (*Device, error) {
	fail := func(format string, args ...any) (*Device, error) {
		return nil, fmt.Errorf("afxdp %s: adopting: %s", name, fmt.Sprintf(format, args...))
	}
	if h.Type != Type || h.Name != name {
		return fail("handed a %s port %q", h.Type, h.Name)
	}
	hs, err := decodeState(h.State, len(h.Fds))
	if err != nil {
		return fail("%v", err)
	}
	nq := hs.queues
	ifindex, err := linkutil.Ifindex(name)
	if err != nil {
		return fail("%v", err)
	}
	dev := h.Fds[nq*fdsPerQueue:]
	mapFD, progFD, linkFD, promFD := dev[0], dev[1], dev[2], dev[3]
	if err := checkXDPObjects(mapFD, progFD, linkFD, ifindex, nq); err != nil {
		return fail("%v", err)
	}
	if err := checkFamily(promFD, unix.AF_PACKET); err != nil {
		return fail("promiscuous-mode socket: %v", err)
	}
	for q := range nq {
		fds := h.Fds[q*fdsPerQueue:]
		if err := checkFamily(fds[0], unix.AF_XDP); err != nil {
			return fail("queue %d rx socket: %v", q, err)
		}
		if err := checkFamily(fds[1], unix.AF_XDP); err != nil {
			return fail("queue %d tx socket: %v", q, err)
		}
		var sb unix.Stat_t
		if err := unix.Fstat(fds[2], &sb); err != nil || sb.Size != numFrames*frameSize {
			return fail("queue %d UMEM: not a memfd of %d bytes (%v)", q, numFrames*frameSize, err)
		}
	}
	d := &Device{Link: linkutil.Link{IfName: name, Kind: "afxdp"}, name: name, ifindex: ifindex,
		cfg:   Config{Name: name, Mode: hs.mode, RxQueues: nq, NeedWakeup: hs.needWakeup},
		inUse: hs.inUse, mapFD: -1, progFD: -1, linkFD: -1, promFD: -1, counters: make([]netdev.Counters, nq)}
	unmap := func() {
		for _, x := range d.xsks {
			x.unmap()
		}
	}
	for q := range nq {
		fds := h.Fds[q*fdsPerQueue:]
		x := &xsk{fd: fds[0], txFD: fds[1], umemFD: fds[2], needWk: d.cfg.NeedWakeup}
		d.xsks = append(d.xsks, x)
		if err := x.adoptRings(); err != nil {
			unmap()
			return fail("queue %d: %v", q, err)
		}
	}
	d.mapFD, d.progFD, d.linkFD, d.promFD = mapFD, progFD, linkFD, promFD
	d.counters[0].AddStats(h.Stats)
	return d, nil
}

// handedState is a decoded Handoff state.
type handedState struct {
	queues      int
	mode, inUse Mode
	needWakeup  bool
}

// decodeState reads and checks the state of Handoff for nfds
// descriptors.
func decodeState(st []byte, nfds int) (handedState, error) {
	switch {
	case len(st) != handoffState:
		return handedState{}, fmt.Errorf("state of %d bytes, want %d", len(st), handoffState)
	case st[0] != handoffVersion:
		return handedState{}, fmt.Errorf("state version %d, this build reads %d", st[0], handoffVersion)
	case st[1] == 0 || int(st[1]) > MaxQueues || nfds != int(st[1])*fdsPerQueue+fdsPerDevice:
		return handedState{}, fmt.Errorf("%d queues and %d descriptors do not agree", st[1], nfds)
	case int(st[2]) >= len(modeNames) || st[3] == byte(ModeBestEffort) || int(st[3]) >= len(modeNames) || st[4] > 1:
		return handedState{}, fmt.Errorf("modes %d/%d, need-wakeup %d", st[2], st[3], st[4])
	}
	return handedState{queues: int(st[1]), mode: Mode(st[2]), inUse: Mode(st[3]), needWakeup: st[4] == 1}, nil
}

// adoptRings maps a handed socket's UMEM and rings and takes up the
// positions they hold.
func (x *xsk) adoptRings() error {
	var err error
	if x.umem, err = mapUmem(x.umemFD); err != nil {
		return fmt.Errorf("mmap UMEM: %w", err)
	}
	if err := x.mapRxRings(); err != nil {
		return err
	}
	if err := x.mapTxRing(); err != nil {
		return err
	}
	ld := atomic.LoadUint32
	fillQ, rxQ := ld(x.fill.prod)-ld(x.fill.cons), ld(x.rx.prod)-ld(x.rx.cons)
	switch {
	case fillQ > rxRingSize || rxQ > rxRingSize || fillQ+rxQ > rxRingSize:
		return fmt.Errorf("%d frames on the fill ring and %d on the rx ring, of %d", fillQ, rxQ, rxRingSize)
	case ld(x.tx.prod) != ld(x.tx.cons) || ld(x.comp.prod) != ld(x.comp.cons):
		return errors.New("transmitted frames are still on the tx or completion ring")
	}
	x.fill.cur, x.rx.cur = ld(x.fill.prod), ld(x.rx.cons)
	x.tx.cur, x.comp.cur = ld(x.tx.prod), ld(x.comp.cons)
	for i := range txRingSize {
		x.free[i] = uint64(rxRingSize+i) << frameShift
	}
	x.nfree = txRingSize
	return nil
}

// unmap releases the mappings of a socket without closing descriptors.
func (x *xsk) unmap() {
	for _, r := range []*ring{&x.fill, &x.comp, &x.rx, &x.tx} {
		if r.mem != nil {
			unix.Munmap(r.mem)
			r.mem = nil
		}
	}
	if x.umem != nil {
		unix.Munmap(x.umem)
		x.umem = nil
	}
}

func checkFamily(fd, family int) error {
	if fd < 0 {
		return errors.New("no descriptor")
	}
	dom, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return fmt.Errorf("descriptor %d is not a socket: %w", fd, err)
	}
	if dom != family {
		return fmt.Errorf("descriptor %d is a socket of family %d, not %d", fd, dom, family)
	}
	return nil
}

// objInfoAttr is bpf_attr for BPF_OBJ_GET_INFO_BY_FD.
type objInfoAttr struct {
	fd, infoLen uint32
	info        unsafe.Pointer
}

func objInfo(fd int, info []byte) error {
	a := &objInfoAttr{fd: uint32(fd), infoLen: uint32(len(info)), info: unsafe.Pointer(&info[0])}
	_, _, e := unix.Syscall(unix.SYS_BPF, unix.BPF_OBJ_GET_INFO_BY_FD, uintptr(unsafe.Pointer(a)), unsafe.Sizeof(*a))
	if e != 0 {
		return e
	}
	return nil
}

// checkXDPObjects checks that link is an XDP link on ifindex running
// program prog, an XDP program, and that m is an XSKMAP of nq entries.
func checkXDPObjects(m, prog, link, ifindex, nq int) error {
	const linkTypeXDP = 6 // BPF_LINK_TYPE_XDP
	u32 := func(b []byte, off int) uint32 { return *(*uint32)(unsafe.Pointer(&b[off])) }
	li := make([]byte, 64) // struct bpf_link_info: type, id, prog_id, then xdp.ifindex at 16
	if err := objInfo(link, li); err != nil {
		return fmt.Errorf("BPF link: %w", err)
	}
	if u32(li, 0) != linkTypeXDP || u32(li, 16) != uint32(ifindex) {
		return fmt.Errorf("BPF link of type %d on interface index %d, not XDP on %d", u32(li, 0), u32(li, 16), ifindex)
	}
	pi := make([]byte, 256) // struct bpf_prog_info: type, id, ...
	if err := objInfo(prog, pi); err != nil {
		return fmt.Errorf("XDP program: %w", err)
	}
	if u32(pi, 0) != unix.BPF_PROG_TYPE_XDP || u32(pi, 4) != u32(li, 8) {
		return fmt.Errorf("program %d of type %d is not the link's XDP program %d", u32(pi, 4), u32(pi, 0), u32(li, 8))
	}
	mi := make([]byte, 128) // struct bpf_map_info: type, id, key_size, value_size, max_entries
	if err := objInfo(m, mi); err != nil {
		return fmt.Errorf("XSKMAP: %w", err)
	}
	if u32(mi, 0) != unix.BPF_MAP_TYPE_XSKMAP || u32(mi, 16) != uint32(nq) {
		return fmt.Errorf("map of type %d with %d entries, not an XSKMAP of %d", u32(mi, 0), u32(mi, 16), nq)
	}
	return nil
}
