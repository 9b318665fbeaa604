package packet

import "errors"

const (
	// Headroom is the space kept in front of received data so that
	// push_vlan, MPLS and tunnel encapsulation never move the payload.
	Headroom = 128
	// DefaultMTUBuf is the payload capacity of a pool buffer: a jumbo
	// Ethernet frame with two VLAN tags.
	DefaultMTUBuf = 9216 + 18 + 8
	// BatchSize is the maximum number of packets in a Batch, as in Open
	// vSwitch's NETDEV_MAX_BURST.
	BatchSize = 32
)

// OffsetUnset marks an offset that flow extraction did not find.
const OffsetUnset = 0xffff

// Tunnel is the outer-header metadata of a decapsulated packet, or the
// tunnel key set by actions before encapsulation. IPv4 endpoints use
// Src/Dst with IPv6Src/IPv6Dst zero.
type Tunnel struct {
	ID      uint64
	Src     uint32
	Dst     uint32
	IPv6Src [16]byte
	IPv6Dst [16]byte
	Flags   uint16 // FlagDontFragment, FlagCsum, FlagKey, FlagOAM
	Tos     uint8
	TTL     uint8
	TpSrc   uint16
	TpDst   uint16
	GbpID   uint16
	GbpFlag uint8
	_       uint8
	// MetaPresent has bit i set when Geneve option slot i (in MetaLen
	// units assigned by the TLV table) carries data in Meta.
	MetaPresent uint64
	Meta        [TunMetaBytes]byte
}

// TunMetaBytes is the room for Geneve option data mapped to tun_metadata
// fields. Open vSwitch allows 124 bytes of options; gvs keeps 64 so the
// flow key stays small. The TLV table refuses mappings beyond it.
const TunMetaBytes = 64

// Tunnel flag bits, as Open vSwitch's FLOW_TNL_F_*: OAM is bit 0, the
// one public flag, which the OpenFlow field tun_flags maps to.
const (
	TunFlagOAM          = 1 << 0
	TunFlagDontFragment = 1 << 1
	TunFlagCsum         = 1 << 2
	TunFlagKey          = 1 << 3
)

// Metadata is what a packet carries besides its bytes. It survives
// recirculation; flow extraction copies it into the flow key.
type Metadata struct {
	InPort      uint32
	RecircID    uint32
	DPHash      uint32
	PktMark     uint32
	SkbPriority uint32
	CtMark      uint32
	CtZone      uint16
	CtState     uint8
	CtNwProto   uint8 // original-direction protocol, when CtState has trk
	CtNwSrc     uint32
	CtNwDst     uint32
	CtTpSrc     uint16
	CtTpDst     uint16
	CtLabel     [16]byte
	CtIPv6Src   [16]byte
	CtIPv6Dst   [16]byte
	// CtConn is an opaque handle the conntrack module may attach to avoid
	// a second lookup after recirculation; 0 when unset.
	CtConn uintptr
	// Tunnel stays the last field: Reset clears everything before it.
	Tunnel Tunnel
}

// Reset clears the metadata for a newly received packet. The tunnel key is
// not zeroed whole (it is most of the metadata): a tunnel key is valid only
// when its destination is set (Tunnel.Valid), so clearing the destinations
// is enough, as Open vSwitch's pkt_metadata_init does.
func (md *Metadata) Reset() {
	md.clearBeforeTunnel()
	md.Tunnel.Dst = 0
	md.Tunnel.IPv6Dst = [16]byte{}
}

// Valid reports whether the tunnel key is set (its destination is).
func (t *Tunnel) Valid() bool { return t.Dst != 0 || t.IPv6Dst != [16]byte{} }

// Packet is one frame in a reusable buffer. Data()[0] is the first byte of
// the Ethernet header. The L2/L3/L4 offsets are relative to Data() and are
// set by flow extraction (OffsetUnset when absent).
type Packet struct {
	buf   []byte
	start int
	end   int

	L2_5 uint16 // first MPLS label, if any
	L3   uint16
	L4   uint16
	// L7 is the offset of the L4 payload, used by helpers such as FTP.
	L7 uint16

	Md Metadata

	// DPHashValid says Md.DPHash was computed for this packet.
	DPHashValid bool
	// RSSHash is a receive-side hash from the port, if any (0 if none).
	RSSHash uint32
}

// New returns a packet with a buffer of the given payload capacity plus
// Headroom. Allocation belongs to pools and set-up code, never the fast path.
func New(capacity int) *Packet {
	p := &Packet{buf: make([]byte, Headroom+capacity)}
	p.Reset()
	return p
}

// FromBytes returns a new packet holding a copy of b (for tests and
// injection paths that are not per-packet hot).
func FromBytes(b []byte) *Packet {
	c := len(b)
	if c < DefaultMTUBuf {
		c = DefaultMTUBuf
	}
	p := New(c)
	p.SetData(b)
	return p
}

// Reset empties the packet and clears metadata and offsets, keeping the buffer.
func (p *Packet) Reset() {
	p.start = Headroom
	p.end = Headroom
	p.ResetOffsets()
	p.Md.Reset()
	p.DPHashValid = false
	p.RSSHash = 0
}

// ResetOffsets marks every header offset unknown.
func (p *Packet) ResetOffsets() {
	p.L2_5, p.L3, p.L4, p.L7 = OffsetUnset, OffsetUnset, OffsetUnset, OffsetUnset
}

// Data returns the frame bytes.
func (p *Packet) Data() []byte { return p.buf[p.start:p.end] }

// Len returns the frame length.
func (p *Packet) Len() int { return p.end - p.start }

// Cap returns how many bytes the frame can grow to without pushing headers.
func (p *Packet) Cap() int { return len(p.buf) - p.start }

// Tailroom returns the free bytes after the frame.
func (p *Packet) Tailroom() int { return len(p.buf) - p.end }

// HeadroomLen returns the free bytes in front of the frame.
func (p *Packet) HeadroomLen() int { return p.start }

// SetData copies b into the buffer at the default headroom. It truncates
// b to the buffer's capacity and reports whether it had to.
func (p *Packet) SetData(b []byte) (truncated bool) {
	p.start = Headroom
	if p.start > len(p.buf) {
		p.start = 0
	}
	n := copy(p.buf[p.start:], b)
	p.end = p.start + n
	p.ResetOffsets()
	return n < len(b)
}

// RecvBuffer returns the buffer region a port may receive into; the port
// then calls SetLen with the number of bytes written.
func (p *Packet) RecvBuffer() []byte {
	p.start = Headroom
	return p.buf[p.start:]
}

// SetLen sets the frame length after a receive into RecvBuffer.
func (p *Packet) SetLen(n int) {
	if n < 0 {
		n = 0
	}
	if p.start+n > len(p.buf) {
		n = len(p.buf) - p.start
	}
	p.end = p.start + n
}

// ErrNoRoom is returned when a push would exceed the headroom or a resize
// would exceed the buffer.
var ErrNoRoom = errors.New("packet: no room in buffer")

// Push prepends n bytes and returns them. Offsets shift by n. Callers set
// the content. On failure the packet is unchanged.
func (p *Packet) Push(n int) ([]byte, error) {
	if n > p.start {
		return nil, ErrNoRoom
	}
	p.start -= n
	p.shiftOffsets(n)
	return p.buf[p.start : p.start+n], nil
}

// Pull removes n bytes from the front. Offsets shift by -n (offsets that
// fall before the new start become unset).
func (p *Packet) Pull(n int) bool {
	if n > p.Len() {
		return false
	}
	p.start += n
	p.shiftOffsets(-n)
	return true
}

// InsertAt opens a gap of n bytes at offset off (moving the bytes in front
// of off towards the headroom, as a VLAN push does) and returns the gap.
// Offsets at or after off are unchanged relative to the frame end; offsets
// before off stay at the same position relative to the frame start.
func (p *Packet) InsertAt(off, n int) ([]byte, error) {
	if off < 0 || off > p.Len() || n > p.start {
		return nil, ErrNoRoom
	}
	old := p.start
	p.start -= n
	copy(p.buf[p.start:p.start+off], p.buf[old:old+off])
	p.shiftOffsetsFrom(off, n)
	return p.buf[p.start+off : p.start+off+n], nil
}

// RemoveAt removes n bytes at offset off by moving the bytes in front of
// it forward (as a VLAN pop does).
func (p *Packet) RemoveAt(off, n int) bool {
	if off < 0 || n < 0 || off+n > p.Len() {
		return false
	}
	copy(p.buf[p.start+n:p.start+n+off], p.buf[p.start:p.start+off])
	p.start += n
	p.shiftOffsetsFrom(off+n, -n)
	return true
}

// Truncate cuts the frame to at most n bytes.
func (p *Packet) Truncate(n int) {
	if n < p.Len() && n >= 0 {
		p.end = p.start + n
	}
}

// Append extends the frame by n bytes and returns them.
func (p *Packet) Append(n int) ([]byte, error) {
	if n > p.Tailroom() {
		return nil, ErrNoRoom
	}
	p.end += n
	return p.buf[p.end-n : p.end], nil
}

