package odp

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/datapath/packet"
)

// Field is the header or metadata a set action writes.
type Field uint8

// Settable fields, named as in the text format (set(eth(...)) etc.).
const (
	FieldInvalid Field = iota
	FieldEth
	FieldIPv4
	FieldIPv6
	FieldTCP
	FieldUDP
	FieldSCTP
	FieldICMP
	FieldICMPv6
	FieldARP
	FieldND
	FieldSkbMark
	FieldSkbPriority
	FieldTunnel
	FieldMPLS
	numFields
)

// ImageSize is the size of a SetField's value and mask images.
const ImageSize = 56

// SetField is the payload of a set or masked set action: a value image
// and a mask image, laid out per field so that applying them to a packet
// is a masked byte merge. For packet headers the image IS the header
// layout (eth: dst,src; ipv4: the 20-byte header; ipv6: the 40-byte
// header; tcp/udp/sctp: the two ports; icmp: type,code; arp: the 28-byte
// Ethernet/IPv4 ARP body), with pseudo-fields that the datapath never
// writes (ipv4/ipv6 frag) kept past the header. Mask bits that are set
// select the value bits to write.
//
// mpls is the 4-byte label stack entry.
//
// Layouts that are not headers: nd (target at 0, sll at 16, tll at 22),
// skb_mark/skb_priority (a 4-byte big-endian word), tunnel (see
// tunnelSubs).
type SetField struct {
	Field     Field
	Val, Mask [ImageSize]byte
	// tun is the tunnel key decoded from the image once, for FieldTunnel.
	tun *packet.Tunnel
	// geneve holds a tunnel set's raw Geneve options (geneveLen bytes).
	geneve    [packet.TunMetaBytes]byte
	geneveLen uint8
}

// Tunnel returns the tunnel key of a set(tunnel(...)), or nil.
func (s *SetField) Tunnel() *packet.Tunnel { return s.tun }

// valFmt says how a subfield is printed and parsed.
type valFmt uint8

const (
	fmtDec     valFmt = iota // decimal value, hex mask
	fmtHex                   // %#x value and mask
	fmtHex0x                 // 0x%x: "0x0" for zero (tun_id)
	fmtIPv4                  // dotted quad
	fmtIPv6                  // RFC 5952
	fmtMAC                   // xx:xx:xx:xx:xx:xx
	fmtFrag                  // no, first, later
	fmtTunFlag               // flags(df|csum|key|oam), tunnel only
)

// subfield is one name=value member of a set field's text, located in the
// image. Integers are big-endian of size bytes, then shifted right by
// shift and limited to bits; byte strings (MAC, IPv6) have bits == 0.
type subfield struct {
	name  string
	off   uint8
	size  uint8
	shift uint8
	bits  uint8
	fmt   valFmt
}

func (s *subfield) isBytes() bool { return s.fmt == fmtMAC || s.fmt == fmtIPv6 }

// fullMask returns the all-ones value of an integer subfield.
func (s *subfield) fullMask() uint64 {
	if s.bits == 64 {
		return ^uint64(0)
	}
	return 1<<s.bits - 1
}

// get reads an integer subfield from an image.
func (s *subfield) get(img *[ImageSize]byte) uint64 {
	var v uint64
	for _, b := range img[s.off : s.off+s.size] {
		v = v<<8 | uint64(b)
	}
	return v >> s.shift & s.fullMask()
}

// put writes an integer subfield into an image, leaving other bits.
func (s *subfield) put(img *[ImageSize]byte, v uint64) {
	var w uint64
	b := img[s.off : s.off+s.size]
	for _, x := range b {
		w = w<<8 | uint64(x)
	}
	m := s.fullMask() << s.shift
	w = w&^m | (v<<s.shift)&m
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = byte(w)
		w >>= 8
	}
}

// fieldDesc describes one settable field's text and image.
type fieldDesc struct {
	name string
	// bare fields print their single value without a name: skb_mark(0x1).
	bare bool
	// maskable is false for fields OVS only sets whole (tunnel).
	maskable bool
	// everyMember: a masked set prints every member as value/mask, the
	// masks of members narrower than a byte in bare hex (OVS's
	// format_mpls), instead of only the members with a non-zero mask.
	everyMember bool
	subs        []subfield
}

