package conntrack

import (
	"encoding/binary"
	"sort"
	"sync"

	"github.com/gvs-project/gvs/datapath/packet"
)

// FragVerdict is what Reassembler.Add did with a packet.
type FragVerdict uint8

const (
	// NotFragment: the packet is not an IP fragment; run ct on it.
	NotFragment FragVerdict = iota
	// FragHeld: the reassembler keeps the fragment until its datagram
	// is complete or times out.
	FragHeld
	// FragComplete: out holds the reassembled datagram; run ct on it and
	// copy its ct state to the returned fragments (CopyCtState), which
	// are forwarded instead of the datagram, as Open vSwitch's ipf does.
	FragComplete
	// FragDropped: the fragment was refused (limits, overlap, malformed);
	// the returned packets are the caller's to free.
	FragDropped
)

// FragConfig bounds a Reassembler. Zero fields take the defaults.
type FragConfig struct {
	MaxPackets     int   // fragments held in total (default 1000)
	MaxPerDatagram int   // fragments per datagram (default 64)
	Timeout        int64 // nanoseconds a datagram may take (default 15 s)
}

// Reassembler collects IPv4 and IPv6 fragments so that conntrack sees
// whole datagrams. Its memory is bounded by MaxPackets held packets. A
// single mutex guards it: fragments are rare on the paths gvs serves, and
// the lock is never held while conntrack runs.
type Reassembler struct {
	cfg FragConfig

	mu sync.Mutex
	// guarded by mu
	lists map[fragKey]*fragList
	// guarded by mu
	held int
	// guarded by mu
	stats FragStats
}

// FragStats counts reassembly outcomes.
type FragStats struct {
	Held, Reassembled, Dropped, Expired uint64
}

type fragKey struct {
	src, dst [16]byte
	id       uint32
	zone     uint16
	proto    uint8
	family   uint8
}

type fragEntry struct {
	p        *packet.Packet
	off, end int // payload byte range in the datagram
	data     int // payload offset in p's frame
}

type fragList struct {
	frags   []fragEntry
	total   int // datagram payload length, -1 until the last fragment
	expires int64
}

// NewReassembler returns an empty reassembler.
func NewReassembler(cfg FragConfig) *Reassembler {
	if cfg.MaxPackets <= 0 {
		cfg.MaxPackets = 1000
	}
	if cfg.MaxPerDatagram <= 0 {
		cfg.MaxPerDatagram = 64
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15e9
	}
	return &Reassembler{cfg: cfg, lists: map[fragKey]*fragList{}}
}

// fragInfo describes one fragment.
type fragInfo struct {
	key      fragKey
	l3       int
	hdrEnd   int // end of the headers kept in the reassembled datagram
	nextOff  int // IPv6: offset of the next-header byte pointing at the fragment header
	nextHdr  uint8
	off, end int
	data     int
	more     bool
}

// parseFrag reports whether p is a fragment and describes it.
func parseFrag(p *packet.Packet, zone uint16, fi *fragInfo) (isFrag, ok bool) {
	d := p.Data()
	l3, et := l3Offset(p, d)
	if l3 < 0 {
		return false, true
	}
	fi.l3 = l3
	k := &fi.key
	k.zone = zone
	switch et {
	case ethTypeIPv4:
		if len(d)-l3 < 20 {
			return false, true
		}
		h := d[l3:]
		ihl := int(h[0]&0xf) * 4
		total := int(binary.BigEndian.Uint16(h[2:]))
		fo := binary.BigEndian.Uint16(h[6:])
		if fo&0x3fff == 0 {
			return false, true
		}
		if ihl < 20 || total < ihl || total > len(h) {
			return true, false
		}
		k.family, k.proto = 4, h[9]
		k.id = uint32(binary.BigEndian.Uint16(h[4:]))
		copy(k.src[:4], h[12:16])
		copy(k.dst[:4], h[16:20])
		fi.off = int(fo&0x1fff) * 8
		fi.more = fo&0x2000 != 0
		fi.data = l3 + ihl
		fi.hdrEnd = fi.data
		fi.end = fi.off + total - ihl
	case ethTypeIPv6:
		if len(d)-l3 < 40 {
			return false, true
		}
		h := d[l3:]
		end := l3 + 40 + int(binary.BigEndian.Uint16(h[4:]))
		if end > len(d) {
			return false, true
		}
		next, nextOff, off := h[6], l3+6, l3+40
		for range 8 {
			switch next {
			case 0, 43, 60:
				if end-off < 8 {
					return false, true
				}
				next, nextOff = d[off], off
				off += (int(d[off+1]) + 1) * 8
				continue
			case 44:
				if end-off < 8 {
					return true, false
				}
				fo := binary.BigEndian.Uint16(d[off+2:])
				if fo&0xfff9 == 0 {
					return false, true // atomic fragment
				}
				k.family, k.proto = 6, d[off]
				k.id = binary.BigEndian.Uint32(d[off+4:])
				copy(k.src[:], h[8:24])
				copy(k.dst[:], h[24:40])
				fi.nextOff, fi.nextHdr = nextOff, d[off]
				fi.hdrEnd = off
				fi.off = int(fo>>3) * 8
				fi.more = fo&1 != 0
				fi.data = off + 8
				fi.end = fi.off + end - fi.data
				return true, fi.data <= end
			}
			return false, true
		}
		return false, true
	default:
		return false, true
	}
	return true, true
}

