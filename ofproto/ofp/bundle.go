package ofp

import "encoding/binary"

// BundleCtrl is OFPT14_BUNDLE_CONTROL, or in OpenFlow 1.3 the ONF
// extension ONFT13_BUNDLE_CONTROL (same body). Type is a Bundle*Request
// or *Reply constant and Flags BundleAtomic|BundleOrdered; neither is
// validated when decoding (Open vSwitch checks them when acting on the
// message). Properties are kept raw.
type BundleCtrl struct {
	BundleID   uint32
	Type       uint16
	Flags      uint16
	Properties []byte
}

// BundleAdd is OFPT14_BUNDLE_ADD_MESSAGE or ONFT13_BUNDLE_ADD_MESSAGE.
// Msg is the whole inner message, header included; Properties whatever
// follows it. Decoding checks the inner message as Open vSwitch does
// (version, length, xid equal to the bundle add's, a known and bundlable
// type: flow mod, group mod, port mod or packet-out) and fails with the
// OFPBFC_* error; then Inner is the decoded inner message, or nil with
// InnerErr set if its body does not decode (the switch reports that error
// when it processes the message, as Open vSwitch does).
//
// When encoding, Msg is sent as is; if Msg is empty Inner is encoded
// (with its own Version and XID, which must equal the bundle add's).
type BundleAdd struct {
	BundleID   uint32
	Flags      uint16
	Msg        []byte
	Inner      *Msg
	InnerErr   error
	Properties []byte
}

// bundlable lists the raw types Open vSwitch accepts inside a bundle
// (ofputil_is_bundlable).
var bundlable = map[Raw]bool{
	RawOFPT10_FLOW_MOD: true, RawOFPT11_FLOW_MOD: true, RawNXT_FLOW_MOD: true,
	RawNXT_GROUP_MOD: true, RawOFPT11_GROUP_MOD: true, RawOFPT15_GROUP_MOD: true,
	RawOFPT10_PORT_MOD: true, RawOFPT11_PORT_MOD: true, RawOFPT14_PORT_MOD: true,
	RawOFPT10_PACKET_OUT: true, RawOFPT11_PACKET_OUT: true, RawOFPT15_PACKET_OUT: true,
}

func init() {
	decoders[RawOFPT14_BUNDLE_CONTROL] = decodeBundleCtrl
	decoders[RawONFT13_BUNDLE_CONTROL] = decodeBundleCtrl
	decoders[RawOFPT14_BUNDLE_ADD_MESSAGE] = decodeBundleAdd
	decoders[RawONFT13_BUNDLE_ADD_MESSAGE] = decodeBundleAdd
}

func decodeBundleCtrl(r *reader, _ uint8, _ Raw) (Message, error) {
	return &BundleCtrl{BundleID: r.u32(), Type: r.u16(), Flags: r.u16(), Properties: r.rest()}, nil
}

func decodeBundleAdd(r *reader, v uint8, _ Raw) (Message, error) {
	ba := &BundleAdd{BundleID: r.u32()}
	r.skip(2)
	ba.Flags = r.u16()
	if r.Err() != nil {
		return nil, r.Err()
	}
	if r.len() < ofpHeaderLen {
		return nil, errorf(OFPBFC_MSG_BAD_LEN, "bundle add holds %d bytes, less than a header", r.len())
	}
	h, _ := ParseHeader(r.b[r.off:])
	if h.Version != v {
		return nil, errorf(OFPBFC_BAD_VERSION, "inner message version %#x in a version %#x bundle add", h.Version, v)
	}
	if int(h.Length) < ofpHeaderLen || int(h.Length) > r.len() {
		return nil, errorf(OFPBFC_MSG_BAD_LEN, "inner message length %d with %d bytes left", h.Length, r.len())
	}
	if h.XID != r.xid {
		return nil, errorf(OFPBFC_MSG_BAD_XID, "inner message xid %#x differs from the bundle add's %#x", h.XID, r.xid)
	}
	inner := r.take(int(h.Length))
	raw, _, _, err := identify(inner)
	if err != nil {
		return nil, &Error{Code: OFPBFC_MSG_UNSUP, Err: err}
	}
	if !bundlable[raw] {
		return nil, errorf(OFPBFC_MSG_UNSUP, "%s is not allowed in a bundle", raw)
	}
	ba.Msg = append([]byte(nil), inner...)
	ba.Inner, ba.InnerErr = DecodeWith(ba.Msg, r.scratch)
	ba.Properties = r.rest()
	return ba, nil
}

// RawFor returns the bundle control raw type for version v (OpenFlow 1.3
// uses the ONF extension).
func (*BundleCtrl) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawONFT13_BUNDLE_CONTROL, RawOFPT14_BUNDLE_CONTROL)
}

func (bc *BundleCtrl) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = binary.BigEndian.AppendUint32(b, bc.BundleID)
	b = binary.BigEndian.AppendUint16(b, bc.Type)
	b = binary.BigEndian.AppendUint16(b, bc.Flags)
	return append(b, bc.Properties...), nil
}

// RawFor returns the bundle add raw type for version v.
func (*BundleAdd) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawONFT13_BUNDLE_ADD_MESSAGE, RawOFPT14_BUNDLE_ADD_MESSAGE)
}

func (ba *BundleAdd) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = binary.BigEndian.AppendUint32(b, ba.BundleID)
	b = append(b, 0, 0)
	b = binary.BigEndian.AppendUint16(b, ba.Flags)
	switch {
	case len(ba.Msg) > 0:
		b = append(b, ba.Msg...)
	case ba.Inner != nil:
		var err error
		if b, err = EncodeMsg(b, ba.Inner); err != nil {
			return b, err
		}
	default:
		return b, errorf(OFPBFC_MSG_BAD_LEN, "bundle add without a message")
	}
	return append(b, ba.Properties...), nil
}
