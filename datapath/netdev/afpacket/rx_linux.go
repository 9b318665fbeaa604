package afpacket

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/packet"
)

// Offsets in the TPACKET_V3 ring (linux/if_packet.h).
const (
	// struct tpacket_block_desc: version, offset_to_priv, then
	// struct tpacket_hdr_v1.
	blkStatus   = 8
	blkNumPkts  = 12
	blkFirstPkt = 16
	blkHdrLen   = 48

	// struct tpacket3_hdr.
	pktNextOffset = 0
	pktSnaplen    = 12
	pktLen        = 16
	pktStatus     = 20
	pktMac        = 24
	pktVlanTCI    = 32
	pktVlanTPID   = 36
	pktHdrLen     = 48
	// struct sockaddr_ll follows the header at TPACKET_ALIGN(48) = 48;
	// sll_pkttype is its byte 10.
	pktSllPkttype = pktHdrLen + 10

	// frameSize only sizes the ring request: V3 frames are variable.
	frameSize = 2048
)

// rxQueue is one socket and its mmap'd TPACKET_V3 ring. It is used by one
// goroutine at a time.
type rxQueue struct {
	fd        int
	ring      []byte
	blockSize int
	numBlocks int

	// The block being consumed: its index, the offset of its next frame
	// and how many frames are left. left == 0 means no block is held.
	cur  int
	off  int
	left int
}

func openRx(ifindex int, cfg Config, fanout bool, fanoutID *int, promisc bool) (*rxQueue, error) {
	// Protocol 0 until the ring exists, so nothing is queued before it.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	q := &rxQueue{fd: fd, blockSize: cfg.BlockSize, numBlocks: cfg.NumBlocks}
	fail := func(what string, err error) (*rxQueue, error) {
		q.close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VERSION, unix.TPACKET_V3); err != nil {
		return fail("PACKET_VERSION", err)
	}
	req := unix.TpacketReq3{
		Block_size:     uint32(cfg.BlockSize),
		Block_nr:       uint32(cfg.NumBlocks),
		Frame_size:     frameSize,
		Frame_nr:       uint32(cfg.BlockSize / frameSize * cfg.NumBlocks),
		Retire_blk_tov: uint32((cfg.BlockTimeout.Milliseconds())),
	}
	if req.Retire_blk_tov == 0 {
		req.Retire_blk_tov = 1
	}
	if err := unix.SetsockoptTpacketReq3(fd, unix.SOL_PACKET, unix.PACKET_RX_RING, &req); err != nil {
		return fail("PACKET_RX_RING", err)
	}
	q.ring, err = unix.Mmap(fd, 0, cfg.BlockSize*cfg.NumBlocks, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_LOCKED|unix.MAP_POPULATE)
	if err != nil {
		// MAP_LOCKED fails under a small RLIMIT_MEMLOCK; it is only a
		// latency nicety.
		q.ring, err = unix.Mmap(fd, 0, cfg.BlockSize*cfg.NumBlocks, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	}
	if err != nil {
		return fail("mmap ring", err)
	}
	// Our own transmissions would otherwise come back as PACKET_OUTGOING
	// copies (Linux 4.20+; recv also checks sll_pkttype for older kernels).
	unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1)
	sa := &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifindex}
	if err := unix.Bind(fd, sa); err != nil {
		return fail("bind", err)
	}
	if promisc {
		mr := unix.PacketMreq{Ifindex: int32(ifindex), Type: unix.PACKET_MR_PROMISC}
		if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mr); err != nil {
			return fail("promiscuous mode", err)
		}
	}
	if fanout {
		if *fanoutID < 0 {
			// The kernel picks an id no other group in the namespace uses.
			arg := (unix.PACKET_FANOUT_HASH | unix.PACKET_FANOUT_FLAG_UNIQUEID) << 16
			if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_FANOUT, arg); err != nil {
				return fail("PACKET_FANOUT", err)
			}
			v, err := unix.GetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_FANOUT)
			if err != nil {
				return fail("PACKET_FANOUT id", err)
			}
			*fanoutID = v & 0xffff
		} else {
			arg := unix.PACKET_FANOUT_HASH<<16 | *fanoutID
			if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_FANOUT, arg); err != nil {
				return fail("PACKET_FANOUT join", err)
			}
		}
	}
	return q, nil
}

