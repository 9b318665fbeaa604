package flow

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/datapath/packet"
)

// Extraction follows Open vSwitch's miniflow_extract (lib/flow.c) field
// by field, including the way it treats short and malformed headers,
// because a megaflow installed by gvs must match exactly the packets a
// megaflow installed by Open vSwitch would. The rules, in the order they
// apply:
//
//   - Metadata is copied first, whatever the bytes hold. The tunnel key is
//     copied only when a tunnel destination (IPv4 or IPv6) is set, and the
//     tunnel metadata only when some option is present. ct_zone, ct_mark
//     and ct_label are copied only when ct_state is non-zero; the
//     original-direction tuple (ct_nw_*, ct_ipv6_*, ct_tp_*) only when, in
//     addition, the packet has a valid IP header and ct_nw_proto is
//     non-zero. The tuple's family is taken to be the packet's (Metadata
//     has no separate flag, unlike Open vSwitch's ct_orig_tuple_ipv6).
//     ct_tp_* also needs the L4 header that carries ports or ICMP
//     type/code to be valid; IGMP and ND never get them. A later fragment
//     gets them if the tracked protocol has them (Open vSwitch 3.6 and the
//     kernel datapath; the 3.1 userspace datapath drops them).
//   - Fewer than 14 bytes: nothing but metadata; every offset unset.
//   - VLAN: up to two 0x8100/0x88a8 tags. A tag is taken only if the tag
//     and the Ethertype after it (6 bytes) are present. The TCI is stored
//     with VLANCFI set, which therefore means "tag present" and loses the
//     wire CFI/DEI bit. A third tag is left in place: EthType is its TPID.
//   - Ethertype: values >= 0x0600 are taken as is. A smaller value is an
//     802.3 length: the frame is LLC; with an LLC/SNAP header AA-AA-03 and
//     OUI 00-00-00 (8 bytes) the SNAP type is the Ethertype (and L3 starts
//     after SNAP), otherwise EthType is EthTypeNone and L3 starts after
//     the length field. A SNAP type below 0x0600 also gives EthTypeNone
//     (with L3 after SNAP).
//   - MPLS (0x8847/0x8848): L2_5 is the first label; label stack entries
//     are skipped up to and including the one with bottom-of-stack (or
//     until fewer than 4 bytes remain); L3 is set after them; nothing
//     beyond MPLS is parsed. MPLSLSE holds the first entry, if complete.
//   - L3 is set for every frame that has a full Ethernet header.
//   - IPv4 is used only if: >= 20 bytes, IHL*4 >= 20 and present, total
//     length >= IHL*4 and present, and at most 65535 bytes of trailing
//     padding. The version nibble and checksum are not checked. Otherwise
//     only EthType and L3 are set. Bytes beyond the total length are
//     padding and never parsed.
//   - IPv6 is used only if the 40-byte header and its payload length are
//     present (with at most 65535 bytes of padding, never parsed). The
//     addresses are then set even if the extension headers turn out to be
//     malformed; in that case nothing else of L3 (label, tos, ttl, proto,
//     frag) is set and L4 stays unset. Extension headers hop-by-hop (0),
//     routing (43) and destination options (60) are (len+1)*8 bytes, AH
//     (51) is (len+2)*4 bytes, fragment (44) is 8 bytes; each needs 8
//     bytes present to be read. A fragment header with a non-zero
//     offset/flags word sets FragAny; a non-zero offset also sets
//     FragLater and stops parsing with NwProto 44 (as Open vSwitch does).
//   - L4 is set after a valid IP header. A later fragment has no L4
//     fields. Otherwise each protocol needs its full fixed header inside
//     the IP payload: TCP 20 bytes and data offset*4 (>= 20) present, UDP
//     8, SCTP 12, ICMP 8, IGMP 8, ICMPv6 8; a shorter one leaves its
//     fields zero. L7 (not in Open vSwitch) is set past that header.
//   - ARP and RARP (28 bytes, hardware type 1, protocol 0x0800, lengths 6
//     and 4 only): addresses always; the opcode goes into NwProto only if
//     it is <= 0xff. L4 stays unset.
//   - ICMPv6 Neighbor Solicitation/Advertisement (type 135/136, code 0):
//     the 32-bit reserved word (the R, S and O flags and 29 reserved bits)
//     goes into NDReserved, the target (if its 16 bytes
//     are present) into NDTarget. Options are walked while >= 8 bytes
//     remain; a zero or overlong option length ends the walk keeping what
//     was found. An 8-byte source (1) / target (2) link-layer address
//     option fills ArpSha / ArpTha, the first of them found sets
//     NDOptType. A second non-zero source or target address makes the
//     packet invalid: NDTarget, ArpSha and ArpTha are cleared (NDOptType
//     and NDReserved stay), as Open vSwitch does.
//   - Ethernet padding after an IP packet is not recorded (Open vSwitch
//     keeps its length as l2_pad_size; packet.Packet has no such field).

