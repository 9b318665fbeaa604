package ofp

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/ofproto/mf"
)

// OpenFlow 1.1's standard match (struct ofp11_match, OFPMT_STANDARD):
// fixed fields with wildcard bits for the exact-or-nothing ones and
// inverted masks (1 = ignore) for Ethernet and IPv4 addresses and
// metadata.
//
//	 0  type=0            length=88
//	 4  in_port (32-bit port)
//	 8  wildcards (OFPFW11_*)
//	12  dl_src[6]  dl_src_mask[6]  dl_dst[6]  dl_dst_mask[6]
//	36  dl_vlan  dl_vlan_pcp  pad
//	40  dl_type  nw_tos  nw_proto
//	44  nw_src  nw_src_mask  nw_dst  nw_dst_mask
//	60  tp_src  tp_dst
//	64  mpls_label (32-bit)  mpls_tc  pad[3]
//	72  metadata  metadata_mask
const ofp11MatchLen = 88

// OpenFlow 1.1 wildcard bits (OFPFW11_*).
const (
	ofpfw11InPort    = 1 << 0
	ofpfw11DLVLAN    = 1 << 1
	ofpfw11DLVLANPCP = 1 << 2
	ofpfw11DLType    = 1 << 3
	ofpfw11NWTos     = 1 << 4
	ofpfw11NWProto   = 1 << 5
	ofpfw11TPSrc     = 1 << 6
	ofpfw11TPDst     = 1 << 7
	ofpfw11MPLSLabel = 1 << 8
	ofpfw11MPLSTC    = 1 << 9
)

// dl_vlan's special values (OFPVID11_*).
const (
	ofpvid11Any  = 0xfffe // any tagged packet
	ofpvid11None = 0xffff // untagged packets only
)

// MPLS label stack entry parts.
const (
	mplsLabelMask  = 0xfffff000
	mplsLabelShift = 12
	mplsTCMask     = 0x00000e00
	mplsTCShift    = 9
	ipDSCPMask     = 0xfc
)

func invert6(a [6]byte) [6]byte {
	for i := range a {
		a[i] = ^a[i]
	}
	return a
}

