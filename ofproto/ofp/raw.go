package ofp

import (
	"encoding/binary"
	"fmt"
)

// Raw identifies a message's wire form, as Open vSwitch's enum ofpraw.
type Raw uint16

type rawKind uint8

const (
	kindOFPT  rawKind = iota // standard message
	kindOFPST                // standard stats/multipart message
	kindNXT                  // Nicira extension message
	kindNXST                 // Nicira extension stats message
	kindONFT                 // ONF extension message
	kindONFST                // ONF extension multipart message
)

type rawInfo struct {
	name     string
	kind     rawKind
	minVer   uint8
	maxVer   uint8
	number   int  // type, stats type or experimenter subtype
	reply    bool // stats/multipart reply
	minBody  int  // fixed body bytes after the headers
	multiple int  // variable part is a multiple of this (0: none allowed)
}

// Vendor (experimenter) IDs.
const (
	VendorNicira uint32 = 0x00002320
	VendorONF    uint32 = 0x4f4e4600
)

const (
	ofptVendor       = 4
	ofpt10StatsReq   = 16
	ofpt10StatsReply = 17
	ofpt11StatsReq   = 18
	ofpt11StatsReply = 19
	statsTypeVendor  = 0xffff
	ofpHeaderLen     = 8
	maxMessageLen    = 0xffff
)

// NumRaws bounds the raw message types (for per-type counters).
const NumRaws = numRaws

// String returns the Open vSwitch name of the raw type (without OFPRAW_).
func (r Raw) String() string {
	if r > 0 && r < numRaws {
		return rawTable[r].name
	}
	return fmt.Sprintf("Raw(%d)", uint16(r))
}

type rawKey struct {
	kind    rawKind
	version uint8
	number  int
	reply   bool
}

// rawIndex maps the identifying header fields to a raw type. Built once;
// read-only afterwards.
var rawIndex = func() map[rawKey]Raw {
	m := make(map[rawKey]Raw)
	for r := Raw(1); r < numRaws; r++ {
		ri := &rawTable[r]
		hi := ri.maxVer
		if hi > 6 {
			hi = 6 // "<all>" messages: indexed for known versions, see lookupRaw
		}
		for v := ri.minVer; v <= hi; v++ {
			k := rawKey{ri.kind, v, ri.number, ri.reply}
			if _, dup := m[k]; !dup {
				m[k] = r
			}
		}
	}
	return m
}()

func lookupRaw(kind rawKind, version uint8, number int, reply bool) (Raw, bool) {
	if r, ok := rawIndex[rawKey{kind, version, number, reply}]; ok {
		return r, true
	}
	if version > 6 && kind == kindOFPT {
		// Immutable messages (hello, error, echo) exist in every version.
		if r, ok := rawIndex[rawKey{kind, 6, number, reply}]; ok && rawTable[r].maxVer == 255 {
			return r, true
		}
	}
	return 0, false
}

// headersLen is the length of the ofp_header plus the stats and vendor
// headers that precede the body of a message of this kind.
func headersLen(kind rawKind, version uint8) int {
	switch kind {
	case kindNXT, kindONFT:
		return 16
	case kindOFPST:
		if version == 1 {
			return 12
		}
		return 16
	case kindNXST, kindONFST:
		return 24
	}
	return ofpHeaderLen
}

func statsTypes(version uint8) (req, reply uint8) {
	if version == 1 {
		return ofpt10StatsReq, ofpt10StatsReply
	}
	return ofpt11StatsReq, ofpt11StatsReply
}

// Header is the ofp_header common to every message.
type Header struct {
	Version uint8
	Type    uint8
	Length  uint16
	XID     uint32
}

// ParseHeader reads the ofp_header at the start of b.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < ofpHeaderLen {
		return Header{}, errorf(OFPBRC_BAD_LEN, "message of %d bytes is shorter than the OpenFlow header", len(b))
	}
	return Header{b[0], b[1], binary.BigEndian.Uint16(b[2:]), binary.BigEndian.Uint32(b[4:])}, nil
}

