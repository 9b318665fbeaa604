package stp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gvs-project/gvs/ofproto/internal/bpdu"
)

// Addr is the destination of every BPDU (the Bridge Group Address).
var Addr = bpdu.Addr

// BPDU types and configuration flags.
const (
	TypeConfig = bpdu.TypeConfig
	TypeTCN    = bpdu.TypeTCN

	FlagTopologyChange    = 0x01
	FlagTopologyChangeAck = 0x80
)

// Sizes of the BPDUs after the LLC header.
const (
	ConfigLen = bpdu.ConfigLen
	TCNLen    = bpdu.TCNLen
	ethLen    = bpdu.EthLen
	llcLen    = bpdu.LLCLen
)

// BPDU is a decoded BPDU: a configuration BPDU's fields, or only Type
// for a topology change notification (the shared wire layout,
// ofproto/internal/bpdu; Encode writes it).
type BPDU = bpdu.BPDU

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
	if len(b) < bpdu.HeaderLen {
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
		d.DecodeFields(b)
	case TypeTCN:
		if len(b) != TCNLen {
			return d, fmt.Errorf("%w: TCN %d", ErrSize, len(b))
		}
	default:
		return d, fmt.Errorf("%w %d", ErrType, d.Type)
	}
	return d, nil
}

// Frame wraps a BPDU in the 802.3/LLC frame the switch sends.
func Frame(src [6]byte, b []byte) []byte { return bpdu.Frame(src, b) }

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
