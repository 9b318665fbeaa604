package lacp

import (
	"encoding/binary"
	"errors"
	"strings"
)

// Actor and partner state bits (802.1AX 6.4.2.3).
const (
	StateActivity     uint8 = 0x01 // active (else passive)
	StateTimeout      uint8 = 0x02 // short timeout (fast)
	StateAggregation  uint8 = 0x04 // the link may be aggregated
	StateSync         uint8 = 0x08 // in sync with the aggregator
	StateCollecting   uint8 = 0x10
	StateDistributing uint8 = 0x20
	StateDefaulted    uint8 = 0x40 // partner information is the default
	StateExpired      uint8 = 0x80 // partner information has expired
)

// stateNames is the order and wording Open vSwitch prints the bits in.
var stateNames = []struct {
	bit  uint8
	name string
}{
	{StateActivity, "activity"}, {StateTimeout, "timeout"},
	{StateAggregation, "aggregation"}, {StateSync, "synchronized"},
	{StateCollecting, "collecting"}, {StateDistributing, "distributing"},
	{StateDefaulted, "defaulted"}, {StateExpired, "expired"},
}

// StateString names the bits of s, each preceded by a space.
func StateString(s uint8) string {
	var b strings.Builder
	for _, n := range stateNames {
		if s&n.bit != 0 {
			b.WriteString(" " + n.name)
		}
	}
	return b.String()
}

// Info is the actor or partner information of a LACPDU.
type Info struct {
	SysPriority  uint16
	SysID        [6]byte
	Key          uint16
	PortPriority uint16
	PortID       uint16
	State        uint8
}

// Wire layout of a LACPDU (the Slow Protocols payload, 110 bytes).
const (
	PDULen = 110

	infoLen       = 15
	offSubtype    = 0
	offVersion    = 1
	offActorTLV   = 2  // type 1, length 20
	offActor      = 4  // Info, then 3 reserved bytes
	offPartnerTLV = 22 // type 2, length 20
	offPartner    = 24
	offCollTLV    = 42 // type 3, length 16
	offCollDelay  = 44 // rest (terminator and reserved) is zero

	subtypeLACP   = 1
	subtypeMarker = 2
)

// Slow Protocols framing (802.3 Annex 57A).
const (
	EtherType = 0x8809
	frameLen  = 14 + PDULen
)

// GroupAddr is the Slow Protocols multicast address LACPDUs are sent to.
var GroupAddr = [6]byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x02}

// PDU is a LACPDU's content.
type PDU struct {
	Actor, Partner Info
}

// Errors of Decode. A marker PDU is valid but carries no LACP
// information (Open vSwitch counts it apart and ignores it).
var (
	ErrMarker   = errors.New("LACP marker PDU")
	ErrUnparsed = errors.New("unparsable LACP PDU")
)

func getInfo(b []byte) Info {
	var in Info
	in.SysPriority = binary.BigEndian.Uint16(b[0:])
	copy(in.SysID[:], b[2:8])
	in.Key = binary.BigEndian.Uint16(b[8:])
	in.PortPriority = binary.BigEndian.Uint16(b[10:])
	in.PortID = binary.BigEndian.Uint16(b[12:])
	in.State = b[14]
	return in
}

func putInfo(b []byte, in *Info) {
	binary.BigEndian.PutUint16(b[0:], in.SysPriority)
	copy(b[2:8], in.SysID[:])
	binary.BigEndian.PutUint16(b[8:], in.Key)
	binary.BigEndian.PutUint16(b[10:], in.PortPriority)
	binary.BigEndian.PutUint16(b[12:], in.PortID)
	b[14] = in.State
}

// Decode reads a Slow Protocols payload (after the ethertype). Like Open
// vSwitch it checks the subtype and the actor and partner TLV headers and
// nothing else; a payload shorter than a LACPDU is unparsable.
func Decode(b []byte) (PDU, error) {
	if len(b) >= 1 && b[offSubtype] == subtypeMarker {
		return PDU{}, ErrMarker
	}
	if len(b) < PDULen || b[offSubtype] != subtypeLACP ||
		b[offActorTLV] != 1 || b[offActorTLV+1] != 20 ||
		b[offPartnerTLV] != 2 || b[offPartnerTLV+1] != 20 {
		return PDU{}, ErrUnparsed
	}
	return PDU{Actor: getInfo(b[offActor:]), Partner: getInfo(b[offPartner:])}, nil
}

// Encode appends the 110-byte LACPDU to dst.
func (p *PDU) Encode(dst []byte) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, PDULen)...)
	b := dst[n:]
	b[offSubtype], b[offVersion] = subtypeLACP, 1
	b[offActorTLV], b[offActorTLV+1] = 1, 20
	putInfo(b[offActor:], &p.Actor)
	b[offPartnerTLV], b[offPartnerTLV+1] = 2, 20
	putInfo(b[offPartner:], &p.Partner)
	b[offCollTLV], b[offCollTLV+1] = 3, 16
	// The collector delay (offCollDelay) stays 0, as Open vSwitch sends it.
	return dst
}

// Frame is the Ethernet frame a member with MAC src sends: the group
// address, src, the Slow Protocols ethertype and the LACPDU.
func Frame(src [6]byte, p *PDU) []byte {
	f := make([]byte, 0, frameLen)
	f = append(f, GroupAddr[:]...)
	f = append(f, src[:]...)
	f = binary.BigEndian.AppendUint16(f, EtherType)
	return p.Encode(f)
}

// Payload returns the Slow Protocols payload of an Ethernet frame without
// VLAN tags, or false when f is not a Slow Protocols frame.
func Payload(f []byte) ([]byte, bool) {
	if len(f) < 14 || binary.BigEndian.Uint16(f[12:]) != EtherType {
		return nil, false
	}
	return f[14:], true
}
