// Package bpdu is the 802.1D BPDU wire layout that the spanning tree
// protocols (ofproto/stp, ofproto/rstp) share: the group address, the
// 802.3/LLC frame a BPDU travels in, and the fields of a configuration
// BPDU (an RST BPDU is the same with one more byte, a TCN only the
// header). Which BPDUs a protocol accepts, and how it finds one in a
// received frame, stay with the protocol. It imports only the standard
// library.
package bpdu

import "encoding/binary"

// Addr is the destination of every BPDU (the Bridge Group Address).
var Addr = [6]byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x00}

// BPDU types.
const (
	TypeConfig = 0x00
	TypeRST    = 0x02
	TypeTCN    = 0x80
)

// Sizes of the BPDUs after the LLC header, and of the headers.
const (
	HeaderLen = 4 // protocol identifier, version, type
	ConfigLen = 35
	RSTLen    = 36
	TCNLen    = 4
	EthLen    = 14
	LLCLen    = 3
)

// BPDU is a decoded BPDU: a configuration or RST BPDU's fields, or only
// Version and Type for a topology change notification. Times are in
// 1/256 s as on the wire.
type BPDU struct {
	Version, Type, Flags uint8
	RootID               uint64
	RootPathCost         uint32
	BridgeID             uint64
	PortID               uint16
	MessageAge, MaxAge   uint16
	HelloTime, FwdDelay  uint16
}

// DecodeFields reads the flags and the configuration fields that follow
// the header; b holds at least ConfigLen bytes.
func (d *BPDU) DecodeFields(b []byte) {
	d.Flags = b[4]
	d.RootID = binary.BigEndian.Uint64(b[5:])
	d.RootPathCost = binary.BigEndian.Uint32(b[13:])
	d.BridgeID = binary.BigEndian.Uint64(b[17:])
	d.PortID = binary.BigEndian.Uint16(b[25:])
	d.MessageAge = binary.BigEndian.Uint16(b[27:])
	d.MaxAge = binary.BigEndian.Uint16(b[29:])
	d.HelloTime = binary.BigEndian.Uint16(b[31:])
	d.FwdDelay = binary.BigEndian.Uint16(b[33:])
}

// Encode returns the BPDU's bytes: TCNLen for a TCN, RSTLen for an RST
// BPDU (its version 1 length zero), ConfigLen otherwise.
func (d *BPDU) Encode() []byte {
	if d.Type == TypeTCN {
		return []byte{0, 0, d.Version, TypeTCN}
	}
	n := ConfigLen
	if d.Type == TypeRST {
		n = RSTLen
	}
	b := make([]byte, n)
	b[2], b[3], b[4] = d.Version, d.Type, d.Flags
	binary.BigEndian.PutUint64(b[5:], d.RootID)
	binary.BigEndian.PutUint32(b[13:], d.RootPathCost)
	binary.BigEndian.PutUint64(b[17:], d.BridgeID)
	binary.BigEndian.PutUint16(b[25:], d.PortID)
	binary.BigEndian.PutUint16(b[27:], d.MessageAge)
	binary.BigEndian.PutUint16(b[29:], d.MaxAge)
	binary.BigEndian.PutUint16(b[31:], d.HelloTime)
	binary.BigEndian.PutUint16(b[33:], d.FwdDelay)
	return b
}

// Frame wraps a BPDU in the 802.3 frame a switch sends: destination
// Addr, source src, the length field, and the LLC header (DSAP and SSAP
// 0x42, control 3).
func Frame(src [6]byte, bpdu []byte) []byte {
	f := make([]byte, EthLen+LLCLen+len(bpdu))
	copy(f, Addr[:])
	copy(f[6:], src[:])
	binary.BigEndian.PutUint16(f[12:], uint16(LLCLen+len(bpdu)))
	f[14], f[15], f[16] = 0x42, 0x42, 0x03
	copy(f[EthLen+LLCLen:], bpdu)
	return f
}
