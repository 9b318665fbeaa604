package ofp

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// Packet-in formats (NXT_SET_PACKET_IN_FORMAT values).
const (
	PacketInStandard = 0 // OFPT_PACKET_IN of the connection's version
	PacketInNXT      = 1 // NXT_PACKET_IN
	PacketIn2        = 2 // NXT_PACKET_IN2
)

// Packet-in reasons as on the wire (OFPR_*). OpenFlow 1.0–1.3 know only
// the first three; Open vSwitch sends ActionSet, Group and PacketOut as
// Action before OpenFlow 1.4.
const (
	OFPRNoMatch    = 0
	OFPRAction     = 1
	OFPRInvalidTTL = 2
	OFPRActionSet  = 3
	OFPRGroup      = 4
	OFPRPacketOut  = 5
)

// PacketInReasonFor returns the reason Open vSwitch puts on the wire for
// version v: before OpenFlow 1.4 the action-set, group and packet-out
// reasons are sent as OFPRAction. The packet-in encoders apply it.
func PacketInReasonFor(reason, v uint8) uint8 {
	if v < 5 && reason >= OFPRActionSet && reason <= OFPRPacketOut {
		return OFPRAction
	}
	return reason
}

// Reserved 16-bit ports a packet-out may name as its input port.
const (
	OFPPMax        = 0xff00 // OFPP_MAX: first reserved port
	OFPPInPort     = 0xfff8
	OFPPTable      = 0xfff9
	OFPPNormal     = 0xfffa
	OFPPFlood      = 0xfffb
	OFPPAll        = 0xfffc
	OFPPController = 0xfffd
	OFPPLocal      = 0xfffe
	OFPPNone       = 0xffff
)

// PortToOF11 converts a 16-bit OpenFlow port (ofp_port) to its 32-bit
// OpenFlow 1.1+ form: reserved ports 0xff00.. map to 0xffffff00...
func PortToOF11(p uint16) uint32 {
	if p >= OFPPMax {
		return uint32(p) + 0xffff0000
	}
	return uint32(p)
}

// PortFromOF11 converts a 32-bit OpenFlow 1.1+ port to the 16-bit form,
// failing with OFPBAC_BAD_OUT_PORT (as Open vSwitch) for ports in the
// gap 0xff00..0xfffffeff.
func PortFromOF11(p uint32) (uint16, error) {
	switch {
	case p < OFPPMax:
		return uint16(p), nil
	case p >= 0xffffff00:
		return uint16(p - 0xffff0000), nil
	}
	return OFPPNone, errorf(OFPBAC_BAD_OUT_PORT, "port %#x is outside 0 through %#x and %#x through %#x",
		p, OFPPMax-1, uint32(0xffffff00), uint32(0xffffffff))
}

// PacketIn is a packet sent to the controller, in any of its forms:
// OFPT_PACKET_IN (OpenFlow 1.0, 1.1, 1.2 and 1.3+ layouts), NXT_PACKET_IN
// or NXT_PACKET_IN2; Format chooses when encoding. Fields a form lacks
// decode as Open vSwitch does: Cookie all-ones ("none") without a cookie,
// TableID 0 in OpenFlow 1.0, BufferID OFP_NO_BUFFER in NXT_PACKET_IN2
// without a buffer property.
type PacketIn struct {
	Format   uint8
	BufferID uint32
	TotalLen uint16 // full packet length (Data may be truncated)
	Reason   uint8  // OFPR*: as decoded; encoders apply PacketInReasonFor
	TableID  uint8
	Cookie   uint64
	// Match holds the packet's pipeline metadata (in_port, tunnel,
	// registers, metadata, conntrack, pkt_mark, ...). OpenFlow 1.0 and
	// 1.1 packet-ins carry only in_port.
	Match mf.Match
	Data  []byte
	// NXT_PACKET_IN2 (and NXT_RESUME) only.
	Userdata []byte
	// Continuation is the payload of the NXPINT_CONTINUATION property
	// (its nested properties, after the 4 bytes of alignment padding):
	// opaque switch state, echoed back in NXT_RESUME.
	Continuation []byte
}

