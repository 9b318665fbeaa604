package model

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// UUID is an RFC 4122 UUID.
type UUID [16]byte

// ZeroUUID is the all-zeros UUID, ovsdb's default uuid atom.
var ZeroUUID UUID

// NewUUID returns a random (version 4) UUID.
func NewUUID() UUID {
	var u UUID
	_, _ = rand.Read(u[:]) // crypto/rand.Read never fails.
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

// String formats u as 8-4-4-4-12 lower-case hex.
func (u UUID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// ParseUUID parses the 8-4-4-4-12 hex form.
func ParseUUID(s string) (UUID, error) {
	var u UUID
	if len(s) != 36 {
		return u, fmt.Errorf("%q is not a valid UUID", s)
	}
	// Dashes exactly at 8, 13, 18 and 23, so that the rest pairs up.
	for i := 0; i < len(s); i++ {
		if (s[i] == '-') != (i == 8 || i == 13 || i == 18 || i == 23) {
			return u, fmt.Errorf("%q is not a valid UUID", s)
		}
	}
	j := 0
	for i := 0; i < 36; {
		if s[i] == '-' {
			i++
			continue
		}
		hi, ok1 := unhex(s[i])
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return u, fmt.Errorf("%q is not a valid UUID", s)
		}
		u[j] = hi<<4 | lo
		j++
		i += 2
	}
	return u, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
