package ofp

import (
	"encoding/binary"
	"fmt"
)

// Message is a decoded message body, independent of wire version.
type Message interface {
	// RawFor returns the raw type that encodes the message in version v.
	RawFor(v uint8) (Raw, error)
	// appendBody appends the body that follows the raw type's headers.
	appendBody(b []byte, v uint8) ([]byte, error)
}

// Msg is one decoded message with its header fields.
type Msg struct {
	Version uint8
	XID     uint32
	Raw     Raw
	Body    Message
}

type decodeFunc func(r *reader, v uint8, raw Raw) (Message, error)

// decoders maps a raw type to its body decoder; raw types without one
// decode to *Unknown. Read-only after initialisation.
var decoders = map[Raw]decodeFunc{
	RawOFPT_HELLO:              decodeHello,
	RawOFPT_ERROR:              decodeErrorMsg,
	RawOFPT_ECHO_REQUEST:       func(r *reader, _ uint8, _ Raw) (Message, error) { return &EchoRequest{Data: r.rest()}, nil },
	RawOFPT_ECHO_REPLY:         func(r *reader, _ uint8, _ Raw) (Message, error) { return &EchoReply{Data: r.rest()}, nil },
	RawOFPT_FEATURES_REQUEST:   func(*reader, uint8, Raw) (Message, error) { return &FeaturesRequest{}, nil },
	RawOFPT10_FEATURES_REPLY:   decodeFeaturesReply,
	RawOFPT11_FEATURES_REPLY:   decodeFeaturesReply,
	RawOFPT13_FEATURES_REPLY:   decodeFeaturesReply,
	RawOFPT_GET_CONFIG_REQUEST: func(*reader, uint8, Raw) (Message, error) { return &GetConfigRequest{}, nil },
	RawOFPT_GET_CONFIG_REPLY:   decodeSwitchConfig,
	RawOFPT_SET_CONFIG:         decodeSwitchConfig,
	RawOFPT10_BARRIER_REQUEST:  func(*reader, uint8, Raw) (Message, error) { return &BarrierRequest{}, nil },
	RawOFPT11_BARRIER_REQUEST:  func(*reader, uint8, Raw) (Message, error) { return &BarrierRequest{}, nil },
	RawOFPT10_BARRIER_REPLY:    func(*reader, uint8, Raw) (Message, error) { return &BarrierReply{}, nil },
	RawOFPT11_BARRIER_REPLY:    func(*reader, uint8, Raw) (Message, error) { return &BarrierReply{}, nil },
	RawOFPT10_FLOW_MOD:         decodeFlowMod,
	RawOFPT11_FLOW_MOD:         decodeFlowMod,
	RawNXT_FLOW_MOD:            decodeFlowMod,
}

// Decode decodes exactly one message. It checks the length against the
// raw table before reading any body field and returns an *Error (with
// OFPBRC_BAD_LEN, OFPBRC_BAD_TYPE, OFPBMC_BAD_PREREQ, ...) on bad input.
// The result does not alias b.
func Decode(b []byte) (*Msg, error) { return DecodeWith(b, nil) }

// Scratch holds message bodies that DecodeWith reuses from one message to
// the next, so that a connection decoding its messages one at a time does
// not allocate the large ones (a flow_mod holds a whole match, over a
// kilobyte) per message. The zero value is ready; it must not be shared
// by concurrent decodes.
type Scratch struct {
	flowMod FlowMod
}

// DecodeWith is Decode, with a flow_mod's body taken from s (when s is not
// nil), also a flow_mod inside a bundle add: that body is valid until the
// next DecodeWith with the same s.
func DecodeWith(b []byte, s *Scratch) (*Msg, error) {
	raw, h, hl, err := identify(b)
	if err != nil {
		return nil, err
	}
	m := &Msg{Version: h.Version, XID: h.XID, Raw: raw}
	dec := decoders[raw]
	if dec == nil {
		m.Body = &Unknown{Type: raw, Data: append([]byte(nil), b[ofpHeaderLen:]...)}
		return m, nil
	}
	r := newReader(b[hl:], rawTable[raw].name)
	r.xid = h.XID
	r.statsFlags = statsHeaderFlags(b, raw)
	r.scratch = s
	body, err := dec(r, h.Version, raw)
	if err == nil {
		err = r.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", rawTable[raw].name, err)
	}
	m.Body = body
	return m, nil
}

// Encode appends message body m, framed for version v with transaction ID
// xid, to dst.
func Encode(dst []byte, v uint8, xid uint32, m Message) ([]byte, error) {
	raw, err := m.RawFor(v)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	if u, ok := m.(*Unknown); ok {
		dst = append(dst, v, 0, 0, 0)
		dst = binary.BigEndian.AppendUint32(dst, xid)
		ri := &rawTable[u.Type]
		switch ri.kind {
		case kindOFPT:
			dst[start+1] = uint8(ri.number)
		case kindNXT, kindONFT:
			dst[start+1] = ofptVendor
		default:
			req, rep := statsTypes(v)
			dst[start+1] = req
			if ri.reply {
				dst[start+1] = rep
			}
		}
	} else {
		dst = appendHeaders(dst, raw, v, xid, multipartFlags(m))
	}
	if dst, err = m.appendBody(dst, v); err != nil {
		return dst[:start], err
	}
	n := len(dst) - start
	if n > maxMessageLen {
		return dst[:start], errorf(OFPBRC_BAD_LEN, "%s of %d bytes exceeds 65535", rawTable[raw].name, n)
	}
	binary.BigEndian.PutUint16(dst[start+2:], uint16(n))
	return dst, nil
}

// EncodeMsg is Encode for a decoded Msg.
func EncodeMsg(dst []byte, m *Msg) ([]byte, error) { return Encode(dst, m.Version, m.XID, m.Body) }

func versionRange(v uint8, raws ...Raw) (Raw, error) {
	for _, r := range raws {
		ri := &rawTable[r]
		if v >= ri.minVer && v <= ri.maxVer {
			return r, nil
		}
	}
	return 0, errorf(OFPBRC_BAD_VERSION, "%s cannot be encoded in version %#x", rawTable[raws[0]].name, v)
}

// Unknown is a recognised message whose body gvs does not decode yet. Data
// is everything after the 8-byte ofp_header (stats and vendor headers
// included), so it re-encodes byte for byte.
type Unknown struct {
	Type Raw
	Data []byte
}

func (u *Unknown) RawFor(v uint8) (Raw, error) { return versionRange(v, u.Type) }
func (u *Unknown) appendBody(b []byte, _ uint8) ([]byte, error) {
	return append(b, u.Data...), nil
}