// Resume is NXT_RESUME: a paused packet-in (NXT_PACKET_IN2 with a
// continuation) sent back to the switch. It shares PacketIn's fields and
// encoding; Format is ignored.
type Resume struct {
	PacketIn
}

// NXT_PACKET_IN2 property types (NXPINT_*).
const (
	nxpintPacket = iota
	nxpintFullLen
	nxpintBufferID
	nxpintTableID
	nxpintCookie
	nxpintReason
	nxpintMetadata
	nxpintUserdata
	nxpintContinuation
)

func init() {
	for _, r := range []Raw{RawOFPT10_PACKET_IN, RawOFPT11_PACKET_IN, RawOFPT12_PACKET_IN, RawOFPT13_PACKET_IN, RawNXT_PACKET_IN} {
		decoders[r] = decodePacketIn
	}
	decoders[RawNXT_PACKET_IN2] = func(r *reader, v uint8, _ Raw) (Message, error) {
		pin := &PacketIn{Format: PacketIn2}
		return pin, pin.decodeProps(r, false)
	}
	decoders[RawNXT_RESUME] = func(r *reader, v uint8, _ Raw) (Message, error) {
		rs := &Resume{}
		return rs, rs.decodeProps(r, true)
	}
	for _, r := range []Raw{RawOFPT10_PACKET_OUT, RawOFPT11_PACKET_OUT, RawOFPT15_PACKET_OUT} {
		decoders[r] = decodePacketOut
	}
}

func setInPort(m *mf.Match, p uint16) {
	m.Flow.InPort, m.Mask.InPort = uint32(p), 0xffff
}

func decodePacketIn(r *reader, v uint8, raw Raw) (Message, error) {
	pin := &PacketIn{Cookie: ^uint64(0)}
	switch raw {
	case RawOFPT10_PACKET_IN:
		pin.BufferID, pin.TotalLen = r.u32(), r.u16()
		setInPort(&pin.Match, r.u16())
		pin.Reason = r.u8()
		r.skip(1)
	case RawOFPT11_PACKET_IN:
		pin.BufferID = r.u32()
		in := r.u32()
		r.skip(4) // in_phy_port: Open vSwitch sends in_port again and ignores it
		pin.TotalLen, pin.Reason, pin.TableID = r.u16(), r.u8(), r.u8()
		if r.Err() != nil {
			return nil, r.Err()
		}
		p, err := PortFromOF11(in)
		if err != nil {
			return nil, err
		}
		setInPort(&pin.Match, p)
	case RawNXT_PACKET_IN:
		pin.Format = PacketInNXT
		pin.BufferID, pin.TotalLen, pin.Reason, pin.TableID = r.u32(), r.u16(), r.u8(), r.u8()
		pin.Cookie = r.u64()
		n := int(r.u16())
		r.skip(6)
		if r.Err() != nil {
			return nil, r.Err()
		}
		if pad8(n) > r.len() {
			return nil, errorf(OFPBMC_BAD_LEN, "nx_match length %d (padded %d) exceeds %d remaining bytes", n, pad8(n), r.len())
		}
		if err := DecodeNXM(r.take(pad8(n))[:n], false, &pin.Match, nil); err != nil {
			return nil, err
		}
		r.skip(2)
	default: // OpenFlow 1.2 and 1.3+
		pin.BufferID, pin.TotalLen, pin.Reason, pin.TableID = r.u32(), r.u16(), r.u8(), r.u8()
		if raw == RawOFPT13_PACKET_IN {
			pin.Cookie = r.u64()
		}
		if r.Err() != nil {
			return nil, r.Err()
		}
		n, err := decodeOXMMatchLoose(r.b[r.off:], &pin.Match, false)
		if err != nil {
			return nil, err
		}
		r.skip(n)
		r.skip(2)
	}
	pin.Data = r.rest()
	return pin, r.Err()
}

