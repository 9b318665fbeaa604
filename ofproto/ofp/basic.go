package ofp

import "encoding/binary"

// Hello element types.
const HelloElemVersionBitmap = 1

// HelloElem is one element of a hello message.
type HelloElem struct {
	Type uint16
	Data []byte // without the 4-byte element header and padding
}

// Hello is OFPT_HELLO. Elements is empty for a plain (8-byte) hello.
type Hello struct {
	Elements []HelloElem
}

// NewHello returns a hello advertising the given versions with a version
// bitmap element, as Open vSwitch sends when it supports more than one.
func NewHello(versions ...uint8) *Hello {
	var bm uint32
	for _, v := range versions {
		if v < 32 {
			bm |= 1 << v
		}
	}
	return &Hello{Elements: []HelloElem{{Type: HelloElemVersionBitmap, Data: binary.BigEndian.AppendUint32(nil, bm)}}}
}

// Versions returns the versions in the hello's version bitmap, or nil if
// it has none (then the header version alone counts).
func (h *Hello) Versions() []uint8 {
	var vs []uint8
	for _, e := range h.Elements {
		if e.Type != HelloElemVersionBitmap {
			continue
		}
		for i := 0; i+4 <= len(e.Data); i += 4 {
			w := binary.BigEndian.Uint32(e.Data[i:])
			for bit := 0; bit < 32; bit++ {
				if w&(1<<bit) != 0 {
					vs = append(vs, uint8(i/4*32+bit))
				}
			}
		}
	}
	return vs
}

func decodeHello(r *reader, _ uint8, _ Raw) (Message, error) {
	h := &Hello{}
	t := newTLVReader(r.rest(), 8, "hello element")
	for t.Next() {
		h.Elements = append(h.Elements, HelloElem{Type: t.Type, Data: t.Value})
	}
	// Open vSwitch ignores malformed trailing hello elements; so does gvs,
	// keeping the ones parsed so far.
	return h, nil
}

func (h *Hello) RawFor(v uint8) (Raw, error) { return RawOFPT_HELLO, nil }
func (h *Hello) appendBody(b []byte, _ uint8) ([]byte, error) {
	for _, e := range h.Elements {
		n := 4 + len(e.Data)
		b = binary.BigEndian.AppendUint16(b, e.Type)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
		b = append(b, e.Data...)
		b = appendZeros(b, pad8(n)-n)
	}
	return b, nil
}

// EchoRequest is OFPT_ECHO_REQUEST.
type EchoRequest struct{ Data []byte }

// EchoReply is OFPT_ECHO_REPLY.
type EchoReply struct{ Data []byte }

func (*EchoRequest) RawFor(uint8) (Raw, error) { return RawOFPT_ECHO_REQUEST, nil }
func (e *EchoRequest) appendBody(b []byte, _ uint8) ([]byte, error) {
	return append(b, e.Data...), nil
}
func (*EchoReply) RawFor(uint8) (Raw, error) { return RawOFPT_ECHO_REPLY, nil }
func (e *EchoReply) appendBody(b []byte, _ uint8) ([]byte, error) {
	return append(b, e.Data...), nil
}

// ErrorMsg is OFPT_ERROR as on the wire. For a Nicira vendor error in
// OF1.0/1.1 Type is 0xb0c2 and Code 0, and Vendor/ExpType/ExpCode hold
// the nx_vendor_error; for an OF1.2+ experimenter error Type is 0xffff,
// Code the experimenter type and Vendor the experimenter ID.
type ErrorMsg struct {
	Type, Code       uint16
	Vendor           uint32
	ExpType, ExpCode uint16
	Data             []byte // usually the start of the offending message
}

// NewErrorMsg builds the OFPT_ERROR that reports c in version v, with
// data (at most the first 64 bytes are customary; the caller chooses).
// An error with no encoding in v becomes NXBRC_UNENCODABLE_ERROR.
func NewErrorMsg(v uint8, c ErrCode, data []byte) *ErrorMsg {
	vendor, typ, code, ok := c.Encode(v)
	if !ok {
		vendor, typ, code, _ = NXBRC_UNENCODABLE_ERROR.Encode(v)
	}
	e := &ErrorMsg{Data: data}
	switch {
	case vendor == 0:
		e.Type, e.Code = typ, code
	case v <= 2:
		e.Type, e.Code = nxetVendor, nxvcVendorError
		e.Vendor, e.ExpType, e.ExpCode = vendor, typ, code
	default:
		e.Type, e.Code, e.Vendor = ofpetExperimenter, typ, vendor
	}
	return e
}

