package mf

import (
	"fmt"
	"sort"
	"unsafe"
)

// Field IDs, in table order. Ranges (registers, tunnel metadata) are
// addressed as base + index; a test checks every constant against the
// table row of the same name.
const (
	IDDPHash ID = iota
	IDRecircID
	IDPacketType
	IDConjID
	IDTunID
	IDTunSrc
	IDTunDst
	IDTunIPv6Src
	IDTunIPv6Dst
	IDTunFlags
	IDTunTTL
	IDTunTos
	IDTunGbpID
	IDTunGbpFlags
	IDTunErspanIdx
	IDTunErspanVer
	IDTunErspanDir
	IDTunErspanHwid
	IDTunGtpuFlags
	IDTunGtpuMsgtype
	IDTunMetadata0 // IDTunMetadata0+N is tun_metadataN, N < 64
)

// IDMetadata is the OpenFlow 1.1+ metadata field.
const IDMetadata = IDTunMetadata0 + 64

const (
	IDInPort ID = IDMetadata + 1 + iota
	IDInPortOXM
	IDActsetOutput
	IDSkbPriority
	IDPktMark
	IDCtState
	IDCtZone
	IDCtMark
	IDCtLabel
	IDCtNwProto
	IDCtNwSrc
	IDCtNwDst
	IDCtIPv6Src
	IDCtIPv6Dst
	IDCtTpSrc
	IDCtTpDst
	IDReg0 // IDReg0+N is regN, N < 16
)

// Extended register ranges.
const (
	IDXReg0  = IDReg0 + NumRegs    // IDXReg0+N is xregN, N < 8
	IDXXReg0 = IDXReg0 + NumRegs/2 // IDXXReg0+N is xxregN, N < 4
)

const (
	IDEthSrc ID = IDXXReg0 + NumRegs/4 + iota
	IDEthDst
	IDEthType
	IDVLANTCI
	IDDLVLAN
	IDVLANVID
	IDDLVLANPCP
	IDVLANPCP
	IDMPLSLabel
	IDMPLSTC
	IDMPLSBOS
	IDMPLSTTL
	IDIPv4Src
	IDIPv4Dst
	IDIPv6Src
	IDIPv6Dst
	IDIPv6Label
	IDIPProto
	IDIPDSCP        // "nw_tos": DSCP bits in place
	IDIPDSCPShifted // "ip_dscp": DSCP shifted right by 2
	IDIPECN
	IDIPTTL
	IDIPFrag
	IDARPOp
	IDARPSPA
	IDARPTPA
	IDARPSHA
	IDARPTHA
	IDTCPSrc
	IDTCPDst
	IDTCPFlags
	IDUDPSrc
	IDUDPDst
	IDSCTPSrc
	IDSCTPDst
	IDICMPv4Type
	IDICMPv4Code
	IDICMPv6Type
	IDICMPv6Code
	IDNDTarget
	IDNDSLL
	IDNDTLL
	IDNDReserved
	IDNDOptionsType
	IDNshFlags
	IDNshMdtype
	IDNshNp
	IDNshSPI
	IDNshSI
	IDNshC1  // IDNshC1+N is nsh_c(N+1), N < 4
	IDNshTTL = IDNshC1 + 4
)

// NumIDs is the number of fields.
const NumIDs = IDNshTTL + 1

// Header constructors, named for Open vSwitch's header-name prefixes.
func nxmOF(n string, c uint8) Header { return Header{Name: "NXM_OF_" + n, Class: ClassNXM0, Field: c} }
func nxmNX(n string, c uint8) Header { return Header{Name: "NXM_NX_" + n, Class: ClassNXM1, Field: c} }
func oxmOF(n string, c, v uint8) Header {
	return Header{Name: "OXM_OF_" + n, Class: ClassOpenFlow, Field: c, Version: v}
}
func onfET(n string, c, v uint8) Header {
	return Header{Name: "ONFOXM_ET_" + n, Class: ClassExperimenter, Field: c, Experimenter: ExpONF, Version: v}
}
func nxoxmET(n string, c uint8) Header {
	return Header{Name: "NXOXM_ET_" + n, Class: ClassExperimenter, Field: c, Experimenter: ExpNicira}
}
func nshOXM(n string, c uint8) Header {
	return Header{Name: "NXOXM_NSH_" + n, Class: ClassExperimenter, Field: c, Experimenter: ExpNSH}
}
func ericOF(n string, c uint8) Header {
	return Header{Name: "ERICOXM_OF_" + n, Class: ClassEricsson, Field: c}
}

