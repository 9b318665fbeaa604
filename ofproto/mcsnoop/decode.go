package mcsnoop

import (
	"encoding/binary"
	"errors"
	"net/netip"
)

// IGMP and MLD message types (RFC 1112, 2236, 3376; RFC 2710, 3810).
const (
	IGMPQuery    = 0x11
	IGMPv1Report = 0x12
	IGMPv2Report = 0x16
	IGMPLeave    = 0x17
	IGMPv3Report = 0x22

	MLDQuery    = 130
	MLDReport   = 131
	MLDDone     = 132
	MLDv2Report = 143
)

// IsIGMPMembership reports whether an IGMP type is a report or a leave
// (forwarded to routers only); IsIGMPQuery whether it is a query.
func IsIGMPMembership(typ uint8) bool {
	return typ == IGMPv1Report || typ == IGMPv2Report || typ == IGMPv3Report || typ == IGMPLeave
}

// IsIGMPQuery reports whether an IGMP type is a membership query.
func IsIGMPQuery(typ uint8) bool { return typ == IGMPQuery }

// IsMLD reports whether an ICMPv6 type is an MLD message; IsMLDReport
// whether it is a report or done (forwarded to routers only).
func IsMLD(typ uint8) bool { return typ == MLDQuery || IsMLDReport(typ) }

// IsMLDReport reports whether an ICMPv6 type is an MLD report or done.
func IsMLDReport(typ uint8) bool { return typ == MLDReport || typ == MLDDone || typ == MLDv2Report }

// Decoding errors: the update is ignored (Open vSwitch logs the checksum
// one in ofproto/trace only).
var (
	ErrTruncated = errors.New("mcsnoop: truncated message")
	ErrChecksum  = errors.New("mcsnoop: bad checksum")
)

// Kind says what a message asks of the database.
type Kind uint8

// Message kinds.
const (
	KindNone    Kind = iota // nothing to learn (an unknown type)
	KindQuery               // a router is on the port (when Source is not zero)
	KindJoin                // the port joins Group
	KindLeave               // the port leaves Group
	KindRecords             // IGMPv3 / MLDv2 report: each record joins or leaves
)

// Record is one group record of an IGMPv3 or MLDv2 report.
type Record struct {
	Group netip.Addr
	Leave bool // INCLUDE mode with no sources
}

// Message is a decoded IGMP or MLD message.
type Message struct {
	Kind    Kind
	Source  netip.Addr // the IP source (queries from 0.0.0.0 or :: make no router)
	Group   netip.Addr
	Records []Record
}

// IGMPv3 / MLDv2 record types Open vSwitch considers
// (MODE_IS_INCLUDE .. BLOCK_OLD_SOURCES).
const (
	recModeIsInclude     = 1
	recChangeToInclude   = 3
	recBlockOldSources   = 6
	igmpv3RecordLen      = 8
	mld2RecordLen        = 20
	igmpHeaderLen        = 8
	mldHeaderLen         = 8
	icmpv6NextHeader     = 58
	mldMulticastAddrSize = 16
)

// DecodeIGMP decodes the IGMP message msg (the IPv4 payload, exactly)
// sent from src.
func DecodeIGMP(src netip.Addr, msg []byte) (Message, error) {
	if len(msg) < igmpHeaderLen {
		return Message{}, ErrTruncated
	}
	if checksum(msg, 0) != 0 {
		return Message{}, ErrChecksum
	}
	m := Message{Source: src}
	group := netip.AddrFrom4([4]byte(msg[4:8]))
	switch msg[0] {
	case IGMPQuery:
		m.Kind = KindQuery
	case IGMPv1Report, IGMPv2Report:
		m.Kind, m.Group = KindJoin, group
	case IGMPLeave:
		m.Kind, m.Group = KindLeave, group
	case IGMPv3Report:
		m.Kind = KindRecords
		n := int(binary.BigEndian.Uint16(msg[6:8]))
		off := igmpHeaderLen
		for ; n > 0 && off+igmpv3RecordLen <= len(msg); n-- {
			typ, aux, nsrcs := msg[off], int(msg[off+1]), int(binary.BigEndian.Uint16(msg[off+2:]))
			if typ < recModeIsInclude || typ > recBlockOldSources {
				// Open vSwitch does not step over an unknown record
				// (it reads the same one again): nothing after it counts.
				break
			}
			m.Records = append(m.Records, Record{Group: netip.AddrFrom4([4]byte(msg[off+4 : off+8])),
				Leave: nsrcs == 0 && (typ == recModeIsInclude || typ == recChangeToInclude)})
			// Open vSwitch adds aux_len as bytes, not 32-bit words.
			off += igmpv3RecordLen + 4*nsrcs + aux
		}
	}
	return m, nil
}

