package mf

import (
	"encoding/binary"
	"unsafe"
)

type locKind uint8

const (
	locInt     locKind = iota // integer bit-field in a host-order word
	locBytes                  // byte array in network order
	locRegs                   // consecutive 32-bit registers, first most significant
	locTunMeta                // tun_metadata, placed by a TunMap
)

type conv uint8

const (
	convNone   conv = iota
	convPort11      // 32-bit OpenFlow 1.1+ port on the wire, 16-bit stored
)

// loc says where a field's bits live in a Flow.
type loc struct {
	kind    locKind
	size    uint8   // locInt: storage bytes; locBytes: length; locRegs: count
	shift   uint8   // locInt: bit position of the field in the word
	tunIdx  uint8   // locTunMeta: N of tun_metadataN
	conv    conv    // wire conversion
	off     uintptr // byte offset in Flow
	mask    uint64  // locInt: field bits, after shifting right
	implied uint64  // locInt: word bits set in value and mask whenever the field is matched or set
	// own: a maskable field alone in its storage word keeps its mask
	// unclipped, as Open vSwitch's wildcards do (ct_state matched exactly
	// has mask 0x000000ff on the wire, tcp_flags exact 0xffff).
	own bool
	// fullIsExact: a mask covering all field bits is an exact match
	// (ip_frag, vlan_vid), as Open vSwitch encodes them.
	fullIsExact bool
}

func (l *loc) ptr(fl *Flow) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(fl), l.off) }

func (l *loc) load(fl *Flow) uint64 {
	p := l.ptr(fl)
	switch l.size {
	case 1:
		return uint64(*(*uint8)(p))
	case 2:
		return uint64(*(*uint16)(p))
	case 4:
		return uint64(*(*uint32)(p))
	default:
		return *(*uint64)(p)
	}
}

func (l *loc) store(fl *Flow, w uint64) {
	p := l.ptr(fl)
	switch l.size {
	case 1:
		*(*uint8)(p) = uint8(w)
	case 2:
		*(*uint16)(p) = uint16(w)
	case 4:
		*(*uint32)(p) = uint32(w)
	default:
		*(*uint64)(p) = w
	}
}

func (l *loc) bytes(fl *Flow) []byte {
	return unsafe.Slice((*byte)(l.ptr(fl)), int(l.size))
}

func (l *loc) regs(fl *Flow) []uint32 {
	return unsafe.Slice((*uint32)(l.ptr(fl)), int(l.size))
}

// putUint writes the low len(dst) bytes of v to dst in network order.
func putUint(dst []byte, v uint64) {
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = byte(v)
		v >>= 8
	}
}

// getUint reads src as a network-order unsigned integer (at most 8 bytes).
func getUint(src []byte) uint64 {
	var v uint64
	for _, b := range src {
		v = v<<8 | uint64(b)
	}
	return v
}

func port11ToWire(p uint64) uint64 {
	if p >= 0xff00 {
		return p + 0xffff0000
	}
	return p
}

func port11FromWire(v uint64) (uint64, bool) {
	switch {
	case v >= 0xffffff00:
		return v - 0xffff0000, true
	case v < 0xff00:
		return v, true
	}
	return 0, false
}

// Get writes the field's value in fl to dst, which must be f.Bytes long.
// It is meant for fixed-width fields; tun_metadata needs a TunMap (see
// Match.Get).
func (f *Field) Get(fl *Flow, dst []byte) {
	l := &f.loc
	switch l.kind {
	case locInt:
		v := l.load(fl) >> l.shift & l.mask
		if l.conv == convPort11 {
			v = port11ToWire(v)
		}
		putUint(dst, v)
	case locBytes:
		copy(dst, l.bytes(fl))
	case locRegs:
		for i, r := range l.regs(fl) {
			binary.BigEndian.PutUint32(dst[4*i:], r)
		}
	}
}

// Uint returns the value of a field of at most 8 bytes as an integer.
func (f *Field) Uint(fl *Flow) uint64 {
	var b [8]byte
	if f.Bytes > 8 || f.loc.kind == locTunMeta {
		return 0
	}
	f.Get(fl, b[8-f.Bytes:])
	return getUint(b[8-f.Bytes:])
}