func (q *rxQueue) close() error {
	var err error
	if q.ring != nil {
		err = unix.Munmap(q.ring)
		q.ring = nil
	}
	if q.fd >= 0 {
		if cerr := unix.Close(q.fd); err == nil {
			err = cerr
		}
		q.fd = -1
	}
	return err
}

// kernelDrops returns (and resets) the frames the kernel dropped because
// the ring was full.
func (q *rxQueue) kernelDrops() uint64 {
	st, err := unix.GetsockoptTpacketStatsV3(q.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	if err != nil {
		return 0
	}
	return uint64(st.Drops)
}

// recv walks ready blocks until b is full or the next block is still the
// kernel's.
func (q *rxQueue) recv(b *packet.Batch, pool *packet.Pool, r *netdev.RxBatch) {
	ne := binary.NativeEndian
	for b.N < packet.BatchSize {
		if q.left == 0 {
			blk := q.cur * q.blockSize
			if loadStatus(q.ring, blk+blkStatus)&unix.TP_STATUS_USER == 0 {
				return
			}
			q.left = int(ne.Uint32(q.ring[blk+blkNumPkts:]))
			q.off = int(ne.Uint32(q.ring[blk+blkFirstPkt:]))
			if q.left == 0 {
				q.release()
				continue
			}
		}
		block := q.ring[q.cur*q.blockSize : (q.cur+1)*q.blockSize]
		off := q.off
		if off < blkHdrLen || off > len(block)-pktHdrLen-12 {
			// A corrupt block cannot be walked further; give it back.
			r.Errors += q.left
			q.release()
			continue
		}
		h := block[off:]
		next := int(ne.Uint32(h[pktNextOffset:]))
		snap := int(ne.Uint32(h[pktSnaplen:]))
		wire := int(ne.Uint32(h[pktLen:]))
		status := ne.Uint32(h[pktStatus:])
		mac := int(ne.Uint16(h[pktMac:]))
		pkttype := h[pktSllPkttype]
		q.left--
		q.off += next
		if next == 0 && q.left > 0 {
			r.Errors += q.left
			q.left = 0
		}
		switch {
		case pkttype == unix.PACKET_OUTGOING:
		case mac+snap > len(h) || snap < 14:
			r.Errors++
		case snap < wire:
			// Bigger than the ring's frame limit (a GSO super-frame).
			r.Dropped++
		default:
			if q.deliver(h[mac:mac+snap], h, status, b, pool, r) {
				r.Pkts++
			}
		}
		if q.left == 0 {
			q.release()
		}
	}
}

// deliver copies one frame into a pool packet and appends it to b.
func (q *rxQueue) deliver(frame, h []byte, status uint32, b *packet.Batch, pool *packet.Pool, r *netdev.RxBatch) bool {
	p := pool.Get()
	buf := p.RecvBuffer()
	if len(frame) > len(buf) {
		pool.Put(p)
		r.Dropped++
		return false
	}
	copy(buf, frame)
	p.SetLen(len(frame))
	if status&unix.TP_STATUS_VLAN_VALID != 0 {
		ne := binary.NativeEndian
		tpid := uint16(0x8100)
		if status&unix.TP_STATUS_VLAN_TPID_VALID != 0 {
			if t := ne.Uint16(h[pktVlanTPID:]); t != 0 {
				tpid = t
			}
		}
		tci := uint16(ne.Uint32(h[pktVlanTCI:]))
		gap, err := p.InsertAt(12, 4)
		if err != nil {
			pool.Put(p)
			r.Dropped++
			return false
		}
		binary.BigEndian.PutUint16(gap[0:], tpid)
		binary.BigEndian.PutUint16(gap[2:], tci)
	}
	if status&unix.TP_STATUS_CSUMNOTREADY != 0 {
		completeChecksum(p.Data())
	}
	b.Add(p)
	r.Bytes += p.Len()
	return true
}

// release hands the current block back to the kernel and moves on.
func (q *rxQueue) release() {
	storeStatus(q.ring, q.cur*q.blockSize+blkStatus, unix.TP_STATUS_KERNEL)
	q.left = 0
	q.cur++
	if q.cur == q.numBlocks {
		q.cur = 0
	}
}
