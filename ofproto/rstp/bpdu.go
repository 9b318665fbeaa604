package rstp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gvs-project/gvs/ofproto/internal/bpdu"
)

// Addr is the destination of every BPDU.
var Addr = bpdu.Addr

// BPDU types.
const (
	TypeConfig = bpdu.TypeConfig
	TypeRST    = bpdu.TypeRST
	TypeTCN    = bpdu.TypeTCN
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
	ConfigLen = bpdu.ConfigLen
	RSTLen    = bpdu.RSTLen
	TCNLen    = bpdu.TCNLen
)

// BPDU is a decoded BPDU (the shared wire layout, ofproto/internal/bpdu;
// Encode writes it). Times are in 1/256 s as on the wire.
type BPDU = bpdu.BPDU

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
		d.DecodeFields(b)
		return d, nil
	}
	return d, fmt.Errorf("%w %d", ErrType, d.Type)
}

// Frame wraps a BPDU in the 802.3/LLC frame the switch sends.
func Frame(src [6]byte, b []byte) []byte { return bpdu.Frame(src, b) }

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
