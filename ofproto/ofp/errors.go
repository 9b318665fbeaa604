package ofp

import (
	"errors"
	"fmt"
)

// ErrCode is an OpenFlow error, as Open vSwitch's enum ofperr: one value
// per (error type, code) meaning, independent of wire version.
type ErrCode uint16

type errMap struct {
	vendor uint32 // 0 for a standard error, else the experimenter ID
	lo, hi uint8  // wire versions this encoding applies to
	typ    uint16
	code   uint16
}

type errInfo struct {
	name string
	maps []errMap
}

// Vendor error framing.
const (
	nxetVendor        = 0xb0c2 // OF1.0/1.1 ofp_error_msg.type for vendor errors
	nxvcVendorError   = 0      // ... and its code
	ofpetExperimenter = 0xffff // OF1.2+ experimenter error type
)

// String returns the Open vSwitch name of the error, e.g. "OFPBRC_BAD_LEN".
func (c ErrCode) String() string {
	if c > 0 && c < numErrCodes {
		return errTable[c].name
	}
	return fmt.Sprintf("ErrCode(%d)", uint16(c))
}

// Encode returns how the error is sent in wire version v: vendor is 0 for
// a standard (type, code); otherwise the error is an experimenter error of
// that vendor (in OF1.2+ only typ is meaningful). ok is false when the
// error has no encoding in v.
func (c ErrCode) Encode(v uint8) (vendor uint32, typ, code uint16, ok bool) {
	if c == 0 || c >= numErrCodes {
		return 0, 0, 0, false
	}
	for _, m := range errTable[c].maps {
		if v >= m.lo && v <= m.hi {
			return m.vendor, m.typ, m.code, true
		}
	}
	return 0, 0, 0, false
}

// DecodeErrCode finds the error that (vendor, typ, code) means in wire
// version v, or 0.
func DecodeErrCode(v uint8, vendor uint32, typ, code uint16) ErrCode {
	for c := ErrCode(1); c < numErrCodes; c++ {
		for _, m := range errTable[c].maps {
			if v >= m.lo && v <= m.hi && m.vendor == vendor && m.typ == typ && m.code == code {
				return c
			}
		}
	}
	return 0
}

// ErrCodeByName finds an error by its Open vSwitch name, or returns 0.
func ErrCodeByName(name string) ErrCode {
	for c := ErrCode(1); c < numErrCodes; c++ {
		if errTable[c].name == name {
			return c
		}
	}
	return 0
}

// Error is a protocol error: an OpenFlow error code and its cause. The
// connection layer turns it into an OFPT_ERROR reply.
type Error struct {
	Code ErrCode
	Err  error // cause; may be nil
}

func (e *Error) Error() string {
	if e.Err == nil {
		return "openflow: " + e.Code.String()
	}
	return "openflow: " + e.Code.String() + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is lets errors.Is match an *Error by code alone.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Err == nil && t.Code == e.Code
}

// ErrorCode implements the interface connection code uses to pick a reply.
func (e *Error) ErrorCode() ErrCode { return e.Code }

func errorf(c ErrCode, format string, args ...any) *Error {
	return &Error{Code: c, Err: fmt.Errorf(format, args...)}
}

// CodeOf returns the ErrCode carried by err, or 0 if err carries none.
func CodeOf(err error) ErrCode {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}