var ipv4Subs = []subfield{
	{name: "src", off: 12, size: 4, bits: 32, fmt: fmtIPv4},
	{name: "dst", off: 16, size: 4, bits: 32, fmt: fmtIPv4},
	{name: "proto", off: 9, size: 1, bits: 8, fmt: fmtDec},
	{name: "tos", off: 1, size: 1, bits: 8, fmt: fmtHex},
	{name: "ttl", off: 8, size: 1, bits: 8, fmt: fmtDec},
	{name: "frag", off: 20, size: 1, bits: 8, fmt: fmtFrag},
}

var ipv6Subs = []subfield{
	{name: "src", off: 8, size: 16, fmt: fmtIPv6},
	{name: "dst", off: 24, size: 16, fmt: fmtIPv6},
	{name: "label", off: 0, size: 4, bits: 20, fmt: fmtHex},
	{name: "proto", off: 6, size: 1, bits: 8, fmt: fmtDec},
	{name: "tclass", off: 0, size: 2, shift: 4, bits: 8, fmt: fmtHex},
	{name: "hlimit", off: 7, size: 1, bits: 8, fmt: fmtDec},
	{name: "frag", off: 40, size: 1, bits: 8, fmt: fmtFrag},
}

var portSubs = []subfield{
	{name: "src", off: 0, size: 2, bits: 16, fmt: fmtDec},
	{name: "dst", off: 2, size: 2, bits: 16, fmt: fmtDec},
}

var icmpSubs = []subfield{
	{name: "type", off: 0, size: 1, bits: 8, fmt: fmtDec},
	{name: "code", off: 1, size: 1, bits: 8, fmt: fmtDec},
}

var arpSubs = []subfield{
	{name: "sip", off: 14, size: 4, bits: 32, fmt: fmtIPv4},
	{name: "tip", off: 24, size: 4, bits: 32, fmt: fmtIPv4},
	{name: "op", off: 6, size: 2, bits: 16, fmt: fmtDec},
	{name: "sha", off: 8, size: 6, fmt: fmtMAC},
	{name: "tha", off: 18, size: 6, fmt: fmtMAC},
}

var ndSubs = []subfield{
	{name: "target", off: 0, size: 16, fmt: fmtIPv6},
	{name: "sll", off: 16, size: 6, fmt: fmtMAC},
	{name: "tll", off: 22, size: 6, fmt: fmtMAC},
}

// MPLS label stack entry members, in the order OVS prints them.
var mplsSubs = []subfield{
	{name: "label", off: 0, size: 4, shift: 12, bits: 20, fmt: fmtDec},
	{name: "tc", off: 0, size: 4, shift: 9, bits: 3, fmt: fmtDec},
	{name: "ttl", off: 0, size: 4, shift: 0, bits: 8, fmt: fmtDec},
	{name: "bos", off: 0, size: 4, shift: 8, bits: 1, fmt: fmtDec},
}

var wordSubs = []subfield{{name: "", off: 0, size: 4, bits: 32, fmt: fmtHex}}

// Tunnel image layout, in the order OVS prints the members.
var tunnelSubs = []subfield{
	{name: "tun_id", off: 0, size: 8, bits: 64, fmt: fmtHex0x},
	{name: "src", off: 8, size: 4, bits: 32, fmt: fmtIPv4},
	{name: "dst", off: 12, size: 4, bits: 32, fmt: fmtIPv4},
	{name: "ipv6_src", off: 16, size: 16, fmt: fmtIPv6},
	{name: "ipv6_dst", off: 32, size: 16, fmt: fmtIPv6},
	{name: "tos", off: 48, size: 1, bits: 8, fmt: fmtHex},
	{name: "ttl", off: 49, size: 1, bits: 8, fmt: fmtDec},
	{name: "tp_src", off: 50, size: 2, bits: 16, fmt: fmtDec},
	{name: "tp_dst", off: 52, size: 2, bits: 16, fmt: fmtDec},
	{name: "flags", off: 54, size: 2, bits: 16, fmt: fmtTunFlag},
}

