package cfm

import (
	"encoding/binary"
	"errors"
)

// Frame constants.
const (
	// EtherType is the CFM EtherType.
	EtherType = 0x8902
	// Len is the length of the CCM the switch sends (IEEE 802.1ag's
	// minimum); AcceptLen the shortest accepted (older Open vSwitch
	// versions sent one byte less).
	Len       = 75
	AcceptLen = 74
	// MAIDLen is the length of the maintenance association identifier.
	MAIDLen = 48
	// OpcodeCCM is the CFM opcode of a continuity check message.
	OpcodeCCM = 1
	// flagRDI is the remote defect indication bit of the flags.
	flagRDI = 0x80
	// tlvOffset is the first TLV's offset the switch writes.
	tlvOffset = 70
)

// CCM addresses: the standard one, and Open vSwitch's for extended mode.
var (
	AddrCCM  = [6]byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x30}
	AddrCCMX = [6]byte{0x01, 0x23, 0x20, 0x00, 0x00, 0x30}
)

// CCM is a continuity check message as Open vSwitch lays it out: the
// IEEE 802.1ag header, the 48-byte MAID, then the ITU-T Y.1731 zero area
// that Open vSwitch's extended mode uses for its interval, 64-bit MPID
// and operational state.
type CCM struct {
	MDLevelVersion uint8
	Opcode         uint8
	Flags          uint8
	TLVOffset      uint8
	Seq            uint32
	MPID           uint16
	MAID           [MAIDLen]byte
	IntervalMsX    uint16
	MPID64         uint64
	OpDown         uint8
}

// ErrShort is Decode's error for fewer than AcceptLen bytes.
var ErrShort = errors.New("cfm: CCM too short")

// Decode reads a CCM from the bytes after the Ethernet (and VLAN)
// headers.
func Decode(b []byte) (CCM, error) {
	var m CCM
	if len(b) < AcceptLen {
		return m, ErrShort
	}
	m.MDLevelVersion, m.Opcode, m.Flags, m.TLVOffset = b[0], b[1], b[2], b[3]
	m.Seq = binary.BigEndian.Uint32(b[4:])
	m.MPID = binary.BigEndian.Uint16(b[8:])
	copy(m.MAID[:], b[10:10+MAIDLen])
	m.IntervalMsX = binary.BigEndian.Uint16(b[58:])
	m.MPID64 = binary.BigEndian.Uint64(b[60:])
	m.OpDown = b[68]
	return m, nil
}

// Encode appends the CCM's Len bytes (zero area and end TLV zero) to b.
func (m *CCM) Encode(b []byte) []byte {
	var w [Len]byte
	w[0], w[1], w[2], w[3] = m.MDLevelVersion, m.Opcode, m.Flags, m.TLVOffset
	binary.BigEndian.PutUint32(w[4:], m.Seq)
	binary.BigEndian.PutUint16(w[8:], m.MPID)
	copy(w[10:], m.MAID[:])
	binary.BigEndian.PutUint16(w[58:], m.IntervalMsX)
	binary.BigEndian.PutUint64(w[60:], m.MPID64)
	w[68] = m.OpDown
	return append(b, w[:]...)
}

// Payload returns the bytes after a frame's Ethernet header and its
// 802.1Q/802.1ad tags (Open vSwitch's L3 offset), with its source
// address; ok is false when the frame is too short to have them.
func Payload(frame []byte) (payload []byte, src [6]byte, ok bool) {
	if len(frame) < 14 {
		return nil, src, false
	}
	copy(src[:], frame[6:12])
	off := 12
	for {
		if len(frame) < off+2 {
			return nil, src, false
		}
		t := binary.BigEndian.Uint16(frame[off:])
		if t != 0x8100 && t != 0x88a8 {
			break
		}
		off += 4
	}
	return frame[off+2:], src, true
}

// ovsMAID is the MAID Open vSwitch uses: MD name "ovs" (character string
// format 4) and MA name "ovs" (format 2), zero-padded.
func ovsMAID() [MAIDLen]byte {
	var m [MAIDLen]byte
	m[0], m[1] = 4, 3
	copy(m[2:], "ovs")
	m[5], m[6] = 2, 3
	copy(m[7:], "ovs")
	return m
}

// frame builds a CCM frame: Ethernet to dst from src, an 802.1Q tag when
// tci is nonzero, then the CCM.
func frame(dst, src [6]byte, tci uint16, m *CCM) []byte {
	b := make([]byte, 0, 18+Len)
	b = append(b, dst[:]...)
	b = append(b, src[:]...)
	if tci != 0 {
		b = append(b, 0x81, 0x00, byte(tci>>8), byte(tci))
	}
	b = append(b, byte(EtherType>>8), byte(EtherType&0xff))
	return m.Encode(b)
}