// Header sizes used by extraction.
const (
	ethHeaderLen     = 14
	vlanTagLen       = 4
	llcSnapLen       = 8
	mplsLSELen       = 4
	arpEthIPv4Len    = 28
	ipv4MinHeaderLen = 20
	ipv6HeaderLen    = 40
	ipv6ExtMinLen    = 8
	ipv6FragLen      = 8
	tcpMinHeaderLen  = 20
	icmpv6HeaderLen  = 8
	ndTargetLen      = 16
	ndOptLen         = 8

	// maxVLANs is how many tags are extracted (FLOW_MAX_VLAN_HEADERS).
	maxVLANs = len(Key{}.VLANs)
	// maxPad bounds the bytes allowed after an IP packet's stated length,
	// as in Open vSwitch, which keeps the pad size in a uint16.
	maxPad = 0xffff
)

// Field offsets inside the headers extraction reads (RFC 791, 8200, 826,
// 793, 4861; the 802.2 LLC/SNAP header).
const (
	ethDstOff, ethSrcOff, ethTypeOff = 0, 6, 12

	llcDSAPOff, llcSSAPOff, llcCtlOff, snapOUIOff, snapTypeOff = 0, 1, 2, 3, 6

	ipv4VerIHLOff, ipv4TOSOff, ipv4TotLenOff, ipv4FragOff = 0, 1, 2, 6
	ipv4TTLOff, ipv4ProtoOff, ipv4SrcOff, ipv4DstOff      = 8, 9, 12, 16

	ipv6VerTCFLOff, ipv6PayloadLenOff, ipv6NextOff = 0, 4, 6
	ipv6HopLimitOff, ipv6SrcOff, ipv6DstOff        = 7, 8, 24

	ipv6ExtNextOff, ipv6ExtLenOff, ipv6FragOffLgOff = 0, 1, 2

	arpHrdOff, arpProOff, arpHlnOff, arpPlnOff, arpOpOff = 0, 2, 4, 5, 6
	arpShaOff, arpSpaOff, arpThaOff, arpTpaOff           = 8, 14, 18, 24

	// TCP, UDP and SCTP share the port positions; ICMP, IGMP and ICMPv6
	// the type and code positions.
	l4SrcPortOff, l4DstPortOff, tcpOffFlagsOff = 0, 2, 12
	icmpTypeOff, icmpCodeOff, igmpGroupOff     = 0, 1, 4
	ndReservedOff, ndOptTypeOff, ndOptLenOff   = 4, 0, 1
	ndOptLLAOff                                = 2
)

// IPv6 extension headers that extraction walks through.
const (
	ipProtoHopOpts  = 0
	ipProtoRouting  = 43
	ipProtoFragment = 44
	ipProtoAH       = 51
	ipProtoDstOpts  = 60
)

// ICMPv6 Neighbor Discovery types and options.
const (
	icmpv6NeighborSolicit = 135
	icmpv6NeighborAdvert  = 136
	ndOptSourceLLA        = 1
	ndOptTargetLLA        = 2
)