var fields = [numFields]fieldDesc{
	FieldEth: {name: "eth", maskable: true, subs: []subfield{
		{name: "src", off: 6, size: 6, fmt: fmtMAC},
		{name: "dst", off: 0, size: 6, fmt: fmtMAC},
	}},
	FieldIPv4:        {name: "ipv4", maskable: true, subs: ipv4Subs},
	FieldIPv6:        {name: "ipv6", maskable: true, subs: ipv6Subs},
	FieldTCP:         {name: "tcp", maskable: true, subs: portSubs},
	FieldUDP:         {name: "udp", maskable: true, subs: portSubs},
	FieldSCTP:        {name: "sctp", maskable: true, subs: portSubs},
	FieldICMP:        {name: "icmp", maskable: true, subs: icmpSubs},
	FieldICMPv6:      {name: "icmpv6", maskable: true, subs: icmpSubs},
	FieldARP:         {name: "arp", maskable: true, subs: arpSubs},
	FieldND:          {name: "nd", maskable: true, subs: ndSubs},
	FieldSkbMark:     {name: "skb_mark", bare: true, maskable: true, subs: wordSubs},
	FieldSkbPriority: {name: "skb_priority", bare: true, maskable: true, subs: wordSubs},
	FieldTunnel:      {name: "tunnel", subs: tunnelSubs},
	FieldMPLS:        {name: "mpls", maskable: true, everyMember: true, subs: mplsSubs},
}

// String returns the field's text name.
func (f Field) String() string {
	if f > FieldInvalid && f < numFields {
		return fields[f].name
	}
	return "invalid"
}

func fieldByName(name string) Field {
	for f := FieldInvalid + 1; f < numFields; f++ {
		if fields[f].name == name {
			return f
		}
	}
	return FieldInvalid
}

// subMaskZero reports whether the subfield's mask is all zero.
func subMaskZero(s *subfield, mask *[ImageSize]byte) bool {
	if s.isBytes() {
		for _, b := range mask[s.off : s.off+s.size] {
			if b != 0 {
				return false
			}
		}
		return true
	}
	return s.get(mask) == 0
}

// subMaskFull reports whether the subfield's mask is all ones.
func subMaskFull(s *subfield, mask *[ImageSize]byte) bool {
	if s.isBytes() {
		for _, b := range mask[s.off : s.off+s.size] {
			if b != 0xff {
				return false
			}
		}
		return true
	}
	return s.get(mask) == s.fullMask()
}

// isFull reports whether every subfield of the set is fully masked, which
// makes it a plain set rather than a masked set (as OVS decides).
func (s *SetField) isFull() bool {
	if s.Field >= numFields {
		return true
	}
	for i := range fields[s.Field].subs {
		if !subMaskFull(&fields[s.Field].subs[i], &s.Mask) {
			return false
		}
	}
	return true
}

// setAction wraps a SetField in a set or masked set action.
func setAction(s *SetField) Action {
	if s.Field == FieldTunnel {
		s.tun = tunnelFromImage(&s.Val)
		return Action{Kind: KindSet, Set: s}
	}
	if s.isFull() {
		return Action{Kind: KindSet, Set: s}
	}
	return Action{Kind: KindSetMasked, Set: s}
}

func newTunnelSet(t *packet.Tunnel) *SetField {
	s := &SetField{Field: FieldTunnel}
	v, m := &s.Val, &s.Mask
	put := func(i int, x uint64) {
		if x != 0 {
			tunnelSubs[i].put(v, x)
			tunnelSubs[i].put(m, tunnelSubs[i].fullMask())
		}
	}
	put(0, t.ID)
	put(1, uint64(t.Src))
	put(2, uint64(t.Dst))
	if t.IPv6Src != ([16]byte{}) {
		copy(v[16:32], t.IPv6Src[:])
		fillOnes(m[16:32])
	}
	if t.IPv6Dst != ([16]byte{}) {
		copy(v[32:48], t.IPv6Dst[:])
		fillOnes(m[32:48])
	}
	put(5, uint64(t.Tos))
	put(6, uint64(t.TTL))
	put(7, uint64(t.TpSrc))
	put(8, uint64(t.TpDst))
	// Flags are always given, as the translator emits them.
	tunnelSubs[9].put(v, uint64(t.Flags))
	tunnelSubs[9].put(m, tunnelSubs[9].fullMask())
	s.tun = tunnelFromImage(v)
	return s
}