// DecodeMLD decodes the MLD message msg (the ICMPv6 message, exactly)
// sent from src to dst (the checksum covers them).
func DecodeMLD(src, dst netip.Addr, msg []byte) (Message, error) {
	if len(msg) < mldHeaderLen {
		return Message{}, ErrTruncated
	}
	s, d := src.As16(), dst.As16()
	var ph uint32
	for i := 0; i < 16; i += 2 {
		ph += uint32(binary.BigEndian.Uint16(s[i:])) + uint32(binary.BigEndian.Uint16(d[i:]))
	}
	ph += uint32(len(msg)>>16) + uint32(len(msg)&0xffff) + icmpv6NextHeader
	if checksum(msg, ph) != 0 {
		return Message{}, ErrChecksum
	}
	m := Message{Source: src}
	switch msg[0] {
	case MLDQuery:
		m.Kind = KindQuery
	case MLDReport, MLDDone:
		if len(msg) < mldHeaderLen+mldMulticastAddrSize {
			return Message{}, ErrTruncated
		}
		m.Kind, m.Group = KindJoin, netip.AddrFrom16([16]byte(msg[8:24]))
		if msg[0] == MLDDone {
			m.Kind = KindLeave
		}
	case MLDv2Report:
		m.Kind = KindRecords
		n := int(binary.BigEndian.Uint16(msg[6:8]))
		off := mldHeaderLen
		for ; n > 0 && off+mld2RecordLen <= len(msg); n-- {
			typ, aux, nsrcs := msg[off], int(msg[off+1]), int(binary.BigEndian.Uint16(msg[off+2:]))
			if typ >= recModeIsInclude && typ <= recBlockOldSources {
				m.Records = append(m.Records, Record{Group: netip.AddrFrom16([16]byte(msg[off+4 : off+20])),
					Leave: nsrcs == 0 && (typ == recModeIsInclude || typ == recChangeToInclude)})
			}
			off += mld2RecordLen + 16*nsrcs + aux
		}
	}
	return m, nil
}

// checksum is the Internet checksum of b with sum added: 0 when b
// carries a valid one.
func checksum(b []byte, sum uint32) uint16 {
	for len(b) >= 2 {
		sum += uint32(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint32(b[0]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// Apply updates the database with m, received on port in vlan at nowMS.
// It returns how many entries changed (Open vSwitch's count, which
// ofproto/trace reports).
func (t *Table) Apply(m Message, vlan uint16, port PortID, nowMS int64) int {
	count := 0
	add := func(ok bool) {
		if ok {
			count++
		}
	}
	switch m.Kind {
	case KindQuery:
		if m.Source.IsValid() && !m.Source.IsUnspecified() {
			add(t.AddMrouter(vlan, port, nowMS))
		}
	case KindJoin:
		add(t.AddGroup(m.Group, vlan, port, nowMS))
	case KindLeave:
		add(t.LeaveGroup(m.Group, vlan, port))
	case KindRecords:
		for _, r := range m.Records {
			if r.Leave {
				add(t.LeaveGroup(r.Group, vlan, port))
			} else {
				add(t.AddGroup(r.Group, vlan, port, nowMS))
			}
		}
	}
	return count
}