// ipv6ExtKind classifies the extension headers by how their length is coded.
type ipv6ExtKind uint8

const (
	extNone ipv6ExtKind = iota // terminal or unknown header: stop
	extOpts                    // (len+1)*8 bytes: hop-by-hop, routing, dst opts
	extAH                      // (len+2)*4 bytes
	extFrag                    // fixed 8 bytes
)

var ipv6ExtKinds = [256]ipv6ExtKind{
	ipProtoHopOpts:  extOpts,
	ipProtoRouting:  extOpts,
	ipProtoDstOpts:  extOpts,
	ipProtoAH:       extAH,
	ipProtoFragment: extFrag,
}

// l4HeaderLen is the fixed header length each L4 protocol must have for
// its fields to be extracted (TCP's is the minimum; its data offset may
// ask for more). Zero means the protocol has no L4 fields.
var l4HeaderLen = [256]uint8{
	IPProtoTCP:    tcpMinHeaderLen,
	IPProtoUDP:    8,
	IPProtoSCTP:   12,
	IPProtoICMP:   8,
	IPProtoIGMP:   8,
	IPProtoICMPv6: icmpv6HeaderLen,
}

// ctTpCarriers are the original-direction protocols whose ct_tp_src and
// ct_tp_dst Open vSwitch puts in the key of a later fragment.
var ctTpCarriers = [256]bool{
	IPProtoTCP:    true,
	IPProtoUDP:    true,
	IPProtoSCTP:   true,
	IPProtoICMP:   true,
	IPProtoICMPv6: true,
}

func be16(b []byte) uint16 { return binary.BigEndian.Uint16(b) }
func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }

// offset16 converts a frame offset to a packet offset; frames longer than
// a uint16 can express (not produced by gvs ports) leave it unset.
func offset16(off int) uint16 {
	if off >= packet.OffsetUnset {
		return packet.OffsetUnset
	}
	return uint16(off)
}

// Extract overwrites *k with the flow key of p: p's metadata, then the
// header fields parsed from p's bytes. It sets p.L2_5, p.L3, p.L4 and p.L7
// (OffsetUnset when absent). It never reads outside p.Data(), never
// panics and never allocates. A truncated or malformed packet yields the
// same key prefix that Open vSwitch extracts (see the rules above).
func Extract(p *packet.Packet, k *Key) {
	*k = Key{}
	ct := extractMetadata(&p.Md, k)
	p.ResetOffsets()

	data := p.Data()
	if len(data) < ethHeaderLen {
		return
	}
	copy(k.EthDst[:], data[ethDstOff:ethDstOff+6])
	copy(k.EthSrc[:], data[ethSrcOff:ethSrcOff+6])

	off, dlType := parseL2(data, k)
	k.EthType = dlType

	if dlType == EthTypeMPLS || dlType == EthTypeMPLSMcst {
		p.L2_5 = offset16(off)
		off = parseMPLS(data, off, k)
	}
	p.L3 = offset16(off)

	switch dlType {
	case EthTypeIPv4:
		extractIPv4(p, data, off, k, ct)
	case EthTypeIPv6:
		extractIPv6(p, data, off, k, ct)
	case EthTypeARP, EthTypeRARP:
		extractARP(data[off:], k)
	}
}

// ctTuple is the part of the conntrack original-direction tuple that is
// put in the key only once L3/L4 headers are known.
type ctTuple struct {
	md    *packet.Metadata
	valid bool // ct_state is non-zero
}