func (p *Packet) shiftOffsets(d int) {
	p.L2_5 = shift(p.L2_5, d)
	p.L3 = shift(p.L3, d)
	p.L4 = shift(p.L4, d)
	p.L7 = shift(p.L7, d)
}

// shiftOffsetsFrom shifts offsets that are >= from (in old coordinates).
func (p *Packet) shiftOffsetsFrom(from, d int) {
	f := func(o uint16) uint16 {
		if o == OffsetUnset || int(o) < from {
			return o
		}
		return shift(o, d)
	}
	p.L2_5, p.L3, p.L4, p.L7 = f(p.L2_5), f(p.L3), f(p.L4), f(p.L7)
}

func shift(o uint16, d int) uint16 {
	if o == OffsetUnset {
		return o
	}
	v := int(o) + d
	if v < 0 || v >= OffsetUnset {
		return OffsetUnset
	}
	return uint16(v)
}

// L3Data returns the bytes from the L3 header on, or nil if unset.
func (p *Packet) L3Data() []byte {
	if p.L3 == OffsetUnset || int(p.L3) > p.Len() {
		return nil
	}
	return p.Data()[p.L3:]
}

// L4Data returns the bytes from the L4 header on, or nil if unset.
func (p *Packet) L4Data() []byte {
	if p.L4 == OffsetUnset || int(p.L4) > p.Len() {
		return nil
	}
	return p.Data()[p.L4:]
}

// CopyFrom makes p a copy of q (bytes, offsets, metadata). It is used by
// clone and multi-output actions that must not share a buffer.
func (p *Packet) CopyFrom(q *Packet) {
	n := q.Len()
	p.start = q.start
	if p.start+n > len(p.buf) {
		p.start = len(p.buf) - n
		if p.start < 0 {
			p.start = 0
			n = len(p.buf)
		}
	}
	copy(p.buf[p.start:], q.Data()[:n])
	p.end = p.start + n
	p.L2_5, p.L3, p.L4, p.L7 = q.L2_5, q.L3, q.L4, q.L7
	p.Md = q.Md
	p.DPHashValid = q.DPHashValid
	p.RSSHash = q.RSSHash
}

// Batch is up to BatchSize packets processed together.
type Batch struct {
	Pkts [BatchSize]*Packet
	N    int
}

// Add appends p and reports false if the batch is full.
func (b *Batch) Add(p *Packet) bool {
	if b.N == BatchSize {
		return false
	}
	b.Pkts[b.N] = p
	b.N++
	return true
}

// Slice returns the packets in the batch.
func (b *Batch) Slice() []*Packet { return b.Pkts[:b.N] }

// Clear empties the batch without touching the packets.
func (b *Batch) Clear() { b.Truncate(0) }

// Truncate keeps the first n packets (n <= b.N) and drops the batch's
// references to the rest, as the actions that compact a batch in place
// (keeping the packets they do not drop) end.
func (b *Batch) Truncate(n int) {
	for i := n; i < b.N; i++ {
		b.Pkts[i] = nil
	}
	b.N = n
}

// Pool is a free list of packets owned by one goroutine (a worker or a
// port). It is not safe for concurrent use; that is the point: no atomics
// and no sync.Pool churn on the fast path.
type Pool struct {
	free     []*Packet
	capacity int
	// Allocated counts packets ever created by this pool.
	Allocated int
}

// NewPool returns a pool that pre-allocates n packets of DefaultMTUBuf.
func NewPool(n int) *Pool {
	p := &Pool{free: make([]*Packet, 0, n), capacity: DefaultMTUBuf}
	for i := 0; i < n; i++ {
		p.free = append(p.free, New(p.capacity))
		p.Allocated++
	}
	return p
}

// Get returns a reset packet, allocating only if the pool is empty.
func (p *Pool) Get() *Packet {
	if n := len(p.free); n > 0 {
		pkt := p.free[n-1]
		p.free = p.free[:n-1]
		pkt.Reset()
		return pkt
	}
	p.Allocated++
	return New(p.capacity)
}

// Put returns a packet to the pool.
func (p *Pool) Put(pkt *Packet) {
	if pkt == nil {
		return
	}
	if len(p.free) < cap(p.free) {
		p.free = append(p.free, pkt)
	}
	// Beyond capacity the packet is left to the GC: the pool never grows
	// without bound.
}

// Free returns how many packets are available without allocating.
func (p *Pool) Free() int { return len(p.free) }
