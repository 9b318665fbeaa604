package afpacket

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/netdev/internal/linkutil"
)

// handoffVersion is the version of the state Handoff writes; Adopt
// refuses any other.
const handoffVersion = 1

// The state: version (1 byte), queue count (2), then per queue the ring
// geometry and the consumer's position: block size, block count, current
// block, offset of its next frame, frames left in it (4 bytes each).
const (
	handoffHeader = 3
	handoffQueue  = 5 * 4
)

var _ netdev.HandingOff = (*Device)(nil)

// Handoff gives the port's sockets (rx then tx, queue by queue) and each
// ring's position. The port must be quiet (netdev.HandingOff).
func (d *Device) Handoff() (netdev.Handoff, error) {
	d.closeMu.RLock()
	defer d.closeMu.RUnlock()
	if d.closed.Load() {
		return netdev.Handoff{}, netdev.ErrClosed
	}
	for i, q := range d.rx {
		d.counters[i].AddRxDropped(q.kernelDrops())
	}
	h := netdev.Handoff{Type: netdev.TypeSystem, Name: d.name, Stats: netdev.Sum(d.counters)}
	st := make([]byte, handoffHeader, handoffHeader+len(d.rx)*handoffQueue)
	st[0] = handoffVersion
	binary.BigEndian.PutUint16(st[1:], uint16(len(d.rx)))
	for i, q := range d.rx {
		h.Fds = append(h.Fds, q.fd, d.tx[i].fd)
		for _, v := range []int{q.blockSize, q.numBlocks, q.cur, q.off, q.left} {
			st = binary.BigEndian.AppendUint32(st, uint32(v))
		}
	}
	h.State = st
	return h, nil
}

// Adopt makes a Device of sockets another process handed over for
// interface name. Every descriptor and every number is checked before
// anything is used: each must be an AF_PACKET socket bound to the
// interface, each rx socket must have a TPACKET_V3 ring of exactly the
// stated geometry and the position must lie in it. On success the Device
// owns the descriptors; on error they stay the caller's.
func Adopt(name string, h netdev.Handoff) (*Device, error) {
	fail := func(format string, args ...any) (*Device, error) {
		return nil, fmt.Errorf("afpacket %s: adopting: %s", name, fmt.Sprintf(format, args...))
	}
	if h.Type != netdev.TypeSystem || h.Name != name {
		return fail("handed a %s port %q", h.Type, h.Name)
	}
	qs, err := decodeState(h.State, len(h.Fds))
	if err != nil {
		return fail("%v", err)
	}
	ifindex, err := linkutil.Ifindex(name)
	if err != nil {
		return fail("%v", err)
	}
	d := &Device{Link: linkutil.Link{IfName: name, Kind: "afpacket"}, name: name, ifindex: ifindex, counters: make([]netdev.Counters, len(qs))}
	d.counters[0].AddStats(h.Stats)
	unmap := func() {
		for _, q := range d.rx {
			unix.Munmap(q.ring)
		}
	}
	for i, q := range qs {
		q.fd = h.Fds[2*i]
		if err := checkSocket(q.fd, ifindex, true); err != nil {
			unmap()
			return fail("rx queue %d: %v", i, err)
		}
		if err := checkSocket(h.Fds[2*i+1], ifindex, false); err != nil {
			unmap()
			return fail("tx queue %d: %v", i, err)
		}
		// The kernel refuses a mapping whose length is not the ring's.
		q.ring, err = unix.Mmap(q.fd, 0, q.blockSize*q.numBlocks, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if err != nil {
			unmap()
			return fail("rx queue %d: mapping a ring of %d blocks of %d bytes: %v", i, q.numBlocks, q.blockSize, err)
		}
		d.rx = append(d.rx, q)
		d.tx = append(d.tx, newTxQueue(h.Fds[2*i+1]))
	}
	return d, nil
}

// decodeState reads and checks the state of Handoff for nfds
// descriptors: the queues' geometry and positions, without descriptors.
func decodeState(st []byte, nfds int) ([]*rxQueue, error) {
	if len(st) < handoffHeader {
		return nil, fmt.Errorf("state of %d bytes is truncated", len(st))
	}
	if st[0] != handoffVersion {
		return nil, fmt.Errorf("state version %d, this build reads %d", st[0], handoffVersion)
	}
	nq := int(binary.BigEndian.Uint16(st[1:]))
	if nq == 0 || len(st) != handoffHeader+nq*handoffQueue || nfds != 2*nq {
		return nil, fmt.Errorf("%d queues, %d bytes of state and %d descriptors do not agree", nq, len(st), nfds)
	}
	qs := make([]*rxQueue, nq)
	for i := range qs {
		v := func(j int) int { return int(binary.BigEndian.Uint32(st[handoffHeader+i*handoffQueue+4*j:])) }
		q := &rxQueue{fd: -1, blockSize: v(0), numBlocks: v(1), cur: v(2), off: v(3), left: v(4)}
		if err := checkPosition(q); err != nil {
			return nil, fmt.Errorf("rx queue %d: %w", i, err)
		}
		qs[i] = q
	}
	return qs, nil
}

// checkPosition checks a handed-over ring geometry and position.
func checkPosition(q *rxQueue) error {
	switch {
	case q.blockSize < 4096 || q.blockSize%unix.Getpagesize() != 0 || q.blockSize > 1<<30:
		return fmt.Errorf("block size %d is not a page multiple", q.blockSize)
	case q.numBlocks <= 0 || q.numBlocks > 1<<16:
		return fmt.Errorf("%d blocks", q.numBlocks)
	case q.cur < 0 || q.cur >= q.numBlocks:
		return fmt.Errorf("current block %d of %d", q.cur, q.numBlocks)
	case q.left < 0 || q.left > q.blockSize/pktHdrLen:
		return fmt.Errorf("%d frames left in a block", q.left)
	case q.left > 0 && (q.off < blkHdrLen || q.off > q.blockSize-pktHdrLen):
		return fmt.Errorf("frame offset %d in a block of %d bytes", q.off, q.blockSize)
	}
	return nil
}

// checkSocket checks that fd is an AF_PACKET socket bound to ifindex,
// and for rx that it uses TPACKET_V3.
func checkSocket(fd, ifindex int, rx bool) error {
	if fd < 0 {
		return errors.New("no descriptor")
	}
	dom, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return fmt.Errorf("descriptor %d is not a socket: %w", fd, err)
	}
	if dom != unix.AF_PACKET {
		return fmt.Errorf("descriptor %d is a socket of family %d, not AF_PACKET", fd, dom)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return fmt.Errorf("getsockname: %w", err)
	}
	if ll, ok := sa.(*unix.SockaddrLinklayer); !ok || ll.Ifindex != ifindex {
		return fmt.Errorf("socket is not bound to interface index %d", ifindex)
	}
	if rx {
		v, err := unix.GetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VERSION)
		if err != nil {
			return fmt.Errorf("PACKET_VERSION: %w", err)
		}
		if v != unix.TPACKET_V3 {
			return fmt.Errorf("socket uses TPACKET version %d, not V3", v+1)
		}
	}
	return nil
}