// Offsets into Flow. unsafe.Offsetof is a compile-time constant; the
// pointer arithmetic itself lives in access_unsafe.go.
var (
	offTCI = unsafe.Offsetof(Flow{}.VLANs) + unsafe.Offsetof(Flow{}.VLANs[0].TCI)
)

// Storage shorthands.
func u8(off uintptr, mask uint64) loc  { return loc{kind: locInt, off: off, size: 1, mask: mask} }
func u16(off uintptr, mask uint64) loc { return loc{kind: locInt, off: off, size: 2, mask: mask} }
func u32(off uintptr, mask uint64) loc { return loc{kind: locInt, off: off, size: 4, mask: mask} }
func u64(off uintptr) loc              { return loc{kind: locInt, off: off, size: 8, mask: ^uint64(0)} }
func bytesAt(off uintptr, n uint8) loc { return loc{kind: locBytes, off: off, size: n} }
func (l loc) shifted(s uint8) loc      { l.shift = s; return l }
func (l loc) implies(bits uint64) loc  { l.implied = bits; return l }
func (l loc) port11() loc              { l.conv = convPort11; return l }
func (l loc) exactWhenFull() loc       { l.fullIsExact = true; return l }

const cfi = 0x1000

var table = buildTable()

func buildTable() []Field {
	var f Flow
	t := make([]Field, 0, NumIDs)
	add := func(r Field) {
		r.ID = ID(len(t))
		if r.Bits == 0 {
			r.Bits = 8 * r.Bytes
		}
		// Preferred-header choice walks headers in version order, stably.
		if r.loc.kind == locInt && r.Maskable && !r.loc.fullIsExact && r.loc.conv == convNone {
			r.loc.own = true
		}
		sort.SliceStable(r.Headers, func(i, j int) bool { return r.Headers[i].Version < r.Headers[j].Version })
		t = append(t, r)
	}
	hs := func(h ...Header) []Header { return h }
	const (
		M, W = true, true // maskable, writable (for readability of rows)
		N, R = false, false
	)

	add(Field{Name: "dp_hash", Bytes: 4, Maskable: M, Writable: R, Format: FormatHex, loc: u32(unsafe.Offsetof(f.DPHash), 0xffffffff),
		Headers: hs(nxoxmET("DP_HASH", 0), nxmNX("DP_HASH", 35))})
	add(Field{Name: "recirc_id", Bytes: 4, Maskable: N, Writable: R, Format: FormatDecimal, loc: u32(unsafe.Offsetof(f.RecircID), 0xffffffff),
		Headers: hs(nxmNX("RECIRC_ID", 36))})
	add(Field{Name: "packet_type", Bytes: 4, Maskable: N, Writable: R, Format: FormatPacketType, loc: u32(unsafe.Offsetof(f.PacketType), 0xffffffff),
		Headers: hs(oxmOF("PACKET_TYPE", 44, OF15))})
	add(Field{Name: "conj_id", Bytes: 4, Maskable: N, Writable: R, Format: FormatDecimal, loc: u32(unsafe.Offsetof(f.ConjID), 0xffffffff),
		Headers: hs(nxmNX("CONJ_ID", 37))})
	add(Field{Name: "tun_id", Aliases: []string{"tunnel_id"}, Bytes: 8, Maskable: M, Writable: W, Format: FormatHex, loc: u64(unsafe.Offsetof(f.TunID)),
		Headers: hs(oxmOF("TUNNEL_ID", 38, OF13), nxmNX("TUN_ID", 16))})
	add(Field{Name: "tun_src", Bytes: 4, Maskable: M, Writable: W, Format: FormatIPv4, loc: u32(unsafe.Offsetof(f.TunSrc), 0xffffffff),
		Headers: hs(nxmNX("TUN_IPV4_SRC", 31))})
	add(Field{Name: "tun_dst", Bytes: 4, Maskable: M, Writable: W, Format: FormatIPv4, loc: u32(unsafe.Offsetof(f.TunDst), 0xffffffff),
		Headers: hs(nxmNX("TUN_IPV4_DST", 32))})
	add(Field{Name: "tun_ipv6_src", Bytes: 16, Maskable: M, Writable: W, Format: FormatIPv6, loc: bytesAt(unsafe.Offsetof(f.TunIPv6Src), 16),
		Headers: hs(nxmNX("TUN_IPV6_SRC", 109))})
	add(Field{Name: "tun_ipv6_dst", Bytes: 16, Maskable: M, Writable: W, Format: FormatIPv6, loc: bytesAt(unsafe.Offsetof(f.TunIPv6Dst), 16),
		Headers: hs(nxmNX("TUN_IPV6_DST", 110))})
	add(Field{Name: "tun_flags", Bytes: 2, Bits: 1, Maskable: M, Writable: W, Format: FormatTunFlags, loc: u16(unsafe.Offsetof(f.TunFlags), 0x1),
		Headers: hs(nxmNX("TUN_FLAGS", 104))})
	add(Field{Name: "tun_ttl", Bytes: 1, Maskable: N, Writable: R, Format: FormatDecimal, loc: u8(unsafe.Offsetof(f.TunTTL), 0xff)})
	add(Field{Name: "tun_tos", Bytes: 1, Maskable: N, Writable: R, Format: FormatDecimal, loc: u8(unsafe.Offsetof(f.TunTos), 0xff)})
	add(Field{Name: "tun_gbp_id", Bytes: 2, Maskable: M, Writable: W, Format: FormatDecimal, loc: u16(unsafe.Offsetof(f.TunGbpID), 0xffff),
		Headers: hs(nxmNX("TUN_GBP_ID", 38))})
	add(Field{Name: "tun_gbp_flags", Bytes: 1, Maskable: M, Writable: W, Format: FormatHex, loc: u8(unsafe.Offsetof(f.TunGbpFlags), 0xff),
		Headers: hs(nxmNX("TUN_GBP_FLAGS", 39))})
	add(Field{Name: "tun_erspan_idx", Bytes: 4, Bits: 20, Maskable: M, Writable: W, Format: FormatHex, loc: u32(unsafe.Offsetof(f.TunErspanIdx), 0xfffff),
		Headers: hs(nxoxmET("ERSPAN_IDX", 11))})
	add(Field{Name: "tun_erspan_ver", Bytes: 1, Bits: 4, Maskable: M, Writable: W, Format: FormatDecimal, loc: u8(unsafe.Offsetof(f.TunErspanVer), 0xf),
		Headers: hs(nxoxmET("ERSPAN_VER", 12))})
	add(Field{Name: "tun_erspan_dir", Bytes: 1, Bits: 1, Maskable: M, Writable: W, Format: FormatDecimal, loc: u8(unsafe.Offsetof(f.TunErspanDir), 0x1),
		Headers: hs(nxoxmET("ERSPAN_DIR", 13))})
	add(Field{Name: "tun_erspan_hwid", Bytes: 1, Bits: 6, Maskable: M, Writable: W, Format: FormatHex, loc: u8(unsafe.Offsetof(f.TunErspanHwid), 0x3f),
		Headers: hs(nxoxmET("ERSPAN_HWID", 14))})
	add(Field{Name: "tun_gtpu_flags", Bytes: 1, Maskable: M, Writable: R, Format: FormatHex, loc: u8(unsafe.Offsetof(f.TunGtpuFlags), 0xff),
		Headers: hs(nxoxmET("GTPU_FLAGS", 15))})
	add(Field{Name: "tun_gtpu_msgtype", Bytes: 1, Maskable: M, Writable: R, Format: FormatDecimal, loc: u8(unsafe.Offsetof(f.TunGtpuMsgtype), 0xff),
		Headers: hs(nxoxmET("GTPU_MSGTYPE", 16))})
	for i := 0; i < 64; i++ {
		add(Field{Name: fmt.Sprintf("tun_metadata%d", i), Bytes: 124, Maskable: M, Writable: W, Variable: true, Format: FormatHex,
			loc:     loc{kind: locTunMeta, tunIdx: uint8(i)},
			Headers: hs(nxmNX(fmt.Sprintf("TUN_METADATA%d", i), uint8(40+i)))})
	}
	add(Field{Name: "metadata", Bytes: 8, Maskable: M, Writable: W, Format: FormatHex, loc: u64(unsafe.Offsetof(f.Metadata)),
		Headers: hs(oxmOF("METADATA", 2, OF12))})
	add(Field{Name: "in_port", Bytes: 2, Maskable: N, Writable: W, Format: FormatOFPPort, loc: u32(unsafe.Offsetof(f.InPort), 0xffff),
		Headers: hs(nxmOF("IN_PORT", 0))})
	add(Field{Name: "in_port_oxm", Bytes: 4, Maskable: N, Writable: W, Format: FormatOFPPortOXM, loc: u32(unsafe.Offsetof(f.InPort), 0xffff).port11(),
		Headers: hs(oxmOF("IN_PORT", 0, OF12))})
	add(Field{Name: "actset_output", Bytes: 4, Maskable: N, Writable: R, Format: FormatOFPPortOXM, loc: u32(unsafe.Offsetof(f.ActsetOutput), 0xffff).port11(),
		Headers: hs(onfET("ACTSET_OUTPUT", 43, OF13), oxmOF("ACTSET_OUTPUT", 43, OF15))})
	add(Field{Name: "skb_priority", Bytes: 4, Maskable: N, Writable: R, Format: FormatHex, loc: u32(unsafe.Offsetof(f.SkbPriority), 0xffffffff)})
	add(Field{Name: "pkt_mark", Bytes: 4, Maskable: M, Writable: W, Format: FormatHex, loc: u32(unsafe.Offsetof(f.PktMark), 0xffffffff),
		Headers: hs(nxmNX("PKT_MARK", 33))})
	add(Field{Name: "ct_state", Bytes: 4, Maskable: M, Writable: R, Format: FormatCtState, loc: u8(unsafe.Offsetof(f.CtState), 0xff),
		Headers: hs(nxmNX("CT_STATE", 105))})
	add(Field{Name: "ct_zone", Bytes: 2, Maskable: N, Writable: R, Format: FormatHex, loc: u16(unsafe.Offsetof(f.CtZone), 0xffff),
		Headers: hs(nxmNX("CT_ZONE", 106))})
	add(Field{Name: "ct_mark", Bytes: 4, Maskable: M, Writable: W, Format: FormatHex, loc: u32(unsafe.Offsetof(f.CtMark), 0xffffffff),
		Headers: hs(nxmNX("CT_MARK", 107))})
	add(Field{Name: "ct_label", Bytes: 16, Maskable: M, Writable: W, Format: FormatHex, loc: bytesAt(unsafe.Offsetof(f.CtLabel), 16),
		Headers: hs(nxmNX("CT_LABEL", 108))})
	add(Field{Name: "ct_nw_proto", Bytes: 1, Maskable: N, Writable: R, Prereq: PrereqCT, Format: FormatDecimal, loc: u8(unsafe.Offsetof(f.CtNwProto), 0xff),
		Headers: hs(nxmNX("CT_NW_PROTO", 119))})
	add(Field{Name: "ct_nw_src", Bytes: 4, Maskable: M, Writable: R, Prereq: PrereqCT, Format: FormatIPv4, loc: u32(unsafe.Offsetof(f.CtNwSrc), 0xffffffff),
		Headers: hs(nxmNX("CT_NW_SRC", 120))})
	add(Field{Name: "ct_nw_dst", Bytes: 4, Maskable: M, Writable: R, Prereq: PrereqCT, Format: FormatIPv4, loc: u32(unsafe.Offsetof(f.CtNwDst), 0xffffffff),
		Headers: hs(nxmNX("CT_NW_DST", 121))})
	add(Field{Name: "ct_ipv6_src", Bytes: 16, Maskable: M, Writable: R, Prereq: PrereqCT, Format: FormatIPv6, loc: bytesAt(unsafe.Offsetof(f.CtIPv6Src), 16),
		Headers: hs(nxmNX("CT_IPV6_SRC", 122))})
	add(Field{Name: "ct_ipv6_dst", Bytes: 16, Maskable: M, Writable: R, Prereq: PrereqCT, Format: FormatIPv6, loc: bytesAt(unsafe.Offsetof(f.CtIPv6Dst), 16),
		Headers: hs(nxmNX("CT_IPV6_DST", 123))})
	add(Field{Name: "ct_tp_src", Bytes: 2, Maskable: M, Writable: R, Prereq: PrereqCT, Format: FormatDecimal, loc: u16(unsafe.Offsetof(f.CtTpSrc), 0xffff),
		Headers: hs(nxmNX("CT_TP_SRC", 124))})
	add(Field{Name: "ct_tp_dst", Bytes: 2, Maskable: M, Writable: R, Prereq: PrereqCT, Format: FormatDecimal, loc: u16(unsafe.Offsetof(f.CtTpDst), 0xffff),
		Headers: hs(nxmNX("CT_TP_DST", 125))})
	regs := unsafe.Offsetof(f.Regs)
	for i := 0; i < NumRegs; i++ {
		add(Field{Name: fmt.Sprintf("reg%d", i), Bytes: 4, Maskable: M, Writable: W, Format: FormatHex, loc: u32(regs+uintptr(4*i), 0xffffffff),
			Headers: hs(nxmNX(fmt.Sprintf("REG%d", i), uint8(i)))})
	}
	for i := 0; i < NumRegs/2; i++ {
		add(Field{Name: fmt.Sprintf("xreg%d", i), Bytes: 8, Maskable: M, Writable: W, Format: FormatHex,
			loc:     loc{kind: locRegs, off: regs + uintptr(8*i), size: 2},
			Headers: hs(Header{Name: fmt.Sprintf("OXM_OF_PKT_REG%d", i), Class: ClassPacketRegs, Field: uint8(i), Version: OF13})})
	}
	for i := 0; i < NumRegs/4; i++ {
		add(Field{Name: fmt.Sprintf("xxreg%d", i), Bytes: 16, Maskable: M, Writable: W, Format: FormatHex,
			loc:     loc{kind: locRegs, off: regs + uintptr(16*i), size: 4},
			Headers: hs(nxmNX(fmt.Sprintf("XXREG%d", i), uint8(111+i)))})
	}
	add(Field{Name: "eth_src", Aliases: []string{"dl_src"}, Bytes: 6, Maskable: M, Writable: W, Prereq: PrereqEthernet, Format: FormatEthernet,
		loc: bytesAt(unsafe.Offsetof(f.EthSrc), 6), Headers: hs(oxmOF("ETH_SRC", 4, OF12), nxmOF("ETH_SRC", 2))})
	add(Field{Name: "eth_dst", Aliases: []string{"dl_dst"}, Bytes: 6, Maskable: M, Writable: W, Prereq: PrereqEthernet, Format: FormatEthernet,
		loc: bytesAt(unsafe.Offsetof(f.EthDst), 6), Headers: hs(oxmOF("ETH_DST", 3, OF12), nxmOF("ETH_DST", 1))})
	add(Field{Name: "eth_type", Aliases: []string{"dl_type"}, Bytes: 2, Maskable: N, Writable: R, Prereq: PrereqEthernet, Format: FormatHex,
		loc: u16(unsafe.Offsetof(f.EthType), 0xffff), Headers: hs(oxmOF("ETH_TYPE", 5, OF12), nxmOF("ETH_TYPE", 3))})
	add(Field{Name: "vlan_tci", Bytes: 2, Maskable: M, Writable: W, Prereq: PrereqEthernet, Format: FormatHex,
		loc: u16(offTCI, 0xffff), Headers: hs(nxmOF("VLAN_TCI", 4))})
	add(Field{Name: "dl_vlan", Bytes: 2, Bits: 12, Maskable: N, Writable: W, Prereq: PrereqEthernet, Format: FormatDecimal,
		loc: u16(offTCI, 0x0fff).implies(cfi)})
	add(Field{Name: "vlan_vid", Bytes: 2, Bits: 12, Maskable: M, Writable: W, Prereq: PrereqEthernet, Format: FormatDecimal,
		loc: u16(offTCI, 0x1fff).exactWhenFull(), Headers: hs(oxmOF("VLAN_VID", 6, OF12))})
	add(Field{Name: "dl_vlan_pcp", Bytes: 1, Bits: 3, Maskable: N, Writable: W, Prereq: PrereqEthernet, Format: FormatDecimal,
		loc: u16(offTCI, 0x7).shifted(13).implies(cfi)})
	add(Field{Name: "vlan_pcp", Bytes: 1, Bits: 3, Maskable: N, Writable: W, Prereq: PrereqVLANVID, Format: FormatDecimal,
		loc: u16(offTCI, 0x7).shifted(13).implies(cfi), Headers: hs(oxmOF("VLAN_PCP", 7, OF12))})
	lse := unsafe.Offsetof(f.MPLSLSE)
	add(Field{Name: "mpls_label", Bytes: 4, Bits: 20, Maskable: N, Writable: W, Prereq: PrereqMPLS, Format: FormatDecimal,
		loc: u32(lse, 0xfffff).shifted(12), Headers: hs(oxmOF("MPLS_LABEL", 34, OF12))})
	add(Field{Name: "mpls_tc", Bytes: 1, Bits: 3, Maskable: N, Writable: W, Prereq: PrereqMPLS, Format: FormatDecimal,
		loc: u32(lse, 0x7).shifted(9), Headers: hs(oxmOF("MPLS_TC", 35, OF12))})
	add(Field{Name: "mpls_bos", Bytes: 1, Bits: 1, Maskable: N, Writable: R, Prereq: PrereqMPLS, Format: FormatDecimal,
		loc: u32(lse, 0x1).shifted(8), Headers: hs(oxmOF("MPLS_BOS", 36, OF13))})
	add(Field{Name: "mpls_ttl", Bytes: 1, Maskable: N, Writable: W, Prereq: PrereqMPLS, Format: FormatDecimal,
		loc: u32(lse, 0xff), Headers: hs(nxmNX("MPLS_TTL", 30))})
	add(Field{Name: "ip_src", Aliases: []string{"nw_src"}, Bytes: 4, Maskable: M, Writable: W, Prereq: PrereqIPv4, Format: FormatIPv4,
		loc: u32(unsafe.Offsetof(f.NwSrc), 0xffffffff), Headers: hs(oxmOF("IPV4_SRC", 11, OF12), nxmOF("IP_SRC", 7))})
	add(Field{Name: "ip_dst", Aliases: []string{"nw_dst"}, Bytes: 4, Maskable: M, Writable: W, Prereq: PrereqIPv4, Format: FormatIPv4,
		loc: u32(unsafe.Offsetof(f.NwDst), 0xffffffff), Headers: hs(oxmOF("IPV4_DST", 12, OF12), nxmOF("IP_DST", 8))})
	add(Field{Name: "ipv6_src", Bytes: 16, Maskable: M, Writable: W, Prereq: PrereqIPv6, Format: FormatIPv6,
		loc: bytesAt(unsafe.Offsetof(f.IPv6Src), 16), Headers: hs(oxmOF("IPV6_SRC", 26, OF12), nxmNX("IPV6_SRC", 19))})
	add(Field{Name: "ipv6_dst", Bytes: 16, Maskable: M, Writable: W, Prereq: PrereqIPv6, Format: FormatIPv6,
		loc: bytesAt(unsafe.Offsetof(f.IPv6Dst), 16), Headers: hs(oxmOF("IPV6_DST", 27, OF12), nxmNX("IPV6_DST", 20))})
	add(Field{Name: "ipv6_label", Bytes: 4, Bits: 20, Maskable: M, Writable: W, Prereq: PrereqIPv6, Format: FormatHex,
		loc: u32(unsafe.Offsetof(f.IPv6Label), 0xfffff).exactWhenFull(), Headers: hs(oxmOF("IPV6_FLABEL", 28, OF12), nxmNX("IPV6_LABEL", 27))})
	add(Field{Name: "nw_proto", Aliases: []string{"ip_proto"}, Bytes: 1, Maskable: N, Writable: R, Prereq: PrereqIPAny, Format: FormatDecimal,
		loc: u8(unsafe.Offsetof(f.NwProto), 0xff), Headers: hs(oxmOF("IP_PROTO", 10, OF12), nxmOF("IP_PROTO", 6))})
	add(Field{Name: "nw_tos", Bytes: 1, Maskable: N, Writable: W, Prereq: PrereqIPAny, Format: FormatDecimal,
		loc: u8(unsafe.Offsetof(f.NwTos), 0xfc), Headers: hs(nxmOF("IP_TOS", 5))})
	add(Field{Name: "ip_dscp", Bytes: 1, Bits: 6, Maskable: N, Writable: W, Prereq: PrereqIPAny, Format: FormatDecimal,
		loc: u8(unsafe.Offsetof(f.NwTos), 0x3f).shifted(2), Headers: hs(oxmOF("IP_DSCP", 8, OF12))})
	add(Field{Name: "nw_ecn", Aliases: []string{"ip_ecn"}, Bytes: 1, Bits: 2, Maskable: N, Writable: W, Prereq: PrereqIPAny, Format: FormatDecimal,
		loc: u8(unsafe.Offsetof(f.NwTos), 0x3), Headers: hs(oxmOF("IP_ECN", 9, OF12), nxmNX("IP_ECN", 28))})
	add(Field{Name: "nw_ttl", Bytes: 1, Maskable: N, Writable: W, Prereq: PrereqIPAny, Format: FormatDecimal,
		loc: u8(unsafe.Offsetof(f.NwTTL), 0xff), Headers: hs(nxmNX("IP_TTL", 29))})
	add(Field{Name: "ip_frag", Aliases: []string{"nw_frag"}, Bytes: 1, Bits: 2, Maskable: M, Writable: R, Prereq: PrereqIPAny, Format: FormatFrag,
		loc: u8(unsafe.Offsetof(f.NwFrag), 0x3).exactWhenFull(), Headers: hs(nxmNX("IP_FRAG", 26))})
	add(Field{Name: "arp_op", Bytes: 2, Maskable: N, Writable: W, Prereq: PrereqARP, Format: FormatDecimal,
		loc: u8(unsafe.Offsetof(f.NwProto), 0xff), Headers: hs(oxmOF("ARP_OP", 21, OF12), nxmOF("ARP_OP", 15))})
	add(Field{Name: "arp_spa", Bytes: 4, Maskable: M, Writable: W, Prereq: PrereqARP, Format: FormatIPv4,
		loc: u32(unsafe.Offsetof(f.NwSrc), 0xffffffff), Headers: hs(oxmOF("ARP_SPA", 22, OF12), nxmOF("ARP_SPA", 16))})
	add(Field{Name: "arp_tpa", Bytes: 4, Maskable: M, Writable: W, Prereq: PrereqARP, Format: FormatIPv4,
		loc: u32(unsafe.Offsetof(f.NwDst), 0xffffffff), Headers: hs(oxmOF("ARP_TPA", 23, OF12), nxmOF("ARP_TPA", 17))})
	add(Field{Name: "arp_sha", Bytes: 6, Maskable: M, Writable: W, Prereq: PrereqARP, Format: FormatEthernet,
		loc: bytesAt(unsafe.Offsetof(f.ArpSha), 6), Headers: hs(oxmOF("ARP_SHA", 24, OF12), nxmNX("ARP_SHA", 17))})
	add(Field{Name: "arp_tha", Bytes: 6, Maskable: M, Writable: W, Prereq: PrereqARP, Format: FormatEthernet,
		loc: bytesAt(unsafe.Offsetof(f.ArpTha), 6), Headers: hs(oxmOF("ARP_THA", 25, OF12), nxmNX("ARP_THA", 18))})
	tpSrc, tpDst := unsafe.Offsetof(f.TpSrc), unsafe.Offsetof(f.TpDst)
	add(Field{Name: "tcp_src", Aliases: []string{"tp_src"}, Bytes: 2, Maskable: M, Writable: W, Prereq: PrereqTCP, Format: FormatDecimal,
		loc: u16(tpSrc, 0xffff), Headers: hs(oxmOF("TCP_SRC", 13, OF12), nxmOF("TCP_SRC", 9))})
	add(Field{Name: "tcp_dst", Aliases: []string{"tp_dst"}, Bytes: 2, Maskable: M, Writable: W, Prereq: PrereqTCP, Format: FormatDecimal,
		loc: u16(tpDst, 0xffff), Headers: hs(oxmOF("TCP_DST", 14, OF12), nxmOF("TCP_DST", 10))})
	add(Field{Name: "tcp_flags", Bytes: 2, Bits: 12, Maskable: M, Writable: R, Prereq: PrereqTCP, Format: FormatTCPFlags,
		loc:     u16(unsafe.Offsetof(f.TCPFlags), 0x0fff),
		Headers: hs(onfET("TCP_FLAGS", 42, OF13), oxmOF("TCP_FLAGS", 42, OF15), nxmNX("TCP_FLAGS", 34))})
	add(Field{Name: "udp_src", Bytes: 2, Maskable: M, Writable: W, Prereq: PrereqUDP, Format: FormatDecimal,
		loc: u16(tpSrc, 0xffff), Headers: hs(oxmOF("UDP_SRC", 15, OF12), nxmOF("UDP_SRC", 11))})
	add(Field{Name: "udp_dst", Bytes: 2, Maskable: M, Writable: W, Prereq: PrereqUDP, Format: FormatDecimal,
		loc: u16(tpDst, 0xffff), Headers: hs(oxmOF("UDP_DST", 16, OF12), nxmOF("UDP_DST", 12))})
	add(Field{Name: "sctp_src", Bytes: 2, Maskable: M, Writable: W, Prereq: PrereqSCTP, Format: FormatDecimal,
		loc: u16(tpSrc, 0xffff), Headers: hs(oxmOF("SCTP_SRC", 17, OF12))})
	add(Field{Name: "sctp_dst", Bytes: 2, Maskable: M, Writable: W, Prereq: PrereqSCTP, Format: FormatDecimal,
		loc: u16(tpDst, 0xffff), Headers: hs(oxmOF("SCTP_DST", 18, OF12))})
	add(Field{Name: "icmp_type", Bytes: 1, Maskable: N, Writable: W, Prereq: PrereqICMPv4, Format: FormatDecimal,
		loc: u16(tpSrc, 0xff), Headers: hs(oxmOF("ICMPV4_TYPE", 19, OF12), nxmOF("ICMP_TYPE", 13))})
	add(Field{Name: "icmp_code", Bytes: 1, Maskable: N, Writable: W, Prereq: PrereqICMPv4, Format: FormatDecimal,
		loc: u16(tpDst, 0xff), Headers: hs(oxmOF("ICMPV4_CODE", 20, OF12), nxmOF("ICMP_CODE", 14))})
	add(Field{Name: "icmpv6_type", Bytes: 1, Maskable: N, Writable: W, Prereq: PrereqICMPv6, Format: FormatDecimal,
		loc: u16(tpSrc, 0xff), Headers: hs(oxmOF("ICMPV6_TYPE", 29, OF12), nxmNX("ICMPV6_TYPE", 21))})
	add(Field{Name: "icmpv6_code", Bytes: 1, Maskable: N, Writable: W, Prereq: PrereqICMPv6, Format: FormatDecimal,
		loc: u16(tpDst, 0xff), Headers: hs(oxmOF("ICMPV6_CODE", 30, OF12), nxmNX("ICMPV6_CODE", 22))})
	add(Field{Name: "nd_target", Bytes: 16, Maskable: M, Writable: W, Prereq: PrereqND, Format: FormatIPv6,
		loc: bytesAt(unsafe.Offsetof(f.NDTarget), 16), Headers: hs(oxmOF("IPV6_ND_TARGET", 31, OF12), nxmNX("ND_TARGET", 23))})
	add(Field{Name: "nd_sll", Bytes: 6, Maskable: M, Writable: W, Prereq: PrereqNDSolicit, Format: FormatEthernet,
		loc: bytesAt(unsafe.Offsetof(f.ArpSha), 6), Headers: hs(oxmOF("IPV6_ND_SLL", 32, OF12), nxmNX("ND_SLL", 24))})
	add(Field{Name: "nd_tll", Bytes: 6, Maskable: M, Writable: W, Prereq: PrereqNDAdvert, Format: FormatEthernet,
		loc: bytesAt(unsafe.Offsetof(f.ArpTha), 6), Headers: hs(oxmOF("IPV6_ND_TLL", 33, OF12), nxmNX("ND_TLL", 25))})
	// The datapath key has its own 32-bit word for nd_reserved.
	add(Field{Name: "nd_reserved", Bytes: 4, Maskable: N, Writable: W, Prereq: PrereqND, Format: FormatDecimal,
		loc: u32(unsafe.Offsetof(f.NDReserved), 0xffffffff), Headers: hs(ericOF("ICMPV6_ND_RESERVED", 1))})
	add(Field{Name: "nd_options_type", Bytes: 1, Maskable: N, Writable: W, Prereq: PrereqND, Format: FormatDecimal,
		loc: u8(unsafe.Offsetof(f.NDOptType), 0xff), Headers: hs(ericOF("ICMPV6_ND_OPTIONS_TYPE", 2))})
	add(Field{Name: "nsh_flags", Bytes: 1, Maskable: M, Writable: W, Prereq: PrereqNSH, Format: FormatDecimal,
		loc: u8(unsafe.Offsetof(f.NshFlags), 0xff), Headers: hs(nshOXM("FLAGS", 1))})
	add(Field{Name: "nsh_mdtype", Bytes: 1, Maskable: N, Writable: R, Prereq: PrereqNSH, Format: FormatDecimal,
		loc: u8(unsafe.Offsetof(f.NshMdtype), 0xff), Headers: hs(nshOXM("MDTYPE", 2))})
	add(Field{Name: "nsh_np", Bytes: 1, Maskable: N, Writable: R, Prereq: PrereqNSH, Format: FormatDecimal,
		loc: u8(unsafe.Offsetof(f.NshNp), 0xff), Headers: hs(nshOXM("NP", 3))})
	add(Field{Name: "nsh_spi", Bytes: 4, Bits: 24, Maskable: N, Writable: W, Prereq: PrereqNSH, Format: FormatHex,
		loc: u32(unsafe.Offsetof(f.NshSPI), 0xffffff), Headers: hs(nshOXM("SPI", 4))})
	add(Field{Name: "nsh_si", Bytes: 1, Maskable: N, Writable: W, Prereq: PrereqNSH, Format: FormatDecimal,
		loc: u8(unsafe.Offsetof(f.NshSI), 0xff), Headers: hs(nshOXM("SI", 5))})
	for i := 0; i < 4; i++ {
		add(Field{Name: fmt.Sprintf("nsh_c%d", i+1), Bytes: 4, Maskable: M, Writable: W, Prereq: PrereqNSH, Format: FormatHex,
			loc: u32(unsafe.Offsetof(f.NshC)+uintptr(4*i), 0xffffffff), Headers: hs(nshOXM(fmt.Sprintf("C%d", i+1), uint8(6+i)))})
	}
	add(Field{Name: "nsh_ttl", Bytes: 1, Bits: 6, Maskable: N, Writable: W, Prereq: PrereqNSH, Format: FormatDecimal,
		loc: u8(unsafe.Offsetof(f.NshTTL), 0x3f), Headers: hs(nshOXM("TTL", 10))})
	return t
}
