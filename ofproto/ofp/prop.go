package ofp

import "encoding/binary"

// OpenFlow 1.4-style properties (ofp_prop_header: 16-bit type, 16-bit
// length including the header, padded to 8 bytes) as used by
// NXT_PACKET_IN2, NXT_RESUME, async config, bundles and NXT_CT_FLUSH.
// Unlike hello elements, every property must be followed by its padding,
// as Open vSwitch's ofpprop_pull requires.

// ofpropIter iterates the properties in b. Types at or above minExp are
// experimenter properties with a 12-byte header (experimenter ID and
// type after the standard header).
type ofpropIter struct {
	b      []byte
	off    int
	minExp int
	what   string
	err    error

	Type    uint16
	Exp     uint32 // experimenter properties only
	ExpType uint32
	Value   []byte // payload after the header, without padding; aliases b
}

func newOfpropIter(b []byte, minExp int, what string) *ofpropIter {
	return &ofpropIter{b: b, minExp: minExp, what: what}
}

func (it *ofpropIter) next() bool {
	if it.err != nil || it.off >= len(it.b) {
		return false
	}
	rem := it.b[it.off:]
	if len(rem) < 4 {
		it.err = errorf(OFPBPC_BAD_LEN, "%s: partial %d-byte property header at offset %d", it.what, len(rem), it.off)
		return false
	}
	typ, n := binary.BigEndian.Uint16(rem), int(binary.BigEndian.Uint16(rem[2:]))
	if n < 4 || pad8(n) > len(rem) {
		it.err = errorf(OFPBPC_BAD_LEN, "%s: property %d at offset %d has length %d (padded %d) with %d bytes left",
			it.what, typ, it.off, n, pad8(n), len(rem))
		return false
	}
	hl := 4
	it.Exp, it.ExpType = 0, 0
	if int(typ) >= it.minExp {
		if n < 12 {
			it.err = errorf(OFPBPC_BAD_LEN, "%s: experimenter property of length %d at offset %d", it.what, n, it.off)
			return false
		}
		it.Exp, it.ExpType = binary.BigEndian.Uint32(rem[4:]), binary.BigEndian.Uint32(rem[8:])
		if it.Exp == 0 {
			it.err = errorf(OFPBPC_BAD_EXPERIMENTER, "%s: experimenter property with experimenter 0 at offset %d", it.what, it.off)
			return false
		}
		hl = 12
	}
	it.Type, it.Value = typ, rem[hl:n:n]
	it.off += pad8(n)
	return true
}

// unknown is the error for a property the decoder does not know when it
// is strict (Open vSwitch's ofpprop_unknown).
func (it *ofpropIter) unknown() error {
	if int(it.Type) >= it.minExp {
		return errorf(OFPBPC_BAD_EXP_TYPE, "%s: unknown experimenter %#x property type %d", it.what, it.Exp, it.ExpType)
	}
	return errorf(OFPBPC_BAD_TYPE, "%s: unknown property type %d", it.what, it.Type)
}

func (it *ofpropIter) badLen(want string) error {
	return errorf(OFPBPC_BAD_LEN, "%s: property %d has %d payload bytes, want %s", it.what, it.Type, len(it.Value), want)
}

// u8 parses a property holding at least one byte.
func (it *ofpropIter) u8() (uint8, error) {
	if len(it.Value) < 1 {
		return 0, it.badLen("at least 1")
	}
	return it.Value[0], nil
}

// u16 parses a 16-bit property (any payload of at least two bytes).
func (it *ofpropIter) u16() (uint16, error) {
	if len(it.Value) < 2 {
		return 0, it.badLen("at least 2")
	}
	return binary.BigEndian.Uint16(it.Value), nil
}

// u32 parses a property holding exactly four bytes.
func (it *ofpropIter) u32() (uint32, error) {
	if len(it.Value) != 4 {
		return 0, it.badLen("4")
	}
	return binary.BigEndian.Uint32(it.Value), nil
}

// u64 parses a 64-bit property: four bytes of padding, then the value.
func (it *ofpropIter) u64() (uint64, error) {
	if len(it.Value) != 12 {
		return 0, it.badLen("12 (4 of padding and 8)")
	}
	return binary.BigEndian.Uint64(it.Value[4:]), nil
}

// nested returns the properties nested in this one, which start 8-byte
// aligned (after 4 bytes of padding).
func (it *ofpropIter) nested() ([]byte, error) {
	if len(it.Value) < 4 {
		return nil, it.badLen("at least 4")
	}
	return it.Value[4:], nil
}

func (it *ofpropIter) Err() error { return it.err }

// ofpropAppend appends a property with payload v, padded to 8 bytes.
func ofpropAppend(b []byte, typ uint16, v []byte) []byte {
	n := 4 + len(v)
	b = binary.BigEndian.AppendUint16(b, typ)
	b = binary.BigEndian.AppendUint16(b, uint16(n))
	b = append(b, v...)
	return appendZeros(b, pad8(n)-n)
}

func ofpropAppendU8(b []byte, typ uint16, v uint8) []byte {
	return ofpropAppend(b, typ, []byte{v})
}

// ofpropAppendU16 appends a 16-bit property with two bytes of padding
// counted in its length, as OpenFlow (and Open vSwitch) do.
func ofpropAppendU16(b []byte, typ uint16, v uint16) []byte {
	return ofpropAppend(b, typ, []byte{byte(v >> 8), byte(v), 0, 0})
}

func ofpropAppendU32(b []byte, typ uint16, v uint32) []byte {
	return ofpropAppend(b, typ, binary.BigEndian.AppendUint32(nil, v))
}

func ofpropAppendU64(b []byte, typ uint16, v uint64) []byte {
	b = binary.BigEndian.AppendUint16(b, typ)
	b = binary.BigEndian.AppendUint16(b, 16)
	b = append(b, 0, 0, 0, 0)
	return binary.BigEndian.AppendUint64(b, v)
}

// ofpropStart starts a property whose payload the caller appends; ofpropEnd
// sets its length and pads it.
func ofpropStart(b []byte, typ uint16) ([]byte, int) {
	start := len(b)
	b = binary.BigEndian.AppendUint16(b, typ)
	return append(b, 0, 4), start
}

func ofpropEnd(b []byte, start int) []byte {
	n := len(b) - start
	binary.BigEndian.PutUint16(b[start+2:], uint16(n))
	return appendZeros(b, pad8(n)-n)
}

// ofpropAppendNested appends a property holding nested properties, which
// start 8-byte aligned.
func ofpropAppendNested(b []byte, typ uint16, inner []byte) []byte {
	b, start := ofpropStart(b, typ)
	b = append(b, 0, 0, 0, 0)
	b = append(b, inner...)
	return ofpropEnd(b, start)
}
