package odp

import (
	"encoding/binary"
	"strconv"

	"github.com/gvs-project/gvs/datapath/packet"
)

// MPLS label stack entry layout (RFC 3032): label(20) tc(3) bos(1) ttl(8).
const (
	MPLSLabelShift = 12
	MPLSTCShift    = 9
	MPLSBOSShift   = 8
	MPLSLabelMask  = 0xfffff << MPLSLabelShift
	MPLSTCMask     = 7 << MPLSTCShift
	MPLSBOSMask    = 1 << MPLSBOSShift
	MPLSTTLMask    = 0xff

	mplsLSELen = 4
)

// MPLS Ethertypes (unicast and multicast).
const (
	EthTypeMPLS     = 0x8847
	EthTypeMPLSMcst = 0x8848
)

// IsMPLS reports whether ethType is an MPLS Ethertype.
func IsMPLS(ethType uint16) bool { return ethType == EthTypeMPLS || ethType == EthTypeMPLSMcst }

// MPLSLSE composes a label stack entry from its members; each is cut to
// its width, as OVS's set_mpls_lse_values.
func MPLSLSE(label uint32, tc, ttl uint8, bos bool) uint32 {
	lse := label<<MPLSLabelShift&MPLSLabelMask | uint32(tc)<<MPLSTCShift&MPLSTCMask | uint32(ttl)
	if bos {
		lse |= MPLSBOSMask
	}
	return lse
}

// PushMPLS returns a push_mpls action that pushes lse as the outermost
// entry; ethType must be an MPLS Ethertype (the executor ignores the
// action otherwise, as OVS).
func PushMPLS(lse uint32, ethType uint16) Action {
	return Action{Kind: KindPushMPLS, Arg: lse, EthType: ethType}
}

// PopMPLS returns a pop_mpls action; ethType is the packet's Ethertype
// after the pop (an MPLS one while entries remain).
func PopMPLS(ethType uint16) Action { return Action{Kind: KindPopMPLS, EthType: ethType} }

// SetMPLS returns a set(mpls(...)) of the outermost entry: a plain set
// when mask is all ones, a masked set otherwise.
func SetMPLS(lse, mask uint32) Action {
	s := &SetField{Field: FieldMPLS}
	binary.BigEndian.PutUint32(s.Val[:], lse)
	binary.BigEndian.PutUint32(s.Mask[:], mask)
	return setAction(s)
}

// appendLSE prints an entry as OVS's format_mpls_lse.
func appendLSE(dst []byte, lse uint32) []byte {
	dst = append(dst, "label="...)
	dst = appendUint(dst, lse>>MPLSLabelShift)
	dst = append(dst, ",tc="...)
	dst = appendUint(dst, lse>>MPLSTCShift&7)
	dst = append(dst, ",ttl="...)
	dst = appendUint(dst, lse&MPLSTTLMask)
	dst = append(dst, ",bos="...)
	return appendUint(dst, lse>>MPLSBOSShift&1)
}

func appendUint(dst []byte, v uint32) []byte { return strconv.AppendUint(dst, uint64(v), 10) }

// l2End returns where the Ethertype's payload starts in a frame whose
// offsets were not extracted: past the MAC addresses, the VLAN tags and
// the Ethertype. It returns -1 for a frame too short to have them.
func l2End(d []byte) int {
	off := 12
	for len(d) >= off+2 {
		t := binary.BigEndian.Uint16(d[off:])
		if t != ethTypeVLAN && t != ethTypeQinQ {
			return off + 2
		}
		off += 4
	}
	return -1
}

// setEthType writes the Ethertype that precedes the header at off (the
// MPLS stack or L3): after the VLAN tags if there are any, else the
// Ethernet header's own, as OVS's set_ethertype.
func setEthType(d []byte, off int, ethType uint16) {
	if len(d) < 14 {
		return
	}
	at := 12
	if t := binary.BigEndian.Uint16(d[12:]); (t == ethTypeVLAN || t == ethTypeQinQ) && off >= 14 && off <= len(d) {
		at = off - 2
	}
	binary.BigEndian.PutUint16(d[at:], ethType)
}

// pushMPLS inserts lse as the outermost label stack entry of each packet:
// in front of the existing stack, or after the Ethernet and VLAN headers
// when there is none (the Ethertype then becomes ethType). Offsets after
// the entry move with it. A packet without headroom is dropped.
func (c *Context) pushMPLS(b *packet.Batch, lse uint32, ethType uint16) {
	if !IsMPLS(ethType) {
		return
	}
	n := 0
	for _, p := range b.Slice() {
		if !pushMPLSOne(p, lse, ethType) {
			c.put(p)
			continue
		}
		b.Pkts[n] = p
		n++
	}
	b.Truncate(n)
}