// extractMetadata copies p's metadata into k, under Open vSwitch's rules.
func extractMetadata(md *packet.Metadata, k *Key) ctTuple {
	k.RecircID = md.RecircID
	k.DPHash = md.DPHash
	k.InPort = md.InPort
	k.PktMark = md.PktMark
	k.SkbPriority = md.SkbPriority
	if md.CtState != 0 {
		k.CtState = md.CtState
		k.CtZone = md.CtZone
		k.CtMark = md.CtMark
		k.CtLabel = md.CtLabel
	}
	if t := &md.Tunnel; t.Dst != 0 || t.IPv6Dst != [16]byte{} {
		k.TunID = t.ID
		k.TunSrc = t.Src
		k.TunDst = t.Dst
		k.TunIPv6Src = t.IPv6Src
		k.TunIPv6Dst = t.IPv6Dst
		k.TunFlags = t.Flags
		k.TunTos = t.Tos
		k.TunTTL = t.TTL
		k.TunTpSrc = t.TpSrc
		k.TunTpDst = t.TpDst
		k.TunGbpID = t.GbpID
		k.TunGbpFlags = t.GbpFlag
		if t.MetaPresent != 0 {
			k.TunMetaPresent = t.MetaPresent
			k.TunMeta = t.Meta
		}
	}
	return ctTuple{md: md, valid: md.CtState != 0}
}

// parseL2 reads VLAN tags and the Ethertype (or 802.3 LLC/SNAP) after the
// MAC addresses and returns the offset of what follows and the Ethertype.
// len(data) >= ethHeaderLen.
func parseL2(data []byte, k *Key) (int, uint16) {
	off := ethTypeOff
	// Invariant: data[off:off+2] is present.
	for n := 0; n < maxVLANs; n++ {
		tpid := be16(data[off:])
		if tpid != EthTypeVLAN && tpid != EthTypeQinQ {
			break
		}
		if len(data)-off < vlanTagLen+2 {
			break
		}
		k.VLANs[n] = VLAN{TPID: tpid, TCI: be16(data[off+2:]) | VLANCFI}
		off += vlanTagLen
	}
	typ := be16(data[off:])
	off += 2
	if typ >= EthTypeMin {
		return off, typ
	}
	// 802.3: typ is a length. Only LLC/SNAP with the Ethernet OUI names
	// an Ethertype.
	if len(data)-off < llcSnapLen {
		return off, EthTypeNone
	}
	llc := data[off : off+llcSnapLen]
	if llc[llcDSAPOff] != 0xaa || llc[llcSSAPOff] != 0xaa || llc[llcCtlOff] != 0x03 ||
		llc[snapOUIOff] != 0 || llc[snapOUIOff+1] != 0 || llc[snapOUIOff+2] != 0 {
		return off, EthTypeNone
	}
	off += llcSnapLen
	if typ = be16(llc[snapTypeOff:]); typ >= EthTypeMin {
		return off, typ
	}
	return off, EthTypeNone
}

// parseMPLS records the first label stack entry and returns the offset
// just past the stack (or past the last complete entry).
func parseMPLS(data []byte, off int, k *Key) int {
	first := true
	for len(data)-off >= mplsLSELen {
		lse := be32(data[off:])
		off += mplsLSELen
		if first {
			k.MPLSLSE = lse
			first = false
		}
		if lse&0x100 != 0 { // bottom of stack
			break
		}
	}
	return off
}

// extractARP fills the ARP fields of an Ethernet/IPv4 ARP or RARP packet.
func extractARP(b []byte, k *Key) {
	if len(b) < arpEthIPv4Len {
		return
	}
	b = b[:arpEthIPv4Len]
	if be16(b[arpHrdOff:]) != 1 || be16(b[arpProOff:]) != EthTypeIPv4 || b[arpHlnOff] != 6 || b[arpPlnOff] != 4 {
		return
	}
	k.NwSrc = be32(b[arpSpaOff:])
	k.NwDst = be32(b[arpTpaOff:])
	// Only the low 8 bits of the opcode can be matched.
	if op := be16(b[arpOpOff:]); op <= 0xff {
		k.NwProto = uint8(op)
	}
	copy(k.ArpSha[:], b[arpShaOff:arpShaOff+6])
	copy(k.ArpTha[:], b[arpThaOff:arpThaOff+6])
}