// Set stores value v (network order, f.Bytes long) into fl, as set_field
// does. It fails with ErrBadValue if v has bits outside the field.
func (f *Field) Set(fl *Flow, v []byte) error {
	if f.loc.kind == locTunMeta {
		return ErrBadLength
	}
	if len(v) != f.Bytes {
		return ErrBadLength
	}
	return f.set(fl, nil, v, nil)
}

// set stores value and, if mask is not nil, the mask. With mask nil the
// value is exact. Bits of the value outside the mask are cleared.
func (f *Field) set(fl, mfl *Flow, v, m []byte) error {
	l := &f.loc
	switch l.kind {
	case locInt:
		x := getUint(v)
		if l.conv == convPort11 {
			var ok bool
			if x, ok = port11FromWire(x); !ok {
				return ErrBadValue
			}
		}
		if x&^l.mask != 0 {
			return ErrBadValue
		}
		mx := l.mask
		fieldBits := l.mask << l.shift
		if l.own {
			mx = ^uint64(0) >> (64 - 8*uint(l.size))
			fieldBits = mx
		}
		if m != nil {
			switch {
			case l.conv == convPort11:
				if !allOnes(m) {
					mx = 0
				}
			case l.own:
				mx &= getUint(m)
			default:
				mx = getUint(m) & l.mask
			}
		}
		x &= mx
		w := l.load(fl)&^fieldBits | x<<l.shift
		if mfl != nil {
			mw := l.load(mfl)&^fieldBits | mx<<l.shift
			if mx != 0 {
				w |= l.implied
				mw |= l.implied
			}
			l.store(mfl, mw)
		} else {
			w |= l.implied
		}
		l.store(fl, w)
	case locBytes:
		dst := l.bytes(fl)
		copy(dst, v)
		if mfl != nil {
			md := l.bytes(mfl)
			if m == nil {
				for i := range md {
					md[i] = 0xff
				}
			} else {
				copy(md, m)
				for i := range dst {
					dst[i] &= md[i]
				}
			}
		}
	case locRegs:
		rs := l.regs(fl)
		var ms []uint32
		if mfl != nil {
			ms = l.regs(mfl)
		}
		for i := range rs {
			r := binary.BigEndian.Uint32(v[4*i:])
			mr := ^uint32(0)
			if m != nil {
				mr = binary.BigEndian.Uint32(m[4*i:])
			}
			rs[i] = r & mr
			if ms != nil {
				ms[i] = mr
			}
		}
	}
	return nil
}

func allOnes(b []byte) bool {
	for _, x := range b {
		if x != 0xff {
			return false
		}
	}
	return true
}

