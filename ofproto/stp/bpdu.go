package stp

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Addr is the destination of every BPDU (the Bridge Group Address).
var Addr = [6]byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x00}

// BPDU types and configuration flags.
const (
	TypeConfig = 0x00
	TypeTCN    = 0x80

	FlagTopologyChange    = 0x01
	FlagTopologyChangeAck = 0x80
)

// Sizes of the BPDUs after the LLC header.
const (
	headerLen = 4
	ConfigLen = 35
	TCNLen    = 4
	llcLen    = 3
	ethLen    = 14
)

// BPDU is a decoded BPDU: a configuration BPDU's fields, or only Type
// for a topology change notification. Times are in 1/256 s.
type BPDU struct {
	Type         uint8
	Version      uint8
	Flags        uint8
	RootID       uint64
	RootPathCost uint32
	BridgeID     uint64
	PortID       uint16
	MessageAge   uint16
	MaxAge       uint16
	HelloTime    uint16
	FwdDelay     uint16
}

// Decoding errors; each is counted in the port's error count.
var (
	ErrRunt     = errors.New("stp: runt BPDU")
	ErrProtocol = errors.New("stp: unexpected protocol ID")
	ErrSize     = errors.New("stp: BPDU with invalid size")
	ErrType     = errors.New("stp: BPDU of unexpected type")
)

// Decode parses a BPDU (what follows the LLC header). A configuration
// BPDU may be longer than 35 bytes; a TCN must be exactly 4.
func Decode(b []byte) (BPDU, error) {
	var d BPDU
	if len(b) < headerLen {
		return d, fmt.Errorf("%w: %d bytes", ErrRunt, len(b))
	}
	if id := binary.BigEndian.Uint16(b); id != 0 {
		return d, fmt.Errorf("%w %d", ErrProtocol, id)
	}
	d.Version, d.Type = b[2], b[3]
	switch d.Type {
	case TypeConfig:
		if len(b) < ConfigLen {
			return d, fmt.Errorf("%w: config %d", ErrSize, len(b))
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
	case TypeTCN:
		if len(b) != TCNLen {
			return d, fmt.Errorf("%w: TCN %d", ErrSize, len(b))
		}
	default:
		return d, fmt.Errorf("%w %d", ErrType, d.Type)
	}
	return d, nil
}

// Encode returns the BPDU's bytes (4 for a TCN, 35 for a configuration
// BPDU).
func (d *BPDU) Encode() []byte {
	if d.Type == TypeTCN {
		return []byte{0, 0, d.Version, TypeTCN}
	}
	b := make([]byte, ConfigLen)
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

// Frame wraps a BPDU in the 802.3 frame the switch sends: destination
// Addr, source src, the length field, and the LLC header (DSAP and SSAP
// 0x42, control 3).
func Frame(src [6]byte, bpdu []byte) []byte {
	f := make([]byte, ethLen+llcLen+len(bpdu))
	copy(f, Addr[:])
	copy(f[6:], src[:])
	binary.BigEndian.PutUint16(f[12:], uint16(llcLen+len(bpdu)))
	f[14], f[15], f[16] = 0x42, 0x42, 0x03
	copy(f[17:], bpdu)
	return f
}

// Payload returns the BPDU in a received 802.3 frame: the frame is cut
// to its length field (padding dropped) and the Ethernet and LLC headers
// taken off. ok is false for a frame too short to hold them.
func Payload(frame []byte) (bpdu []byte, ok bool) {
	if len(frame) < ethLen {
		return nil, false
	}
	if n := int(binary.BigEndian.Uint16(frame[12:])) + ethLen; len(frame) > n {
		frame = frame[:n]
	}
	if len(frame) < ethLen+llcLen {
		return nil, false
	}
	return frame[ethLen+llcLen:], true
}
