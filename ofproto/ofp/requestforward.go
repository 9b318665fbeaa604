package ofp

// RequestForward is OFPT_REQUESTFORWARD (OpenFlow 1.4+), ONFT13's and
// NXT_REQUESTFORWARD (before 1.3): a group_mod or meter_mod one
// controller sent, forwarded to the others. Inner is that request in the
// receiver's version; XID is its transaction id.
type RequestForward struct {
	XID   uint32
	Inner Message
}

// Request forwarding reasons (OFPRFR_*), the bits of the async
// configuration's request-forward masks.
const (
	RequestForwardGroupMod = 0
	RequestForwardMeterMod = 1
)

func decodeRequestForward(r *reader, v uint8, _ Raw) (Message, error) {
	inner, err := Decode(r.rest())
	if err != nil {
		return nil, err
	}
	if inner.Version != v {
		return nil, errorf(OFPBRC_BAD_VERSION, "request forward of a version %#x message in version %#x", inner.Version, v)
	}
	switch inner.Body.(type) {
	case *GroupMod, *MeterMod:
	default:
		return nil, errorf(OFPBRC_BAD_TYPE, "request forward of %s", inner.Raw)
	}
	return &RequestForward{XID: inner.XID, Inner: inner.Body}, nil
}

func (*RequestForward) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawNXT_REQUESTFORWARD, RawONFT13_REQUESTFORWARD, RawOFPT14_REQUESTFORWARD)
}

func (m *RequestForward) appendBody(b []byte, v uint8) ([]byte, error) {
	if m.Inner == nil {
		return b, errorf(OFPBRC_BAD_LEN, "request forward without a request")
	}
	return Encode(b, v, m.XID, m.Inner)
}

func init() {
	for _, r := range []Raw{RawNXT_REQUESTFORWARD, RawONFT13_REQUESTFORWARD, RawOFPT14_REQUESTFORWARD} {
		decoders[r] = decodeRequestForward
	}
}