// decodeOXMMatchLoose decodes an OXM ofp_match at the start of p as Open
// vSwitch's oxm_pull_match_loose: unknown fields are skipped and
// prerequisites are not checked. With pipelineOnly, fields other than
// pipeline metadata fail with OFPBRC_PIPELINE_FIELDS_ONLY. It returns the
// bytes used including padding.
func decodeOXMMatchLoose(p []byte, m *mf.Match, pipelineOnly bool) (int, error) {
	if len(p) < 4 {
		return 0, errorf(OFPBMC_BAD_LEN, "ofp_match header needs 4 bytes, have %d", len(p))
	}
	typ, n := binary.BigEndian.Uint16(p), int(binary.BigEndian.Uint16(p[2:]))
	if n < 4 {
		return 0, errorf(OFPBMC_BAD_LEN, "ofp_match length %d", n)
	}
	if typ != ofpmtOXM {
		return 0, errorf(OFPBMC_BAD_TYPE, "ofp_match type %d", typ)
	}
	if pad8(n) > len(p) {
		return 0, errorf(OFPBMC_BAD_LEN, "ofp_match of %d bytes (padded %d) in %d", n, pad8(n), len(p))
	}
	if err := DecodeNXM(p[4:n], false, m, nil); err != nil {
		return 0, err
	}
	if pipelineOnly {
		if err := checkPipelineOnly(m); err != nil {
			return 0, err
		}
	}
	return pad8(n), nil
}

// isPipelineField reports whether a field is packet metadata that a
// packet-out may set (Open vSwitch's mf_is_pipeline_field).
func isPipelineField(id mf.ID) bool {
	switch {
	case id == mf.IDPacketType, id == mf.IDMetadata, id == mf.IDInPort, id == mf.IDInPortOXM:
		return true
	case id >= mf.IDTunID && id <= mf.IDTunGbpFlags && id != mf.IDTunTTL && id != mf.IDTunTos:
		return true
	case id >= mf.IDTunMetadata0 && id < mf.IDTunMetadata0+64:
		return true
	case id >= mf.IDReg0 && id < mf.IDXXReg0+mf.NumRegs/4:
		return true
	}
	return false
}

func checkPipelineOnly(m *mf.Match) error {
	fs := mf.Std.Fields()
	for i := range fs {
		f := &fs[i]
		if !isPipelineField(f.ID) && !m.IsWild(f) {
			return errorf(OFPBRC_PIPELINE_FIELDS_ONLY, "packet-out match sets %s, which is not a pipeline field", f.Name)
		}
	}
	return nil
}