// extractIPv4 parses the IPv4 header at data[off:] and what follows.
func extractIPv4(p *packet.Packet, data []byte, off int, k *Key, ct ctTuple) {
	b := data[off:]
	if len(b) < ipv4MinHeaderLen {
		return
	}
	ihl := int(b[ipv4VerIHLOff]&0x0f) * 4
	if ihl < ipv4MinHeaderLen || len(b) < ihl {
		return
	}
	totLen := int(be16(b[ipv4TotLenOff:]))
	if totLen > len(b) || ihl > totLen || len(b)-totLen > maxPad {
		return
	}
	b = b[:totLen] // never parse Ethernet padding

	k.NwSrc = be32(b[ipv4SrcOff:])
	k.NwDst = be32(b[ipv4DstOff:])
	k.NwTos = b[ipv4TOSOff]
	k.NwTTL = b[ipv4TTLOff]
	proto := b[ipv4ProtoOff]
	k.NwProto = proto
	if fo := be16(b[ipv4FragOff:]); fo&0x3fff != 0 { // MF or offset
		k.NwFrag = FragAny
		if fo&0x1fff != 0 {
			k.NwFrag |= FragLater
		}
	}
	if ct.valid {
		md := ct.md
		k.CtNwProto = md.CtNwProto
		if md.CtNwProto != 0 {
			k.CtNwSrc = md.CtNwSrc
			k.CtNwDst = md.CtNwDst
		}
	}
	p.L4 = offset16(off + ihl)
	extractL4(p, b[ihl:], off+ihl, proto, k, ct)
}

// extractIPv6 parses the IPv6 header at data[off:], its extension headers
// and what follows.
func extractIPv6(p *packet.Packet, data []byte, off int, k *Key, ct ctTuple) {
	b := data[off:]
	if len(b) < ipv6HeaderLen {
		return
	}
	end := ipv6HeaderLen + int(be16(b[ipv6PayloadLenOff:]))
	if end > len(b) || len(b)-end > maxPad {
		return
	}
	b = b[:end] // never parse Ethernet padding

	copy(k.IPv6Src[:], b[ipv6SrcOff:ipv6SrcOff+16])
	copy(k.IPv6Dst[:], b[ipv6DstOff:ipv6DstOff+16])
	if ct.valid {
		md := ct.md
		k.CtNwProto = md.CtNwProto
		if md.CtNwProto != 0 {
			k.CtIPv6Src = md.CtIPv6Src
			k.CtIPv6Dst = md.CtIPv6Dst
		}
	}
	vtcfl := be32(b[ipv6VerTCFLOff:])
	hlim := b[ipv6HopLimitOff]

	// Walk the extension headers. Each must have 8 bytes present before
	// its next-header and length bytes are read.
	proto := b[ipv6NextOff]
	var frag uint8
	pos := ipv6HeaderLen
	for {
		kind := ipv6ExtKinds[proto]
		if kind == extNone {
			break
		}
		h := b[pos:]
		if len(h) < ipv6ExtMinLen {
			return
		}
		var n int
		switch kind {
		case extOpts:
			n = (int(h[ipv6ExtLenOff]) + 1) * 8
		case extAH:
			n = (int(h[ipv6ExtLenOff]) + 2) * 4
		default: // extFrag
			n = ipv6FragLen
		}
		if len(h) < n {
			return
		}
		proto = h[ipv6ExtNextOff]
		pos += n
		if kind == extFrag {
			if offlg := be16(h[ipv6FragOffLgOff:]); offlg != 0 {
				frag = FragAny
				if offlg&0xfff8 != 0 {
					// Only the first fragment is parsed further.
					frag |= FragLater
					proto = ipProtoFragment
					break
				}
			}
		}
	}

	k.IPv6Label = vtcfl & 0x000fffff
	k.NwTos = uint8(vtcfl >> 20)
	k.NwTTL = hlim
	k.NwProto = proto
	k.NwFrag = frag
	p.L4 = offset16(off + pos)
	extractL4(p, b[pos:], off+pos, proto, k, ct)
}