// DecodeOF11Match decodes an 88-byte OpenFlow 1.1 standard match,
// header included, with Open vSwitch's semantics: fields whose
// prerequisites the match lacks are ignored (network fields without an
// IPv4, ARP or RARP dl_type, ports without IPv4 TCP, UDP, SCTP or ICMP,
// MPLS fields without an MPLS dl_type), ICMP type and code travel in
// tp_src and tp_dst. Values the fields cannot hold fail with
// OFPBMC_BAD_VALUE (port, VLAN, PCP, TOS) or OFPBMC_BAD_FIELD (ICMP).
func DecodeOF11Match(p []byte, m *mf.Match) error {
	if len(p) < 4 {
		return errorf(OFPBMC_BAD_LEN, "ofp11_match header needs 4 bytes, have %d", len(p))
	}
	if typ := binary.BigEndian.Uint16(p); typ != ofpmtStandard {
		return errorf(OFPBMC_BAD_TYPE, "ofp11_match type %d", typ)
	}
	if n := int(binary.BigEndian.Uint16(p[2:])); n != ofp11MatchLen || len(p) < ofp11MatchLen {
		return errorf(OFPBMC_BAD_LEN, "standard ofp_match of %d bytes in %d", n, len(p))
	}
	*m = mf.Match{}
	fl, mk := &m.Flow, &m.Mask
	be := binary.BigEndian
	// Open vSwitch reads the wildcards into 16 bits; the rest are ignored.
	// (The packet type stays unmatched, as in matches decoded from OXM:
	// an OF1.1 match is always on Ethernet.)
	wc := uint16(be.Uint32(p[8:]))

	if wc&ofpfw11InPort == 0 {
		port, err := PortFromOF11(be.Uint32(p[4:]))
		if err != nil {
			return errorf(OFPBMC_BAD_VALUE, "ofp11_match in_port %#x", be.Uint32(p[4:]))
		}
		fl.InPort, mk.InPort = uint32(port), 0xffff
	}

	srcMask, dstMask := invert6([6]byte(p[18:24])), invert6([6]byte(p[30:36]))
	if srcMask != [6]byte{} || dstMask != [6]byte{} {
		fl.EthSrc, mk.EthSrc = [6]byte(p[12:18]), srcMask
		fl.EthDst, mk.EthDst = [6]byte(p[24:30]), dstMask
	}

	if wc&ofpfw11DLVLAN == 0 {
		vid, pcp := be.Uint16(p[36:]), p[38]
		tci, tciMask := &fl.VLANs[0].TCI, &mk.VLANs[0].TCI
		switch {
		case vid == ofpvid11None:
			*tci, *tciMask = 0, 0xffff
		case vid == ofpvid11Any:
			*tci, *tciMask = flow.VLANCFI, flow.VLANCFI
		case vid < 4096:
			*tci, *tciMask = flow.VLANCFI|vid, flow.VLANCFI|0x0fff
		default:
			return errorf(OFPBMC_BAD_VALUE, "ofp11_match dl_vlan %#x", vid)
		}
		if vid != ofpvid11None && wc&ofpfw11DLVLANPCP == 0 {
			if pcp > 7 {
				return errorf(OFPBMC_BAD_VALUE, "ofp11_match dl_vlan_pcp %d", pcp)
			}
			*tci |= uint16(pcp) << 13
			*tciMask |= 0xe000
		}
	}

	if wc&ofpfw11DLType == 0 {
		fl.EthType, mk.EthType = be.Uint16(p[40:]), 0xffff
	}

	ipv4 := fl.EthType == flow.EthTypeIPv4
	arp := fl.EthType == flow.EthTypeARP || fl.EthType == flow.EthTypeRARP
	if ipv4 && wc&ofpfw11NWTos == 0 {
		tos := p[42]
		if tos&^ipDSCPMask != 0 {
			return errorf(OFPBMC_BAD_VALUE, "ofp11_match nw_tos %#x", tos)
		}
		fl.NwTos, mk.NwTos = tos, ipDSCPMask
	}
	if ipv4 || arp {
		if wc&ofpfw11NWProto == 0 {
			fl.NwProto, mk.NwProto = p[43], 0xff
		}
		mk.NwSrc, mk.NwDst = ^be.Uint32(p[48:]), ^be.Uint32(p[56:])
		fl.NwSrc, fl.NwDst = be.Uint32(p[44:]), be.Uint32(p[52:])
	}

	if ipv4 {
		tpSrc, tpDst := be.Uint16(p[60:]), be.Uint16(p[62:])
		switch fl.NwProto {
		case flow.IPProtoICMP:
			if wc&ofpfw11TPSrc == 0 {
				if tpSrc >= 0x100 {
					return errorf(OFPBMC_BAD_FIELD, "ofp11_match ICMP type %d", tpSrc)
				}
				fl.TpSrc, mk.TpSrc = tpSrc, 0xff // icmp_type is 8 bits wide
			}
			if wc&ofpfw11TPDst == 0 {
				if tpDst >= 0x100 {
					return errorf(OFPBMC_BAD_FIELD, "ofp11_match ICMP code %d", tpDst)
				}
				fl.TpDst, mk.TpDst = tpDst, 0xff
			}
		case flow.IPProtoTCP, flow.IPProtoUDP, flow.IPProtoSCTP:
			if wc&ofpfw11TPSrc == 0 {
				fl.TpSrc, mk.TpSrc = tpSrc, 0xffff
			}
			if wc&ofpfw11TPDst == 0 {
				fl.TpDst, mk.TpDst = tpDst, 0xffff
			}
		}
	}

	if fl.EthType == flow.EthTypeMPLS || fl.EthType == flow.EthTypeMPLSMcst {
		if wc&ofpfw11MPLSLabel == 0 {
			fl.MPLSLSE |= be.Uint32(p[64:]) << mplsLabelShift & mplsLabelMask
			mk.MPLSLSE |= mplsLabelMask
		}
		if wc&ofpfw11MPLSTC == 0 {
			fl.MPLSLSE |= uint32(p[68]) << mplsTCShift & mplsTCMask
			mk.MPLSLSE |= mplsTCMask
		}
	}

	fl.Metadata, mk.Metadata = be.Uint64(p[72:]), ^be.Uint64(p[80:])
	zeroWildcarded(m)
	return nil
}