// identify finds the raw type of the message in b (exactly one message)
// and checks its length against the raw table. It returns the offset of
// the body.
func identify(b []byte) (Raw, Header, int, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return 0, h, 0, err
	}
	if int(h.Length) != len(b) || h.Length < ofpHeaderLen {
		return 0, h, 0, errorf(OFPBRC_BAD_LEN, "header length %d, message has %d bytes", h.Length, len(b))
	}
	v := h.Version
	var (
		raw  Raw
		ok   bool
		kind rawKind
	)
	sreq, srep := statsTypes(v)
	switch {
	case h.Type == ofptVendor:
		if len(b) < 16 {
			return 0, h, 0, errorf(OFPBRC_BAD_LEN, "vendor message of %d bytes", len(b))
		}
		vendor, sub := binary.BigEndian.Uint32(b[8:]), binary.BigEndian.Uint32(b[12:])
		switch vendor {
		case VendorNicira:
			kind = kindNXT
		case VendorONF:
			kind = kindONFT
		default:
			return 0, h, 0, errorf(OFPBRC_BAD_VENDOR, "vendor %#x", vendor)
		}
		if raw, ok = lookupRaw(kind, v, int(sub), false); !ok {
			return 0, h, 0, errorf(OFPBRC_BAD_SUBTYPE, "vendor %#x subtype %d in version %#x", vendor, sub, v)
		}
	case v >= 1 && v <= 6 && (h.Type == sreq || h.Type == srep):
		reply := h.Type == srep
		hl := headersLen(kindOFPST, v)
		if len(b) < hl {
			return 0, h, 0, errorf(OFPBRC_BAD_LEN, "stats message of %d bytes", len(b))
		}
		st := binary.BigEndian.Uint16(b[8:])
		if st != statsTypeVendor {
			kind = kindOFPST
			if raw, ok = lookupRaw(kind, v, int(st), reply); !ok {
				return 0, h, 0, errorf(OFPBRC_BAD_STAT, "stats type %d in version %#x", st, v)
			}
			break
		}
		if len(b) < 24 {
			return 0, h, 0, errorf(OFPBRC_BAD_LEN, "vendor stats message of %d bytes", len(b))
		}
		// OF1.0: vendor right after type and flags; OF1.1+: after the pad.
		off := 16
		if v == 1 {
			off = 12
		}
		vendor, sub := binary.BigEndian.Uint32(b[off:]), binary.BigEndian.Uint32(b[off+4:])
		switch vendor {
		case VendorNicira:
			kind = kindNXST
		case VendorONF:
			kind = kindONFST
		default:
			return 0, h, 0, errorf(OFPBRC_BAD_VENDOR, "stats vendor %#x", vendor)
		}
		if raw, ok = lookupRaw(kind, v, int(sub), reply); !ok {
			return 0, h, 0, errorf(OFPBRC_BAD_SUBTYPE, "stats vendor %#x subtype %d", vendor, sub)
		}
	default:
		kind = kindOFPT
		if raw, ok = lookupRaw(kind, v, int(h.Type), false); !ok {
			if v < 1 || v > 6 {
				return 0, h, 0, errorf(OFPBRC_BAD_VERSION, "version %#x", v)
			}
			return 0, h, 0, errorf(OFPBRC_BAD_TYPE, "type %d in version %#x", h.Type, v)
		}
	}
	ri := &rawTable[raw]
	hl := headersLen(kind, v)
	min := hl + ri.minBody
	n := len(b)
	if n < min || (ri.multiple == 0 && n != min) || (ri.multiple > 0 && (n-min)%ri.multiple != 0) {
		return 0, h, 0, errorf(OFPBRC_BAD_LEN, "%s of %d bytes (minimum %d, multiple %d)", ri.name, n, min, ri.multiple)
	}
	return raw, h, hl, nil
}

// appendHeaders appends the ofp_header and the stats/vendor headers of raw
// for version v; the length is fixed up by finish.
func appendHeaders(b []byte, raw Raw, v uint8, xid uint32, statsFlags uint16) []byte {
	ri := &rawTable[raw]
	typ := uint8(ri.number)
	sreq, srep := statsTypes(v)
	switch ri.kind {
	case kindNXT, kindONFT:
		typ = ofptVendor
	case kindOFPST, kindNXST, kindONFST:
		typ = sreq
		if ri.reply {
			typ = srep
		}
	}
	b = append(b, v, typ, 0, 0)
	b = binary.BigEndian.AppendUint32(b, xid)
	vendor := VendorNicira
	if ri.kind == kindONFT || ri.kind == kindONFST {
		vendor = VendorONF
	}
	switch ri.kind {
	case kindNXT, kindONFT:
		b = binary.BigEndian.AppendUint32(b, vendor)
		b = binary.BigEndian.AppendUint32(b, uint32(ri.number))
	case kindOFPST:
		b = binary.BigEndian.AppendUint16(b, uint16(ri.number))
		b = binary.BigEndian.AppendUint16(b, statsFlags)
		if v != 1 {
			b = append(b, 0, 0, 0, 0)
		}
	case kindNXST, kindONFST:
		b = binary.BigEndian.AppendUint16(b, statsTypeVendor)
		b = binary.BigEndian.AppendUint16(b, statsFlags)
		if v != 1 {
			b = append(b, 0, 0, 0, 0)
		}
		b = binary.BigEndian.AppendUint32(b, vendor)
		b = binary.BigEndian.AppendUint32(b, uint32(ri.number))
		if v == 1 {
			b = append(b, 0, 0, 0, 0)
		}
	}
	return b
}
