package model

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// AtomicType is one of RFC 7047's five atomic types.
type AtomicType uint8

// The atomic types, in ovsdb's order.
const (
	TypeVoid AtomicType = iota
	TypeInteger
	TypeReal
	TypeBoolean
	TypeString
	TypeUUID
)

var atomicTypeNames = [...]string{"void", "integer", "real", "boolean", "string", "uuid"}

func (t AtomicType) String() string {
	if int(t) < len(atomicTypeNames) {
		return atomicTypeNames[t]
	}
	return "invalid"
}

// ParseAtomicType maps a schema type name to its AtomicType.
func ParseAtomicType(s string) (AtomicType, bool) {
	for i, n := range atomicTypeNames[1:] {
		if n == s {
			return AtomicType(i + 1), true
		}
	}
	return TypeVoid, false
}

// Atom is an int64, float64, bool, string or UUID.
type Atom = any

// DefaultAtom is the default value of an atomic type: 0, 0.0, false, "" or
// the all-zeros UUID.
func DefaultAtom(t AtomicType) Atom {
	switch t {
	case TypeInteger:
		return int64(0)
	case TypeReal:
		return float64(0)
	case TypeBoolean:
		return false
	case TypeString:
		return ""
	case TypeUUID:
		return ZeroUUID
	}
	return nil
}

// CompareAtoms orders two atoms of the same type.
func CompareAtoms(a, b Atom) int {
	switch x := a.(type) {
	case int64:
		return cmp.Compare(x, b.(int64))
	case float64:
		return cmp.Compare(x, b.(float64))
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case string:
		return strings.Compare(x, b.(string))
	case UUID:
		y := b.(UUID)
		return bytes.Compare(x[:], y[:])
	}
	return 0
}

// Resolver maps a named-uuid to the UUID of the row that a transaction
// inserts (or will insert) under that name.
type Resolver func(name string) UUID

// AtomFromJSON parses a decoded JSON value (json.Number for numbers) as an
// atom of type t. Named UUIDs are accepted only when resolve is non-nil.
func AtomFromJSON(t AtomicType, v any, resolve Resolver) (Atom, *Error) {
	switch t {
	case TypeInteger:
		if n, ok := v.(json.Number); ok {
			if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
				return i, nil
			}
		}
		return nil, SyntaxErrorf(v, "expected integer")
	case TypeReal:
		if n, ok := v.(json.Number); ok {
			if f, err := strconv.ParseFloat(string(n), 64); err == nil && !math.IsInf(f, 0) {
				return f, nil
			}
		}
		return nil, SyntaxErrorf(v, "expected real")
	case TypeBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return nil, SyntaxErrorf(v, "expected boolean")
	case TypeString:
		if s, ok := v.(string); ok {
			return s, nil
		}
		return nil, SyntaxErrorf(v, "expected string")
	case TypeUUID:
		return uuidFromJSON(v, resolve)
	}
	return nil, SyntaxErrorf(v, "invalid atomic type")
}

func uuidFromJSON(v any, resolve Resolver) (Atom, *Error) {
	a, ok := v.([]any)
	if !ok || len(a) != 2 {
		return nil, SyntaxErrorf(v, "expected [\"uuid\", <string>] or [\"named-uuid\", <string>]")
	}
	tag, _ := a[0].(string)
	s, ok := a[1].(string)
	if !ok {
		return nil, SyntaxErrorf(v, "expected [\"uuid\", <string>] or [\"named-uuid\", <string>]")
	}
	switch tag {
	case "uuid":
		u, err := ParseUUID(s)
		if err != nil {
			return nil, SyntaxErrorf(v, "\"%s\" is not a valid UUID", s)
		}
		return u, nil
	case "named-uuid":
		if resolve == nil {
			return nil, SyntaxErrorf(v, "named-uuid not allowed here")
		}
		if !validID(s) {
			return nil, SyntaxErrorf(v, "\"%s\" is not a valid <id>", s)
		}
		return resolve(s), nil
	}
	return nil, SyntaxErrorf(v, "expected [\"uuid\", <string>] or [\"named-uuid\", <string>]")
}

// ValidID reports whether s is an RFC 7047 <id>.
func ValidID(s string) bool { return validID(s) }

// validID reports whether s is an RFC 7047 <id>: a letter or underscore
// followed by letters, digits and underscores.
func validID(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// AppendAtomJSON appends the JSON form of a.
func AppendAtomJSON(dst []byte, a Atom) []byte {
	switch x := a.(type) {
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case float64:
		return appendReal(dst, x)
	case bool:
		return strconv.AppendBool(dst, x)
	case string:
		return appendString(dst, x)
	case UUID:
		dst = append(dst, `["uuid","`...)
		dst = append(dst, x.String()...)
		return append(dst, `"]`...)
	}
	return append(dst, "null"...)
}

// appendReal formats like Open vSwitch's JSON writer (%.17g, shortest form
// that round-trips).
func appendReal(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, '0')
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// atomString renders an atom for error details, as ovsdb-server does:
// strings bare when they read as an identifier, quoted otherwise.
func atomString(a Atom) string {
	switch x := a.(type) {
	case string:
		if needsQuotes(x) {
			return string(appendString(nil, x))
		}
		return x
	case UUID:
		return x.String()
	}
	return string(AppendAtomJSON(nil, a))
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaping only what JSON requires.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c == '\b':
				dst = append(dst, '\\', 'b')
			case c == '\f':
				dst = append(dst, '\\', 'f')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// AppendString appends s as a JSON string.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s) }

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// needsQuotes reports whether ovsdb-server quotes s when it prints it.
func needsQuotes(s string) bool {
	if s == "" || s == "true" || s == "false" {
		return true
	}
	c := s[0]
	if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return true
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return true
		}
	}
	return false
}

// AtomString renders an atom as ovsdb-server does in error details.
func AtomString(a Atom) string { return atomString(a) }

// String renders d as ovsdb-server does in error details: a lone atom
// bare, sets in braces, maps as key=value pairs.
func (d Datum) String() string {
	if d.Values == nil && len(d.Keys) == 1 {
		return atomString(d.Keys[0])
	}
	parts := make([]string, len(d.Keys))
	for i, k := range d.Keys {
		parts[i] = atomString(k)
		if d.Values != nil {
			parts[i] += "=" + atomString(d.Values[i])
		}
	}
	if d.Values != nil {
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