// extractL4 fills the L4 fields from b, the IP payload (without padding)
// at frame offset off.
func extractL4(p *packet.Packet, b []byte, off int, proto uint8, k *Key, ct ctTuple) {
	var ctProto uint8
	if ct.valid {
		ctProto = ct.md.CtNwProto
	}
	if k.NwFrag&FragLater != 0 {
		// Open vSwitch keeps the conntrack ports of a later fragment if the
		// tracked protocol has ports, judging ND on the fragment's bytes.
		if ctTpCarriers[ctProto] && !(ctProto == IPProtoICMPv6 && isND(b)) {
			k.CtTpSrc = ct.md.CtTpSrc
			k.CtTpDst = ct.md.CtTpDst
		}
		return
	}
	hl := int(l4HeaderLen[proto])
	if hl == 0 || len(b) < hl {
		return
	}
	switch proto {
	case IPProtoTCP:
		hl = int(b[tcpOffFlagsOff]>>4) * 4
		if hl < tcpMinHeaderLen || len(b) < hl {
			return
		}
		k.TCPFlags = be16(b[tcpOffFlagsOff:]) & 0x0fff
		k.TpSrc = be16(b[l4SrcPortOff:])
		k.TpDst = be16(b[l4DstPortOff:])
	case IPProtoUDP, IPProtoSCTP:
		k.TpSrc = be16(b[l4SrcPortOff:])
		k.TpDst = be16(b[l4DstPortOff:])
	case IPProtoICMP:
		k.TpSrc = uint16(b[icmpTypeOff])
		k.TpDst = uint16(b[icmpCodeOff])
	case IPProtoIGMP:
		k.TpSrc = uint16(b[icmpTypeOff])
		k.TpDst = uint16(b[icmpCodeOff])
		k.IGMPGroup = be32(b[igmpGroupOff:])
		ctProto = 0 // no conntrack ports for IGMP
	case IPProtoICMPv6:
		k.TpSrc = uint16(b[icmpTypeOff])
		k.TpDst = uint16(b[icmpCodeOff])
		if isND(b) {
			extractND(b, k)
			ctProto = 0 // no conntrack ports for ND
		}
	}
	if ctProto != 0 {
		k.CtTpSrc = ct.md.CtTpSrc
		k.CtTpDst = ct.md.CtTpDst
	}
	p.L7 = offset16(off + hl)
}

// isND reports whether b starts with an ICMPv6 Neighbor Solicitation or
// Advertisement type and code. Fewer than 2 bytes are not ND.
func isND(b []byte) bool {
	return len(b) >= 2 && b[icmpCodeOff] == 0 &&
		(b[icmpTypeOff] == icmpv6NeighborSolicit || b[icmpTypeOff] == icmpv6NeighborAdvert)
}

// extractND fills the Neighbor Discovery fields from an NS/NA message b
// (len(b) >= icmpv6HeaderLen).
func extractND(b []byte, k *Key) {
	// The reserved word's top bits are the NA flags R, S and O; the key
	// keeps its upper 16 bits.
	k.NDReserved = be32(b[ndReservedOff:])
	b = b[icmpv6HeaderLen:]
	if len(b) < ndTargetLen {
		return
	}
	target := b[:ndTargetLen]
	b = b[ndTargetLen:]

	var sha, tha [6]byte
	var optType uint8
	valid := true
	for len(b) >= ndOptLen {
		n := int(b[ndOptLenOff]) * 8
		if n == 0 || n > len(b) {
			break
		}
		if t := b[ndOptTypeOff]; n == ndOptLen && (t == ndOptSourceLLA || t == ndOptTargetLLA) {
			lla := &sha
			if t == ndOptTargetLLA {
				lla = &tha
			}
			if *lla != [6]byte{} {
				// The same address option twice: Open vSwitch drops the
				// target and both addresses.
				valid = false
				break
			}
			copy(lla[:], b[ndOptLLAOff:ndOptLLAOff+6])
			if optType == 0 {
				optType = t
			}
		}
		b = b[n:]
	}
	k.NDOptType = optType
	if valid {
		copy(k.NDTarget[:], target)
		k.ArpSha = sha
		k.ArpTha = tha
	}
}