// ErrCode decodes the error's meaning in version v (0 if unknown).
func (e *ErrorMsg) ErrCode(v uint8) ErrCode {
	switch {
	case e.Type == nxetVendor && e.Code == nxvcVendorError:
		return DecodeErrCode(v, e.Vendor, e.ExpType, e.ExpCode)
	case e.Type == ofpetExperimenter && v >= 3:
		return DecodeErrCode(v, e.Vendor, e.Code, 0)
	}
	return DecodeErrCode(v, 0, e.Type, e.Code)
}

func decodeErrorMsg(r *reader, v uint8, _ Raw) (Message, error) {
	e := &ErrorMsg{Type: r.u16(), Code: r.u16()}
	switch {
	case e.Type == nxetVendor && e.Code == nxvcVendorError && r.len() >= 8:
		e.Vendor, e.ExpType, e.ExpCode = r.u32(), r.u16(), r.u16()
	case e.Type == ofpetExperimenter && v >= 3 && r.len() >= 4:
		e.Vendor = r.u32()
	}
	e.Data = r.rest()
	return e, nil
}

func (*ErrorMsg) RawFor(uint8) (Raw, error) { return RawOFPT_ERROR, nil }
func (e *ErrorMsg) appendBody(b []byte, v uint8) ([]byte, error) {
	b = binary.BigEndian.AppendUint16(b, e.Type)
	b = binary.BigEndian.AppendUint16(b, e.Code)
	switch {
	case e.Type == nxetVendor && e.Code == nxvcVendorError:
		b = binary.BigEndian.AppendUint32(b, e.Vendor)
		b = binary.BigEndian.AppendUint16(b, e.ExpType)
		b = binary.BigEndian.AppendUint16(b, e.ExpCode)
	case e.Type == ofpetExperimenter && v >= 3:
		b = binary.BigEndian.AppendUint32(b, e.Vendor)
	}
	return append(b, e.Data...), nil
}

// FeaturesRequest is OFPT_FEATURES_REQUEST.
type FeaturesRequest struct{}

func (*FeaturesRequest) RawFor(uint8) (Raw, error)                    { return RawOFPT_FEATURES_REQUEST, nil }
func (*FeaturesRequest) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }

// Port is an OpenFlow 1.0 ofp_phy_port or 1.1/1.2 ofp_port. PortNo is
// 16-bit in OF1.0 and 32-bit in OF1.1+, stored as on the wire.
type Port struct {
	PortNo                            uint32
	HWAddr                            [6]byte
	Name                              [16]byte
	Config, State                     uint32
	Curr, Advertised, Supported, Peer uint32
	CurrSpeed, MaxSpeed               uint32 // OF1.1+ only
}

// FeaturesReply is OFPT_FEATURES_REPLY. Ports are present in OF1.0–1.2
// only; AuxiliaryID in OF1.3+ only; Actions is OF1.0's supported-actions
// bitmap (reserved in later versions).
type FeaturesReply struct {
	DatapathID   uint64
	NBuffers     uint32
	NTables      uint8
	AuxiliaryID  uint8
	Capabilities uint32
	Actions      uint32
	Ports        []Port
}

func decodeFeaturesReply(r *reader, v uint8, _ Raw) (Message, error) {
	f := &FeaturesReply{DatapathID: r.u64(), NBuffers: r.u32(), NTables: r.u8()}
	if v >= 4 {
		f.AuxiliaryID = r.u8()
	} else {
		r.skip(1)
	}
	r.skip(2)
	f.Capabilities, f.Actions = r.u32(), r.u32()
	for r.Err() == nil && r.len() > 0 {
		var p Port
		if v == 1 {
			p.PortNo = uint32(r.u16())
			copy(p.HWAddr[:], r.take(6))
			copy(p.Name[:], r.take(16))
		} else {
			p.PortNo = r.u32()
			r.skip(4)
			copy(p.HWAddr[:], r.take(6))
			r.skip(2)
			copy(p.Name[:], r.take(16))
		}
		p.Config, p.State = r.u32(), r.u32()
		p.Curr, p.Advertised, p.Supported, p.Peer = r.u32(), r.u32(), r.u32(), r.u32()
		if v != 1 {
			p.CurrSpeed, p.MaxSpeed = r.u32(), r.u32()
		}
		f.Ports = append(f.Ports, p)
	}
	return f, nil
}