// decodeProps decodes an NXT_PACKET_IN2 or NXT_RESUME body. strict (for
// NXT_RESUME, which the switch receives) rejects unknown properties and
// match fields and checks match prerequisites, as Open vSwitch does.
func (pin *PacketIn) decodeProps(r *reader, strict bool) error {
	pin.BufferID, pin.Cookie = BufferNone, ^uint64(0)
	var fullLen uint32
	havePacket := false
	it := newOfpropIter(r.take(r.len()), 0xffff, rawTable[RawNXT_PACKET_IN2].name)
	for it.next() {
		var err error
		switch it.Type {
		case nxpintPacket:
			pin.Data, havePacket = append([]byte(nil), it.Value...), len(it.Value) > 0
		case nxpintFullLen:
			fullLen, err = it.u32()
		case nxpintBufferID:
			pin.BufferID, err = it.u32()
		case nxpintTableID:
			pin.TableID, err = it.u8()
		case nxpintCookie:
			pin.Cookie, err = it.u64()
		case nxpintReason:
			pin.Reason, err = it.u8()
		case nxpintMetadata:
			err = DecodeNXM(it.Value, strict, &pin.Match, nil)
		case nxpintUserdata:
			pin.Userdata = append([]byte(nil), it.Value...)
		case nxpintContinuation:
			var c []byte
			if c, err = it.nested(); err == nil {
				pin.Continuation = append([]byte(nil), c...)
			}
		default:
			if strict {
				err = it.unknown()
			}
		}
		if err != nil {
			return err
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	switch {
	case !havePacket:
		return errorf(OFPBRC_BAD_LEN, "packet-in2 lacks a packet")
	case fullLen == 0:
		pin.TotalLen = uint16(len(pin.Data))
	case fullLen < uint32(len(pin.Data)):
		return errorf(OFPBRC_BAD_LEN, "packet-in2 full length %d is less than its %d packet bytes", fullLen, len(pin.Data))
	case fullLen > 0xffff:
		pin.TotalLen = 0xffff
	default:
		pin.TotalLen = uint16(fullLen)
	}
	return nil
}

// appendProps appends the NXT_PACKET_IN2 / NXT_RESUME properties in Open
// vSwitch's order. A resume always carries a continuation property, a
// packet-in2 only a non-empty one.
func (pin *PacketIn) appendProps(b []byte, v uint8, resume bool) []byte {
	b = ofpropAppend(b, nxpintPacket, pin.Data)
	if int(pin.TotalLen) != len(pin.Data) {
		b = ofpropAppendU32(b, nxpintFullLen, uint32(pin.TotalLen))
	}
	if pin.BufferID != BufferNone {
		b = ofpropAppendU32(b, nxpintBufferID, pin.BufferID)
	}
	b = ofpropAppendU8(b, nxpintTableID, pin.TableID)
	if pin.Cookie != ^uint64(0) {
		b = ofpropAppendU64(b, nxpintCookie, pin.Cookie)
	}
	b = ofpropAppendU8(b, nxpintReason, PacketInReasonFor(pin.Reason, v))
	b, start := ofpropStart(b, nxpintMetadata)
	b = AppendNXM(b, v, &pin.Match, 0, 0)
	b = ofpropEnd(b, start)
	if resume || len(pin.Continuation) > 0 {
		b = ofpropAppendNested(b, nxpintContinuation, pin.Continuation)
	}
	if len(pin.Userdata) > 0 {
		b = ofpropAppend(b, nxpintUserdata, pin.Userdata)
	}
	return b
}

// RawFor returns the raw type for the packet-in's format in version v.
func (pin *PacketIn) RawFor(v uint8) (Raw, error) {
	switch pin.Format {
	case PacketInNXT:
		return RawNXT_PACKET_IN, nil
	case PacketIn2:
		return RawNXT_PACKET_IN2, nil
	case PacketInStandard:
		return versionRange(v, RawOFPT10_PACKET_IN, RawOFPT11_PACKET_IN, RawOFPT12_PACKET_IN, RawOFPT13_PACKET_IN)
	}
	return 0, errorf(OFPBRC_EPERM, "packet-in format %d", pin.Format)
}

func (pin *PacketIn) appendBody(b []byte, v uint8) ([]byte, error) {
	raw, err := pin.RawFor(v)
	if err != nil {
		return b, err
	}
	inPort := uint16(pin.Match.Flow.InPort)
	reason := PacketInReasonFor(pin.Reason, v)
	switch raw {
	case RawNXT_PACKET_IN2:
		return pin.appendProps(b, v, false), nil
	case RawOFPT10_PACKET_IN:
		b = binary.BigEndian.AppendUint32(b, pin.BufferID)
		b = binary.BigEndian.AppendUint16(b, pin.TotalLen)
		b = binary.BigEndian.AppendUint16(b, inPort)
		b = append(b, reason, 0)
	case RawOFPT11_PACKET_IN:
		b = binary.BigEndian.AppendUint32(b, pin.BufferID)
		b = binary.BigEndian.AppendUint32(b, PortToOF11(inPort))
		b = binary.BigEndian.AppendUint32(b, PortToOF11(inPort))
		b = binary.BigEndian.AppendUint16(b, pin.TotalLen)
		b = append(b, reason, pin.TableID)
	case RawNXT_PACKET_IN:
		b = binary.BigEndian.AppendUint32(b, pin.BufferID)
		b = binary.BigEndian.AppendUint16(b, pin.TotalLen)
		b = append(b, reason, pin.TableID)
		b = binary.BigEndian.AppendUint64(b, pin.Cookie)
		lenAt := len(b)
		b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
		start := len(b)
		b = AppendNXM(b, 0, &pin.Match, 0, 0)
		n := len(b) - start
		binary.BigEndian.PutUint16(b[lenAt:], uint16(n))
		b = appendZeros(b, pad8(n)-n+2)
	default:
		b = binary.BigEndian.AppendUint32(b, pin.BufferID)
		b = binary.BigEndian.AppendUint16(b, pin.TotalLen)
		b = append(b, reason, pin.TableID)
		if raw == RawOFPT13_PACKET_IN {
			b = binary.BigEndian.AppendUint64(b, pin.Cookie)
		}
		b = AppendOXMMatch(b, v, &pin.Match)
		b = append(b, 0, 0)
	}
	return append(b, pin.Data...), nil
}

// RawFor returns RawNXT_RESUME.
func (*Resume) RawFor(uint8) (Raw, error) { return RawNXT_RESUME, nil }

func (rs *Resume) appendBody(b []byte, v uint8) ([]byte, error) {
	return rs.appendProps(b, v, true), nil
}

// PacketOut is OFPT_PACKET_OUT in its OpenFlow 1.0, 1.1–1.4 and 1.5
// (match-based) layouts. InPort is in 32-bit form (OFPP_CONTROLLER is
// 0xfffffffd) and is authoritative when encoding; Match carries the
// OpenFlow 1.5 pipeline metadata (decoding any version sets its in_port).
// Actions is the raw action list (see DecodeActions). Data is the packet;
// Open vSwitch ignores it when BufferID is not OFP_NO_BUFFER.
type PacketOut struct {
	BufferID uint32
	InPort   uint32
	Match    mf.Match
	Actions  []byte
	Data     []byte
}

func decodePacketOut(r *reader, v uint8, raw Raw) (Message, error) {
	po := &PacketOut{BufferID: r.u32()}
	var n int
	switch raw {
	case RawOFPT10_PACKET_OUT:
		setInPort(&po.Match, r.u16())
		n = int(r.u16())
	case RawOFPT11_PACKET_OUT:
		in := r.u32()
		n = int(r.u16())
		r.skip(6)
		if r.Err() != nil {
			return nil, r.Err()
		}
		p, err := PortFromOF11(in)
		if err != nil {
			return nil, err
		}
		setInPort(&po.Match, p)
	default:
		n = int(r.u16())
		r.skip(2)
		if r.Err() != nil {
			return nil, r.Err()
		}
		used, err := decodeOXMMatchLoose(r.b[r.off:], &po.Match, true)
		if err != nil {
			return nil, err
		}
		r.skip(used)
		if po.Match.Mask.InPort == 0 {
			return nil, errorf(OFPBRC_BAD_PORT, "packet-out match lacks in_port")
		}
	}
	if r.Err() != nil {
		return nil, r.Err()
	}
	if n%8 != 0 || n > r.len() {
		return nil, errorf(OFPBRC_BAD_LEN, "packet-out actions length %d (multiple of 8 required) with %d bytes left", n, r.len())
	}
	if n > 0 {
		po.Actions = append([]byte(nil), r.take(n)...)
	}
	in := uint16(po.Match.Flow.InPort)
	if in >= OFPPMax && in != OFPPLocal && in != OFPPNone && in != OFPPController {
		return nil, errorf(OFPBRC_BAD_PORT, "packet-out input port %#x", in)
	}
	po.InPort = PortToOF11(in)
	po.Data = r.rest()
	return po, nil
}

// RawFor returns the packet-out layout for version v.
func (*PacketOut) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPT10_PACKET_OUT, RawOFPT11_PACKET_OUT, RawOFPT15_PACKET_OUT)
}

func (po *PacketOut) appendBody(b []byte, v uint8) ([]byte, error) {
	in, err := PortFromOF11(po.InPort)
	if err != nil {
		return b, err
	}
	if len(po.Actions) > 0xffff {
		return b, errorf(OFPBRC_BAD_LEN, "packet-out actions of %d bytes", len(po.Actions))
	}
	b = binary.BigEndian.AppendUint32(b, po.BufferID)
	switch raw, _ := po.RawFor(v); raw {
	case RawOFPT10_PACKET_OUT:
		b = binary.BigEndian.AppendUint16(b, in)
		b = binary.BigEndian.AppendUint16(b, uint16(len(po.Actions)))
	case RawOFPT11_PACKET_OUT:
		b = binary.BigEndian.AppendUint32(b, po.InPort)
		b = binary.BigEndian.AppendUint16(b, uint16(len(po.Actions)))
		b = append(b, 0, 0, 0, 0, 0, 0)
	default:
		b = binary.BigEndian.AppendUint16(b, uint16(len(po.Actions)))
		b = append(b, 0, 0)
		m := po.Match
		setInPort(&m, in)
		b = AppendOXMMatch(b, v, &m)
	}
	b = append(b, po.Actions...)
	return append(b, po.Data...), nil
}