func allZeros(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// MaskValid reports whether mask (network order) is acceptable for the
// field: anything for a maskable field, all-zeros or all-ones otherwise
// (Open vSwitch's mf_is_mask_valid).
func (f *Field) MaskValid(mask []byte) bool {
	return f.Maskable || allZeros(mask) || allOnes(mask)
}

// SetMasked matches the field in m against value under mask (both network
// order; mask nil or all-ones means exact). For tun_metadata, the value's
// length chooses the mapped length on first use.
func (m *Match) SetMasked(f *Field, value, mask []byte) error {
	if f.loc.kind == locTunMeta {
		return m.setTun(f, value, mask)
	}
	if mask != nil && allOnes(mask) {
		mask = nil
	}
	if len(value) != f.Bytes || (mask != nil && len(mask) != f.Bytes) {
		return ErrBadLength
	}
	if mask != nil && !f.Maskable && !allZeros(mask) {
		return ErrBadMask
	}
	return f.set(&m.Flow, &m.Mask, value, mask)
}

// setTun places tun_metadata as Open vSwitch's match-local allocation
// does: the length is that of the value (or mask, if masked) without
// leading zero bytes, and whether the match is masked is remembered, so
// the field re-encodes as it was given.
func (m *Match) setTun(f *Field, value, mask []byte) error {
	idx := f.loc.tunIdx
	t := &m.Tun.Opts[idx]
	if len(value) == 0 || (mask != nil && len(mask) != len(value)) {
		return ErrBadLength
	}
	masked := mask != nil && (len(mask) < f.Bytes || !allOnes(mask))
	n := significant(value)
	if masked {
		n = max(n, significant(mask))
	}
	n = max(n, 1)
	value = value[len(value)-n:]
	if !masked {
		mask = nil
	} else {
		mask = mask[len(mask)-n:]
	}
	if n > len(m.Flow.TunMeta) {
		return ErrTunFull
	}
	if t.Len == 0 {
		if int(m.Tun.Used)+n > len(m.Flow.TunMeta) {
			return ErrTunFull
		}
		t.Off, t.Len = m.Tun.Used, uint8(n)
		m.Tun.Used += uint8(n)
	} else if int(t.Len) != n {
		return ErrBadLength
	}
	dst := m.Flow.TunMeta[t.Off : t.Off+t.Len]
	md := m.Mask.TunMeta[t.Off : t.Off+t.Len]
	copy(dst, value)
	if mask == nil {
		for i := range md {
			md[i] = 0xff
		}
	} else {
		copy(md, mask)
		for i := range dst {
			dst[i] &= md[i]
		}
	}
	t.Masked = masked
	m.Flow.TunMetaPresent |= 1 << idx
	m.Mask.TunMetaPresent |= 1 << idx
	return nil
}

// Width returns the number of value bytes the field has in m: f.Bytes,
// or for tun_metadata the mapped length (0 when unmapped).
func (m *Match) Width(f *Field) int {
	if f.loc.kind == locTunMeta {
		return int(m.Tun.Opts[f.loc.tunIdx].Len)
	}
	return f.Bytes
}

// Get writes the field's value and mask in m into val and mask, each
// m.Width(f) bytes long. A mask covering every field bit is returned as
// all ones, so callers can tell exact from masked matches.
func (m *Match) Get(f *Field, val, mask []byte) {
	l := &f.loc
	switch l.kind {
	case locTunMeta:
		t := m.Tun.Opts[l.tunIdx]
		copy(val, m.Flow.TunMeta[t.Off:t.Off+t.Len])
		copy(mask, m.Mask.TunMeta[t.Off:t.Off+t.Len])
	case locInt:
		f.Get(&m.Flow, val)
		mx := l.load(&m.Mask) >> l.shift & l.mask
		if l.own {
			mx = l.load(&m.Mask)
		}
		switch {
		case !f.Maskable && mx != 0, l.fullIsExact && mx == l.mask, !l.own && mx == l.mask:
			for i := range mask {
				mask[i] = 0xff
			}
		case l.conv == convPort11:
			putUint(mask, 0)
		default:
			putUint(mask, mx)
		}
	default:
		f.Get(&m.Flow, val)
		f.Get(&m.Mask, mask)
	}
}

// IsWild reports whether m matches no bit of f.
func (m *Match) IsWild(f *Field) bool {
	l := &f.loc
	switch l.kind {
	case locTunMeta:
		return m.Mask.TunMetaPresent&(1<<l.tunIdx) == 0
	case locInt:
		return l.load(&m.Mask)>>l.shift&l.mask == 0
	case locBytes:
		return allZeros(l.bytes(&m.Mask))
	default:
		for _, r := range l.regs(&m.Mask) {
			if r != 0 {
				return false
			}
		}
		return true
	}
}

// ValueValid reports whether v (network order) is a value the field can
// hold, as Open vSwitch's mf_is_value_valid: no bits outside the field
// and, for OpenFlow 1.1+ ports, a port that maps to a 16-bit port.
func (f *Field) ValueValid(v []byte) bool {
	l := &f.loc
	if l.kind != locInt {
		return true
	}
	x := getUint(v)
	if l.conv == convPort11 {
		var ok bool
		if x, ok = port11FromWire(x); !ok {
			return false
		}
	}
	return x&^l.mask == 0
}

// significant returns the length of b without its leading zero bytes.
func significant(b []byte) int {
	for i, x := range b {
		if x != 0 {
			return len(b) - i
		}
	}
	return 0
}

// Truncate clears the bits of v (network order) that an integer field
// cannot hold, as Open vSwitch stores a parsed value into its narrower
// flow member (dl_vlan=4096 matches VID 0). It reports whether v changed;
// other kinds of field are left alone.
func (f *Field) Truncate(v []byte) bool {
	l := &f.loc
	if l.kind != locInt || l.conv != convNone || len(v) > 8 {
		return false
	}
	x := getUint(v)
	if x&^l.mask == 0 {
		return false
	}
	putUint(v, x&l.mask)
	return true
}