func fillOnes(b []byte) {
	for i := range b {
		b[i] = 0xff
	}
}

func tunnelFromImage(v *[ImageSize]byte) *packet.Tunnel {
	t := &packet.Tunnel{
		ID:    binary.BigEndian.Uint64(v[0:]),
		Src:   binary.BigEndian.Uint32(v[8:]),
		Dst:   binary.BigEndian.Uint32(v[12:]),
		Tos:   v[48],
		TTL:   v[49],
		TpSrc: binary.BigEndian.Uint16(v[50:]),
		TpDst: binary.BigEndian.Uint16(v[52:]),
		Flags: binary.BigEndian.Uint16(v[54:]),
	}
	copy(t.IPv6Src[:], v[16:32])
	copy(t.IPv6Dst[:], v[32:48])
	return t
}

// Tunnel flag names in print order, as OVS's flow_tun_flag_to_string.
// OVS prints oam first (its lowest FLOW_TNL_F_* bit), whatever our bit
// values are.
var tunFlagNames = []struct {
	name string
	bit  uint16
}{
	{"oam", packet.TunFlagOAM},
	{"df", packet.TunFlagDontFragment},
	{"csum", packet.TunFlagCsum},
	{"key", packet.TunFlagKey},
}

var fragNames = [...]string{"no", "first", "later"}

// NewSet returns a set action for any field from value and mask images
// in the layout SetField documents: a plain set when every subfield is
// fully masked, a masked set otherwise.
func NewSet(f Field, val, mask *[ImageSize]byte) Action {
	return setAction(&SetField{Field: f, Val: *val, Mask: *mask})
}

// SetEth returns a masked set of the Ethernet addresses; a zero mask
// leaves that address alone.
func SetEth(src, srcMask, dst, dstMask [6]byte) Action {
	s := &SetField{Field: FieldEth}
	copy(s.Val[0:6], dst[:])
	copy(s.Mask[0:6], dstMask[:])
	copy(s.Val[6:12], src[:])
	copy(s.Mask[6:12], srcMask[:])
	return setAction(s)
}

// SetIPv4 returns a masked set of IPv4 addresses, TOS and TTL.
func SetIPv4(src, srcMask, dst, dstMask uint32, tos, tosMask, ttl, ttlMask uint8) Action {
	s := &SetField{Field: FieldIPv4}
	binary.BigEndian.PutUint32(s.Val[12:], src)
	binary.BigEndian.PutUint32(s.Mask[12:], srcMask)
	binary.BigEndian.PutUint32(s.Val[16:], dst)
	binary.BigEndian.PutUint32(s.Mask[16:], dstMask)
	s.Val[1], s.Mask[1] = tos, tosMask
	s.Val[8], s.Mask[8] = ttl, ttlMask
	return setAction(s)
}

// SetPorts returns a masked set of L4 ports; f is FieldTCP, FieldUDP or
// FieldSCTP.
func SetPorts(f Field, src, srcMask, dst, dstMask uint16) Action {
	s := &SetField{Field: f}
	binary.BigEndian.PutUint16(s.Val[0:], src)
	binary.BigEndian.PutUint16(s.Mask[0:], srcMask)
	binary.BigEndian.PutUint16(s.Val[2:], dst)
	binary.BigEndian.PutUint16(s.Mask[2:], dstMask)
	return setAction(s)
}

// SetSkbMark returns a masked set of the packet mark.
func SetSkbMark(v, mask uint32) Action { return setWord(FieldSkbMark, v, mask) }

// SetSkbPriority returns a masked set of the packet priority.
func SetSkbPriority(v, mask uint32) Action { return setWord(FieldSkbPriority, v, mask) }

func setWord(f Field, v, mask uint32) Action {
	s := &SetField{Field: f}
	binary.BigEndian.PutUint32(s.Val[0:], v)
	binary.BigEndian.PutUint32(s.Mask[0:], mask)
	return setAction(s)
}
