package ofp

import "encoding/binary"

// reader is a sticky-error cursor over a message body: after the first
// short read every getter returns zero and Err reports the failure, so a
// decoder reads all fields and checks once, and never indexes past the
// end. The error is OFPBRC_BAD_LEN unless set otherwise.
type reader struct {
	b   []byte
	off int
	err error
	// what names the structure being read, for the error's context.
	what string
	// statsFlags is the multipart header's flags (OFPSF_*), 0 for other
	// messages.
	statsFlags uint16
	// xid is the message's transaction ID, for decoders that check an
	// embedded message against it (bundle add).
	xid uint32
	// scratch, if not nil, lends decoders bodies to reuse (DecodeWith).
	scratch *Scratch
}

func newReader(b []byte, what string) *reader { return &reader{b: b, what: what} }

func (r *reader) fail(n int) {
	if r.err == nil {
		r.err = errorf(OFPBRC_BAD_LEN, "%s: need %d bytes at offset %d, have %d", r.what, n, r.off, len(r.b)-r.off)
	}
}

// take returns the next n bytes, or nil after a failure.
func (r *reader) take(n int) []byte {
	if r.err != nil || n < 0 || len(r.b)-r.off < n {
		r.fail(n)
		return nil
	}
	p := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return p
}

func (r *reader) u8() uint8 {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if p := r.take(2); p != nil {
		return binary.BigEndian.Uint16(p)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if p := r.take(4); p != nil {
		return binary.BigEndian.Uint32(p)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if p := r.take(8); p != nil {
		return binary.BigEndian.Uint64(p)
	}
	return 0
}

func (r *reader) skip(n int) { r.take(n) }

// rest returns a copy of the unread bytes (nil if none), so decoded
// messages never alias the caller's buffer.
func (r *reader) rest() []byte {
	if r.err != nil || r.off >= len(r.b) {
		r.off = len(r.b)
		return nil
	}
	p := append([]byte(nil), r.b[r.off:]...)
	r.off = len(r.b)
	return p
}

func (r *reader) len() int { return len(r.b) - r.off }

func (r *reader) Err() error { return r.err }

// tlvReader iterates type-length-value records (hello elements,
// properties): 16-bit type, 16-bit length including the 4-byte header,
// padded to align. Next returns false at the end or on error; Err tells.
type tlvReader struct {
	r     reader
	align int
	Type  uint16
	Value []byte // aliases the input
}

func newTLVReader(b []byte, align int, what string) *tlvReader {
	return &tlvReader{r: reader{b: b, what: what}, align: align}
}

func (t *tlvReader) Next() bool {
	if t.r.err != nil || t.r.len() == 0 {
		return false
	}
	typ, n := t.r.u16(), int(t.r.u16())
	if t.r.err != nil {
		return false
	}
	if n < 4 {
		t.r.err = errorf(OFPBRC_BAD_LEN, "%s: record length %d", t.r.what, n)
		return false
	}
	v := t.r.take(n - 4)
	if v == nil {
		return false
	}
	if pad := (n+t.align-1)/t.align*t.align - n; pad > 0 {
		// The last record's padding may be missing, as Open vSwitch allows.
		if t.r.len() < pad {
			t.r.off = len(t.r.b)
		} else {
			t.r.skip(pad)
		}
	}
	t.Type, t.Value = typ, v
	return true
}

func (t *tlvReader) Err() error { return t.r.err }

func pad8(n int) int { return (n + 7) / 8 * 8 }

func appendZeros(b []byte, n int) []byte {
	for ; n > 0; n-- {
		b = append(b, 0)
	}
	return b
}
