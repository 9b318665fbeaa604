package rstp

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Addr is the destination of every BPDU.
var Addr = [6]byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x00}

// BPDU types.
const (
	TypeConfig = 0x00
	TypeRST    = 0x02
	TypeTCN    = 0x80
)

// BPDU flags (RST BPDUs use all; configuration BPDUs TC and TC ack).
const (
	FlagTC         = 0x01
	FlagProposal   = 0x02
	FlagRoleMask   = 0x0c
	FlagLearning   = 0x10
	FlagForwarding = 0x20
	FlagAgreement  = 0x40
	FlagTCAck      = 0x80

	roleShift      = 2
	bpduRoleAltBak = 1
	bpduRoleRoot   = 2
	bpduRoleDesig  = 3
)

// Sizes of the BPDUs after the LLC header.
const (
	ConfigLen = 35
	RSTLen    = 36
	TCNLen    = 4
)

// BPDU is a decoded BPDU. Times are in 1/256 s as on the wire.
type BPDU struct {
	Version, Type, Flags uint8
	RootID               uint64
	RootPathCost         uint32
	BridgeID             uint64
	PortID               uint16
	MessageAge, MaxAge   uint16
	HelloTime, FwdDelay  uint16
}

// Decoding errors, each counted in the port's error count.
var (
	ErrRunt     = errors.New("rstp: runt BPDU")
	ErrProtocol = errors.New("rstp: unexpected protocol ID")
	ErrSize     = errors.New("rstp: BPDU with invalid size")
	ErrType     = errors.New("rstp: BPDU of unexpected type")
)

// Decode parses a BPDU (what follows the LLC header).
func Decode(b []byte) (BPDU, error) {
	var d BPDU
	if len(b) < 4 {
		return d, fmt.Errorf("%w: %d bytes", ErrRunt, len(b))
	}
	if binary.BigEndian.Uint16(b) != 0 {
		return d, ErrProtocol
	}
	d.Version, d.Type = b[2], b[3]
	switch d.Type {
	case TypeTCN:
		return d, nil
	case TypeConfig, TypeRST:
		need := ConfigLen
		if d.Type == TypeRST {
			need = RSTLen
		}
		if len(b) < need {
			return d, fmt.Errorf("%w: %d bytes", ErrSize, len(b))
		}
		d.Flags = b[4]
		d.RootID = binary.BigEndian.Uint64(b[5:])
		d.RootPathCost = binary.BigEndian.Uint32(b[13:])
		d.BridgeID = binary.BigEndian.Uint64(b[17:])
		d.PortID = binary.BigEndian.Uint16(b[25:])
		d.MessageAge = binary.BigEndian.Uint16(b[27:])
		d.MaxAge = binary.BigEndian.Uint16(b[29:])
		d.HelloTime = binary.BigEndian.Uint16(b[31:])
		d.FwdDelay = binary.BigEndian.Uint16(b[33:])
		return d, nil
	}
	return d, fmt.Errorf("%w %d", ErrType, d.Type)
}

// Encode returns the BPDU's bytes.
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

// Frame wraps a BPDU in the 802.3/LLC frame the switch sends.
func Frame(src [6]byte, bpdu []byte) []byte {
	f := make([]byte, 17+len(bpdu))
	copy(f, Addr[:])
	copy(f[6:], src[:])
	binary.BigEndian.PutUint16(f[12:], uint16(3+len(bpdu)))
	f[14], f[15], f[16] = 0x42, 0x42, 0x03
	copy(f[17:], bpdu)
	return f
}

// Payload returns the BPDU in a received frame: an 802.1Q tag is
// skipped, the frame cut to its length field, the LLC header taken off.
func Payload(frame []byte) ([]byte, bool) {
	hdr := 14
	if len(frame) >= 18 && binary.BigEndian.Uint16(frame[12:]) == 0x8100 {
		frame = append(append([]byte(nil), frame[:12]...), frame[16:]...)
	}
	if len(frame) < hdr {
		return nil, false
	}
	if n := int(binary.BigEndian.Uint16(frame[12:])) + hdr; len(frame) > n {
		frame = frame[:n]
	}
	if len(frame) < hdr+3 {
		return nil, false
	}
	return frame[hdr+3:], true
}