// appendOF11Match appends the 88-byte standard match for m as Open
// vSwitch's ofputil_match_to_ofp11_match does: what OF1.1 cannot say is
// left out (the in_port, VLAN and nw_tos forms nearest to m are used). A
// switch reports flows this way; requests go through AppendOF11Match.
func appendOF11Match(b []byte, m *mf.Match) []byte {
	fl, mk := &m.Flow, &m.Mask
	be := binary.BigEndian
	var wc uint32
	var o [ofp11MatchLen]byte
	be.PutUint16(o[2:], ofp11MatchLen)
	if mk.InPort == 0 {
		wc |= ofpfw11InPort
	} else {
		be.PutUint32(o[4:], PortToOF11(uint16(fl.InPort)))
	}
	copy(o[12:], fl.EthSrc[:])
	srcMask, dstMask := invert6(mk.EthSrc), invert6(mk.EthDst)
	copy(o[18:], srcMask[:])
	copy(o[24:], fl.EthDst[:])
	copy(o[30:], dstMask[:])

	tci, tciMask := fl.VLANs[0].TCI, mk.VLANs[0].TCI
	switch {
	case tciMask == 0:
		wc |= ofpfw11DLVLAN | ofpfw11DLVLANPCP
	case tciMask&flow.VLANCFI != 0 && tci&flow.VLANCFI == 0:
		be.PutUint16(o[36:], ofpvid11None)
		wc |= ofpfw11DLVLANPCP
	default:
		if tciMask&0x0fff == 0 {
			be.PutUint16(o[36:], ofpvid11Any)
		} else {
			be.PutUint16(o[36:], tci&0x0fff)
		}
		if tciMask&0xe000 == 0 {
			wc |= ofpfw11DLVLANPCP
		} else {
			o[38] = uint8(tci >> 13)
		}
	}

	if mk.EthType == 0 {
		wc |= ofpfw11DLType
	} else {
		be.PutUint16(o[40:], fl.EthType)
	}
	if mk.NwTos&ipDSCPMask == 0 {
		wc |= ofpfw11NWTos
	} else {
		o[42] = fl.NwTos & ipDSCPMask
	}
	if mk.NwProto == 0 {
		wc |= ofpfw11NWProto
	} else {
		o[43] = fl.NwProto
	}
	be.PutUint32(o[44:], fl.NwSrc)
	be.PutUint32(o[48:], ^mk.NwSrc)
	be.PutUint32(o[52:], fl.NwDst)
	be.PutUint32(o[56:], ^mk.NwDst)
	if mk.TpSrc == 0 {
		wc |= ofpfw11TPSrc
	} else {
		be.PutUint16(o[60:], fl.TpSrc)
	}
	if mk.TpDst == 0 {
		wc |= ofpfw11TPDst
	} else {
		be.PutUint16(o[62:], fl.TpDst)
	}
	if mk.MPLSLSE&mplsLabelMask == 0 {
		wc |= ofpfw11MPLSLabel
	} else {
		be.PutUint32(o[64:], fl.MPLSLSE>>mplsLabelShift)
	}
	if mk.MPLSLSE&mplsTCMask == 0 {
		wc |= ofpfw11MPLSTC
	} else {
		o[68] = uint8(fl.MPLSLSE & mplsTCMask >> mplsTCShift)
	}
	be.PutUint64(o[72:], fl.Metadata)
	be.PutUint64(o[80:], ^mk.Metadata)
	be.PutUint32(o[8:], wc)
	return append(b, o[:]...)
}

// AppendOF11Match appends the 88-byte OpenFlow 1.1 standard match for m,
// or fails if the match says more than OF1.1 can: a field it lacks
// (OFPBMC_BAD_FIELD) or a mask it cannot carry, such as a partial port or
// VLAN mask or a field without its prerequisites (OFPBMC_BAD_WILDCARDS).
func AppendOF11Match(b []byte, m *mf.Match) ([]byte, error) {
	if err := CheckOF11Match(m); err != nil {
		return b, err
	}
	return appendOF11Match(b, m), nil
}

// CheckOF11Match reports whether the OpenFlow 1.1 standard match can
// carry m exactly: m must come back unchanged from encoding and decoding.
func CheckOF11Match(m *mf.Match) error {
	var wire [ofp11MatchLen]byte
	var back mf.Match
	err := DecodeOF11Match(appendOF11Match(wire[:0], m), &back)
	want := *m
	zeroWildcarded(&want)
	if want.Flow.PacketType == 0 {
		// Ethernet, as OF1.1 always is: a mask on the packet type adds
		// nothing the decoder does not restore from the L2 fields.
		want.Mask.PacketType, back.Mask.PacketType = 0, 0
	}
	if err == nil && want.Flow == back.Flow && want.Mask == back.Mask {
		return nil
	}
	outside := want.Mask
	outside.InPort, outside.EthSrc, outside.EthDst, outside.VLANs[0].TCI = 0, [6]byte{}, [6]byte{}, 0
	outside.EthType, outside.NwProto, outside.NwSrc, outside.NwDst = 0, 0, 0, 0
	outside.NwTos &^= ipDSCPMask
	outside.TpSrc, outside.TpDst, outside.Metadata = 0, 0, 0
	outside.MPLSLSE &^= mplsLabelMask | mplsTCMask
	if outside != (mf.Flow{}) {
		return errorf(OFPBMC_BAD_FIELD, "ofp11_match has no field for part of the match (it has in_port, Ethernet, VLAN, IPv4, transport ports, MPLS label and TC, metadata)")
	}
	return errorf(OFPBMC_BAD_WILDCARDS, "ofp11_match cannot carry this combination of values and masks")
}