// pushMPLSOne pushes onto one packet; it reports false when the packet
// has no room (a frame too short to carry an Ethertype is left alone).
func pushMPLSOne(p *packet.Packet, lse uint32, ethType uint16) bool {
	d := p.Data()
	off := int(p.L2_5)
	if p.L2_5 == packet.OffsetUnset {
		off = int(p.L3)
		if p.L3 == packet.OffsetUnset || off > len(d) || off < 14 {
			off = l2End(d)
		}
	}
	if off < 14 || off > len(d) {
		return true
	}
	setEthType(d, off, ethType)
	gap, err := p.InsertAt(off, mplsLSELen)
	if err != nil {
		return false
	}
	binary.BigEndian.PutUint32(gap, lse)
	p.L2_5 = uint16(off)
	// The packet is no longer the one conntrack saw (pkt_metadata_init_conn).
	p.Md.CtConn = 0
	return true
}

// popMPLS removes the outermost label stack entry and writes ethType as
// the Ethertype; after the bottom of the stack the packet has no MPLS
// offset any more. A packet without an MPLS stack is left unchanged.
func popMPLS(p *packet.Packet, ethType uint16) {
	if p.L2_5 == packet.OffsetUnset {
		return
	}
	off := int(p.L2_5)
	d := p.Data()
	if off < 14 || off+mplsLSELen > len(d) {
		return
	}
	bos := binary.BigEndian.Uint32(d[off:])&MPLSBOSMask != 0
	setEthType(d, off, ethType)
	p.RemoveAt(off, mplsLSELen)
	if bos {
		p.L2_5 = packet.OffsetUnset
	}
}

// setMPLS rewrites the outermost label stack entry, keeping the bits the
// mask leaves out (OVS ORs the value in unmasked, and so do we).
func setMPLS(p *packet.Packet, s *SetField) {
	if p.L2_5 == packet.OffsetUnset {
		return
	}
	d := p.Data()
	off := int(p.L2_5)
	if off+mplsLSELen > len(d) {
		return
	}
	old := binary.BigEndian.Uint32(d[off:])
	v, m := binary.BigEndian.Uint32(s.Val[:]), binary.BigEndian.Uint32(s.Mask[:])
	binary.BigEndian.PutUint32(d[off:], v|old&^m)
}

// mplsArgBits are push_mpls's members and their widths.
var mplsArgBits = map[string]int{"label": 20, "tc": 3, "ttl": 8, "bos": 1, "eth_type": 16}

// pushMPLS parses "(label=L,tc=T,ttl=X,bos=B,eth_type=E)", the text
// String prints (OVS 3.1 prints it but cannot read it back). Every member
// is required, once.
func (p *parser) pushMPLS(int) (Action, error) {
	if err := p.expect("("); err != nil {
		return Action{}, err
	}
	var v [5]uint64
	var seen int
	names := [5]string{"label", "tc", "ttl", "bos", "eth_type"}
	for i := 0; p.peek() != ')'; i++ {
		if i > 0 {
			if err := p.expect(","); err != nil {
				return Action{}, err
			}
		}
		kstart := p.pos
		key := p.name()
		idx := -1
		for j, n := range names {
			if n == key {
				idx = j
			}
		}
		if idx < 0 {
			return Action{}, p.errAt(kstart, "unknown push_mpls member %q", key)
		}
		if seen&(1<<idx) != 0 {
			return Action{}, p.errAt(kstart, "duplicate push_mpls member %q", key)
		}
		seen |= 1 << idx
		if err := p.expect("="); err != nil {
			return Action{}, err
		}
		x, err := p.uint(mplsArgBits[key])
		if err != nil {
			return Action{}, err
		}
		v[idx] = x
	}
	start := p.pos
	p.pos++
	if seen != 1<<len(names)-1 {
		return Action{}, p.errAt(start, "push_mpls needs label, tc, ttl, bos and eth_type")
	}
	if !IsMPLS(uint16(v[4])) {
		return Action{}, p.errAt(start, "push_mpls eth_type %#x is not an MPLS Ethertype", v[4])
	}
	return PushMPLS(MPLSLSE(uint32(v[0]), uint8(v[1]), uint8(v[2]), v[3] != 0), uint16(v[4])), nil
}

// popMPLS parses "(eth_type=E)".
func (p *parser) popMPLS(int) (Action, error) {
	if err := p.expect("(eth_type="); err != nil {
		return Action{}, err
	}
	v, err := p.uint(16)
	if err != nil {
		return Action{}, err
	}
	if err := p.expect(")"); err != nil {
		return Action{}, err
	}
	return PopMPLS(uint16(v)), nil
}