// Add offers p to the reassembler. For FragComplete the datagram is
// written to out (a packet the caller owns, normally from its pool).
func (r *Reassembler) Add(p *packet.Packet, zone uint16, now int64, out *packet.Packet) (FragVerdict, []*packet.Packet) {
	var fi fragInfo
	isFrag, ok := parseFrag(p, zone, &fi)
	if !isFrag {
		return NotFragment, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	drop := func(ps ...*packet.Packet) (FragVerdict, []*packet.Packet) {
		r.stats.Dropped += uint64(len(ps))
		return FragDropped, ps
	}
	if !ok || fi.end > 65535 || fi.end <= fi.off && fi.more || fi.more && (fi.end-fi.off)%8 != 0 {
		return drop(p)
	}
	l := r.lists[fi.key]
	if l == nil {
		if r.held >= r.cfg.MaxPackets {
			return drop(p)
		}
		l = &fragList{total: -1, expires: now + r.cfg.Timeout}
		r.lists[fi.key] = l
	}
	for _, f := range l.frags {
		if fi.off < f.end && f.off < fi.end {
			// Overlapping fragments are an attack or a bug: drop it all.
			return drop(r.removeList(fi.key, l, p)...)
		}
	}
	if len(l.frags) >= r.cfg.MaxPerDatagram || r.held >= r.cfg.MaxPackets ||
		!fi.more && l.total >= 0 || l.total >= 0 && fi.end > l.total {
		return drop(r.removeList(fi.key, l, p)...)
	}
	if !fi.more {
		l.total = fi.end
		for _, f := range l.frags {
			if f.end > l.total {
				return drop(r.removeList(fi.key, l, p)...)
			}
		}
	}
	l.frags = append(l.frags, fragEntry{p: p, off: fi.off, end: fi.end, data: fi.data})
	r.held++
	r.stats.Held++
	if l.total < 0 {
		return FragHeld, nil
	}
	sort.Slice(l.frags, func(i, j int) bool { return l.frags[i].off < l.frags[j].off })
	covered := 0
	for _, f := range l.frags {
		if f.off != covered {
			return FragHeld, nil
		}
		covered = f.end
	}
	if covered != l.total || l.frags[0].off != 0 {
		return FragHeld, nil
	}
	frags := r.removeList(fi.key, l)
	if !r.build(l, out) {
		r.stats.Dropped += uint64(len(frags))
		return FragDropped, frags
	}
	r.stats.Reassembled++
	return FragComplete, frags
}

// removeList forgets a datagram and returns its packets plus extra.
//
// Preconditions: r.mu is held.
func (r *Reassembler) removeList(k fragKey, l *fragList, extra ...*packet.Packet) []*packet.Packet {
	delete(r.lists, k)
	out := make([]*packet.Packet, 0, len(l.frags)+len(extra))
	for _, f := range l.frags {
		out = append(out, f.p)
	}
	r.held -= len(l.frags)
	return append(out, extra...)
}

// build writes the reassembled datagram of the sorted, complete list l
// into out: the first fragment's headers (without the IPv6 fragment
// header) followed by every payload.
func (r *Reassembler) build(l *fragList, out *packet.Packet) bool {
	first := l.frags[0].p
	var fi fragInfo
	if isFrag, ok := parseFrag(first, 0, &fi); !isFrag || !ok {
		return false
	}
	d := first.Data()
	hdr := d[:fi.hdrEnd]
	size := len(hdr) + l.total
	if size > out.Cap() {
		return false
	}
	out.SetData(hdr)
	buf, err := out.Append(l.total)
	if err != nil {
		return false
	}
	for _, f := range l.frags {
		fd := f.p.Data()
		copy(buf[f.off:f.end], fd[f.data:f.data+f.end-f.off])
	}
	o := out.Data()
	ip := o[fi.l3:]
	if fi.key.family == 4 {
		binary.BigEndian.PutUint16(ip[2:], uint16(size-fi.l3))
		binary.BigEndian.PutUint16(ip[6:], 0)
		ip[10], ip[11] = 0, 0
		ihl := int(ip[0]&0xf) * 4
		binary.BigEndian.PutUint16(ip[10:], packet.Checksum(ip[:ihl]))
	} else {
		o[fi.nextOff] = fi.nextHdr
		binary.BigEndian.PutUint16(ip[4:], uint16(size-fi.l3-40))
	}
	out.Md = first.Md
	return true
}

// Expire drops datagrams older than their timeout and returns their
// fragments for the caller to free.
func (r *Reassembler) Expire(now int64) []*packet.Packet {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*packet.Packet
	for k, l := range r.lists {
		if l.expires <= now {
			n := len(l.frags)
			out = append(out, r.removeList(k, l)...)
			r.stats.Expired += uint64(n)
		}
	}
	return out
}

// Stats returns the reassembler's counters.
func (r *Reassembler) Stats() FragStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// Held returns the number of fragments held.
func (r *Reassembler) Held() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// CopyCtState copies the conntrack metadata of a reassembled datagram to
// one of its fragments.
func CopyCtState(frag, whole *packet.Packet) {
	m, w := &frag.Md, &whole.Md
	m.CtState, m.CtZone, m.CtMark, m.CtLabel = w.CtState, w.CtZone, w.CtMark, w.CtLabel
	m.CtNwProto, m.CtNwSrc, m.CtNwDst, m.CtTpSrc, m.CtTpDst = w.CtNwProto, w.CtNwSrc, w.CtNwDst, w.CtTpSrc, w.CtTpDst
	m.CtIPv6Src, m.CtIPv6Dst, m.CtConn = w.CtIPv6Src, w.CtIPv6Dst, 0
}