func (*FeaturesReply) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPT10_FEATURES_REPLY, RawOFPT11_FEATURES_REPLY, RawOFPT13_FEATURES_REPLY)
}

func (f *FeaturesReply) appendBody(b []byte, v uint8) ([]byte, error) {
	b = binary.BigEndian.AppendUint64(b, f.DatapathID)
	b = binary.BigEndian.AppendUint32(b, f.NBuffers)
	b = append(b, f.NTables, 0, 0, 0)
	if v >= 4 {
		b[len(b)-3] = f.AuxiliaryID
	}
	b = binary.BigEndian.AppendUint32(b, f.Capabilities)
	b = binary.BigEndian.AppendUint32(b, f.Actions)
	if v >= 4 && len(f.Ports) > 0 {
		return b, errorf(OFPBRC_BAD_VERSION, "features reply carries no ports in version %#x", v)
	}
	for _, p := range f.Ports {
		if v == 1 {
			b = binary.BigEndian.AppendUint16(b, uint16(p.PortNo))
			b = append(b, p.HWAddr[:]...)
			b = append(b, p.Name[:]...)
		} else {
			b = binary.BigEndian.AppendUint32(b, p.PortNo)
			b = append(b, 0, 0, 0, 0)
			b = append(b, p.HWAddr[:]...)
			b = append(b, 0, 0)
			b = append(b, p.Name[:]...)
		}
		for _, w := range []uint32{p.Config, p.State, p.Curr, p.Advertised, p.Supported, p.Peer} {
			b = binary.BigEndian.AppendUint32(b, w)
		}
		if v != 1 {
			b = binary.BigEndian.AppendUint32(b, p.CurrSpeed)
			b = binary.BigEndian.AppendUint32(b, p.MaxSpeed)
		}
	}
	return b, nil
}

// GetConfigRequest is OFPT_GET_CONFIG_REQUEST.
type GetConfigRequest struct{}

func (*GetConfigRequest) RawFor(uint8) (Raw, error)                    { return RawOFPT_GET_CONFIG_REQUEST, nil }
func (*GetConfigRequest) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }

// Switch config flags (frag handling).
const (
	FragNormal  = 0
	FragDrop    = 1
	FragReasm   = 2
	FragNXMatch = 3 // Nicira: match on fragments
)

// SwitchConfig is the body of OFPT_GET_CONFIG_REPLY and OFPT_SET_CONFIG.
type SwitchConfig struct {
	Flags       uint16
	MissSendLen uint16
}

// GetConfigReply is OFPT_GET_CONFIG_REPLY.
type GetConfigReply struct{ SwitchConfig }

// SetConfig is OFPT_SET_CONFIG.
type SetConfig struct{ SwitchConfig }

func decodeSwitchConfig(r *reader, _ uint8, raw Raw) (Message, error) {
	c := SwitchConfig{Flags: r.u16(), MissSendLen: r.u16()}
	if raw == RawOFPT_SET_CONFIG {
		return &SetConfig{c}, nil
	}
	return &GetConfigReply{c}, nil
}

func (c *SwitchConfig) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = binary.BigEndian.AppendUint16(b, c.Flags)
	return binary.BigEndian.AppendUint16(b, c.MissSendLen), nil
}
func (*GetConfigReply) RawFor(uint8) (Raw, error) { return RawOFPT_GET_CONFIG_REPLY, nil }
func (*SetConfig) RawFor(uint8) (Raw, error)      { return RawOFPT_SET_CONFIG, nil }

// BarrierRequest is OFPT_BARRIER_REQUEST.
type BarrierRequest struct{}

// BarrierReply is OFPT_BARRIER_REPLY.
type BarrierReply struct{}

func (*BarrierRequest) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPT10_BARRIER_REQUEST, RawOFPT11_BARRIER_REQUEST)
}
func (*BarrierRequest) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }
func (*BarrierReply) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawOFPT10_BARRIER_REPLY, RawOFPT11_BARRIER_REPLY)
}
func (*BarrierReply) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }
