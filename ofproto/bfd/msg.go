package bfd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Protocol constants (RFC 5880 4.1, RFC 5881 4).
const (
	// PacketLen is a control message without authentication.
	PacketLen = 24
	// DestPort is the UDP port of single-hop control packets.
	DestPort = 3784
	// Version is the protocol version sent and accepted.
	Version = 1
	// FrameLen is the frame PutPacket builds: Ethernet, IPv4, UDP, message.
	FrameLen = 14 + 20 + 8 + PacketLen
)

// Flags of a control message (the low six bits of its second byte).
const (
	FlagMultipoint uint8 = 1 << 0
	FlagDemand     uint8 = 1 << 1
	FlagAuth       uint8 = 1 << 2
	FlagCtl        uint8 = 1 << 3
	FlagFinal      uint8 = 1 << 4
	FlagPoll       uint8 = 1 << 5
)

// State is a session state as it sits in a message's top two bits.
type State uint8

// Session states.
const (
	StateAdminDown State = 0 << 6
	StateDown      State = 1 << 6
	StateInit      State = 2 << 6
	StateUp        State = 3 << 6
)

func (s State) String() string {
	switch s {
	case StateAdminDown:
		return "admin_down"
	case StateDown:
		return "down"
	case StateInit:
		return "init"
	case StateUp:
		return "up"
	}
	return "invalid"
}

// Diag is a diagnostic code (RFC 5880 4.1).
type Diag uint8

// Diagnostics.
const (
	DiagNone         Diag  = 0
	DiagExpired      Diag  = 1
	DiagEchoFailed   Diag  = 2
	DiagRmtDown      Diag  = 3
	DiagFwdReset     Diag  = 4
	DiagPathDown     Diag  = 5
	DiagCPathDown    Diag  = 6
	DiagAdminDown    Diag  = 7
	DiagRCPathDown   Diag  = 8
	diagMask         uint8 = 0x1f
	stateMask        uint8 = 0xc0
	flagsMask        uint8 = 0x3f
	versShift              = 5
	defaultMult            = 3
	defaultSrcIP           = 0xa9fe0101 // 169.254.1.1
	defaultDstIP           = 0xa9fe0100 // 169.254.1.0
	iptosInetControl       = 0xc0
)

func (d Diag) String() string {
	switch d {
	case DiagNone:
		return "No Diagnostic"
	case DiagExpired:
		return "Control Detection Time Expired"
	case DiagEchoFailed:
		return "Echo Function Failed"
	case DiagRmtDown:
		return "Neighbor Signaled Session Down"
	case DiagFwdReset:
		return "Forwarding Plane Reset"
	case DiagPathDown:
		return "Path Down"
	case DiagCPathDown:
		return "Concatenated Path Down"
	case DiagAdminDown:
		return "Administratively Down"
	case DiagRCPathDown:
		return "Reverse Concatenated Path Down"
	}
	return "Invalid Diagnostic"
}

// FlagsString names flags as Open vSwitch logs and shows them: "none",
// or the set flags separated by spaces.
func FlagsString(f uint8) string {
	if f == 0 {
		return "none"
	}
	var parts []string
	for _, x := range []struct {
		bit  uint8
		name string
	}{{FlagMultipoint, "multipoint"}, {FlagDemand, "demand"}, {FlagAuth, "auth"}, {FlagCtl, "ctl"}, {FlagFinal, "final"}, {FlagPoll, "poll"}} {
		if f&x.bit != 0 {
			parts = append(parts, x.name)
		}
	}
	return strings.Join(parts, " ")
}

// Msg is a control message as on the wire (RFC 5880 4.1): intervals in
// microseconds.
type Msg struct {
	VersDiag  uint8 // version (top 3 bits) and diagnostic
	Flags     uint8 // state (top 2 bits) and flags
	Mult      uint8
	Length    uint8
	MyDisc    uint32
	YourDisc  uint32
	MinTx     uint32
	MinRx     uint32
	MinRxEcho uint32
}

// Version returns the message's protocol version.
func (m *Msg) Version() uint8 { return m.VersDiag >> versShift }

// Diag returns the message's diagnostic.
func (m *Msg) Diag() Diag { return Diag(m.VersDiag & diagMask) }

// State returns the sender's session state.
func (m *Msg) State() State { return State(m.Flags & stateMask) }

// FlagBits returns the message's flags without the state.
func (m *Msg) FlagBits() uint8 { return m.Flags & flagsMask }

// ErrShort is returned by Decode for fewer than PacketLen bytes.
var ErrShort = errors.New("bfd: control message too short")

// Decode reads the fixed part of a control message from a UDP payload.
// It checks only the length: the session validates the fields as Open
// vSwitch does (and logs what it drops).
func Decode(b []byte) (Msg, error) {
	if len(b) < PacketLen {
		return Msg{}, fmt.Errorf("%w (%d bytes, at least %d required)", ErrShort, len(b), PacketLen)
	}
	be := binary.BigEndian
	return Msg{VersDiag: b[0], Flags: b[1], Mult: b[2], Length: b[3], MyDisc: be.Uint32(b[4:]), YourDisc: be.Uint32(b[8:]),
		MinTx: be.Uint32(b[12:]), MinRx: be.Uint32(b[16:]), MinRxEcho: be.Uint32(b[20:])}, nil
}

// Encode appends the message's 24 bytes to dst.
func (m *Msg) Encode(dst []byte) []byte {
	dst = append(dst, m.VersDiag, m.Flags, m.Mult, m.Length)
	for _, v := range []uint32{m.MyDisc, m.YourDisc, m.MinTx, m.MinRx, m.MinRxEcho} {
		dst = binary.BigEndian.AppendUint32(dst, v)
	}
	return dst
}

// describe is a message as Open vSwitch's log lines show it (after
// "NAME: TEXT.").
func (m *Msg) describe() string {
	return fmt.Sprintf("\n  vers:%d diag:\"%s\" state:%s mult:%d length:%d\n  flags: %s\n  my_disc:0x%x your_disc:0x%x\n  min_tx:%dus (%dms)\n  min_rx:%dus (%dms)\n  min_rx_echo:%dus (%dms)",
		m.Version(), m.Diag(), m.State(), m.Mult, m.Length, FlagsString(m.FlagBits()), m.MyDisc, m.YourDisc,
		m.MinTx, m.MinTx/1000, m.MinRx, m.MinRx/1000, m.MinRxEcho, m.MinRxEcho/1000)
}

// BFDMAC is the destination MAC Open vSwitch sends control packets to
// unless bfd_local_dst_mac says otherwise.
var BFDMAC = [6]byte{0x00, 0x23, 0x20, 0x00, 0x00, 0x01}

// frame builds the Ethernet/IPv4/UDP frame around a message.
func frame(src, dst [6]byte, ipSrc, ipDst uint32, udpSrc uint16, m *Msg) []byte {
	b := make([]byte, 0, FrameLen)
	b = append(b, dst[:]...)
	b = append(b, src[:]...)
	b = append(b, 0x08, 0x00)
	ip := len(b)
	b = append(b, 0x45, iptosInetControl)
	b = binary.BigEndian.AppendUint16(b, 20+8+PacketLen)
	b = append(b, 0, 0, 0, 0, 255, 17, 0, 0) // id, frag, ttl, proto, checksum
	b = binary.BigEndian.AppendUint32(b, ipSrc)
	b = binary.BigEndian.AppendUint32(b, ipDst)
	binary.BigEndian.PutUint16(b[ip+10:], ipChecksum(b[ip:ip+20]))
	b = binary.BigEndian.AppendUint16(b, udpSrc)
	b = binary.BigEndian.AppendUint16(b, DestPort)
	b = binary.BigEndian.AppendUint16(b, 8+PacketLen)
	b = append(b, 0, 0) // no UDP checksum, as Open vSwitch
	return m.Encode(b)
}

func ipChecksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(h); i += 2 {
		sum += uint32(h[i])<<8 | uint32(h[i+1])
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// UDPPayload returns the UDP payload of an untagged or 802.1Q-tagged
// Ethernet/IPv4 frame and the IPv4 TTL, or false when the frame is not
// IPv4/UDP or is truncated before the payload (a first fragment's payload
// is returned as it is; later fragments have none).
func UDPPayload(f []byte) (payload []byte, ttl uint8, ok bool) {
	if len(f) < 14 {
		return nil, 0, false
	}
	off := 12
	typ := binary.BigEndian.Uint16(f[off:])
	for (typ == 0x8100 || typ == 0x88a8) && len(f) >= off+6 {
		off += 4
		typ = binary.BigEndian.Uint16(f[off:])
	}
	off += 2
	if typ != 0x0800 || len(f) < off+20 {
		return nil, 0, false
	}
	ihl := int(f[off]&0x0f) * 4
	if f[off]>>4 != 4 || ihl < 20 || len(f) < off+ihl || f[off+9] != 17 {
		return nil, 0, false
	}
	if binary.BigEndian.Uint16(f[off+6:])&0x1fff != 0 {
		return nil, 0, false // a later fragment has no UDP header
	}
	ttl = f[off+8]
	off += ihl
	if len(f) < off+8 {
		return nil, 0, false
	}
	return f[off+8:], ttl, true
}
