package model

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// RefType says whether a reference keeps its target alive.
type RefType uint8

// Reference kinds.
const (
	RefStrong RefType = iota
	RefWeak
)

// BaseType is an atomic type with the constraints a schema may add.
type BaseType struct {
	Type AtomicType
	// Enum, when non-nil, lists the allowed values.
	Enum *Datum

	MinInteger, MaxInteger int64
	MinReal, MaxReal       float64
	MinLength, MaxLength   int

	// RefTable names the table a uuid refers to; empty for plain uuids.
	RefTable string
	RefType  RefType
}

// ColumnType is a column's type: a key type, an optional value type (maps)
// and the number of elements allowed.
type ColumnType struct {
	Key   BaseType
	Value *BaseType
	Min   int
	Max   int // Unlimited for no limit
}

// Unlimited is ColumnType.Max for "max": "unlimited".
const Unlimited = math.MaxInt

// IsMap reports whether the column holds a map.
func (t *ColumnType) IsMap() bool { return t.Value != nil }

// IsScalar reports whether the column holds exactly one atom.
func (t *ColumnType) IsScalar() bool { return t.Min == 1 && t.Max == 1 && t.Value == nil }

// IsOptional reports whether the column holds zero or one atom.
func (t *ColumnType) IsOptional() bool { return t.Min == 0 && t.Max == 1 && t.Value == nil }

func newBaseType(t AtomicType) BaseType {
	return BaseType{
		Type:       t,
		MinInteger: math.MinInt64, MaxInteger: math.MaxInt64,
		MinReal: -math.MaxFloat64, MaxReal: math.MaxFloat64,
		MinLength: 0, MaxLength: math.MaxInt,
	}
}

// ParseColumnType parses a schema's <type>.
func ParseColumnType(v any) (ColumnType, error) {
	if s, ok := v.(string); ok {
		at, ok := ParseAtomicType(s)
		if !ok {
			return ColumnType{}, fmt.Errorf("unknown atomic type %q", s)
		}
		return ColumnType{Key: newBaseType(at), Min: 1, Max: 1}, nil
	}
	o, ok := v.(map[string]any)
	if !ok {
		return ColumnType{}, fmt.Errorf("type must be string or object")
	}
	ct := ColumnType{Min: 1, Max: 1}
	key, err := parseBaseType(o["key"])
	if err != nil {
		return ColumnType{}, fmt.Errorf("key: %w", err)
	}
	ct.Key = key
	if vv, ok := o["value"]; ok {
		val, err := parseBaseType(vv)
		if err != nil {
			return ColumnType{}, fmt.Errorf("value: %w", err)
		}
		ct.Value = &val
	}
	if m, ok := o["min"]; ok {
		n, err := schemaInt(m)
		if err != nil || n < 0 || n > 1 {
			return ColumnType{}, fmt.Errorf("min must be 0 or 1")
		}
		ct.Min = int(n)
	}
	if m, ok := o["max"]; ok {
		if s, ok := m.(string); ok && s == "unlimited" {
			ct.Max = Unlimited
		} else {
			n, err := schemaInt(m)
			if err != nil || n < 1 {
				return ColumnType{}, fmt.Errorf("max must be a positive integer or \"unlimited\"")
			}
			ct.Max = int(n)
		}
	}
	if ct.Min > ct.Max {
		return ColumnType{}, fmt.Errorf("min exceeds max")
	}
	return ct, nil
}

func schemaInt(v any) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("expected integer")
	}
	return strconv.ParseInt(string(n), 10, 64)
}

func schemaReal(v any) (float64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("expected number")
	}
	return strconv.ParseFloat(string(n), 64)
}

func parseBaseType(v any) (BaseType, error) {
	if s, ok := v.(string); ok {
		at, ok := ParseAtomicType(s)
		if !ok {
			return BaseType{}, fmt.Errorf("unknown atomic type %q", s)
		}
		return newBaseType(at), nil
	}
	o, ok := v.(map[string]any)
	if !ok {
		return BaseType{}, fmt.Errorf("base type must be string or object")
	}
	ts, _ := o["type"].(string)
	at, ok := ParseAtomicType(ts)
	if !ok {
		return BaseType{}, fmt.Errorf("unknown atomic type %q", ts)
	}
	bt := newBaseType(at)
	var err error
	for k, x := range o {
		switch k {
		case "type":
		case "enum":
			et := ColumnType{Key: newBaseType(at), Min: 0, Max: Unlimited}
			d, e := DatumFromJSON(&et, x, nil)
			if e != nil {
				return BaseType{}, fmt.Errorf("enum: %v", e)
			}
			bt.Enum = &d
		case "minInteger":
			bt.MinInteger, err = schemaInt(x)
		case "maxInteger":
			bt.MaxInteger, err = schemaInt(x)
		case "minReal":
			bt.MinReal, err = schemaReal(x)
		case "maxReal":
			bt.MaxReal, err = schemaReal(x)
		case "minLength":
			var n int64
			n, err = schemaInt(x)
			bt.MinLength = int(n)
		case "maxLength":
			var n int64
			n, err = schemaInt(x)
			bt.MaxLength = int(n)
		case "refTable":
			bt.RefTable, _ = x.(string)
		case "refType":
			switch x {
			case "strong":
				bt.RefType = RefStrong
			case "weak":
				bt.RefType = RefWeak
			default:
				err = fmt.Errorf("refType must be strong or weak")
			}
		default:
			err = fmt.Errorf("unknown member %q", k)
		}
		if err != nil {
			return BaseType{}, fmt.Errorf("%s: %w", k, err)
		}
	}
	return bt, nil
}

// CheckAtom checks a's value against the base type's constraints and
// returns a "constraint violation" as ovsdb-server words it.
func (bt *BaseType) CheckAtom(a Atom) *Error {
	if bt.Enum != nil {
		if bt.Enum.find(a) < 0 {
			parts := make([]string, len(bt.Enum.Keys))
			for i, k := range bt.Enum.Keys {
				parts[i] = enumString(k)
			}
			return Errorf(ErrConstraint, "%s is not one of the allowed values ([%s])",
				atomString(a), strings.Join(parts, ", "))
		}
		return nil
	}
	switch x := a.(type) {
	case int64:
		lo, hi := bt.MinInteger, bt.MaxInteger
		if x >= lo && x <= hi {
			return nil
		}
		switch {
		case lo != math.MinInt64 && hi != math.MaxInt64:
			return Errorf(ErrConstraint, "%d is not in the valid range %d to %d (inclusive)", x, lo, hi)
		case lo != math.MinInt64:
			return Errorf(ErrConstraint, "%d is less than minimum allowed value %d", x, lo)
		default:
			return Errorf(ErrConstraint, "%d is greater than maximum allowed value %d", x, hi)
		}
	case float64:
		lo, hi := bt.MinReal, bt.MaxReal
		if x >= lo && x <= hi {
			return nil
		}
		return Errorf(ErrConstraint, "%s is not in the valid range %s to %s (inclusive)",
			atomString(x), atomString(lo), atomString(hi))
	case string:
		if msg := utf8Invalid(x); msg != "" {
			return Errorf(ErrConstraint, "not a valid UTF-8 string: %s", msg)
		}
		n := utf8.RuneCountInString(x)
		if n < bt.MinLength {
			return Errorf(ErrConstraint, "\"%s\" length %d is less than minimum allowed length %d", x, n, bt.MinLength)
		}
		if n > bt.MaxLength {
			return Errorf(ErrConstraint, "\"%s\" length %d is greater than maximum allowed length %d", x, n, bt.MaxLength)
		}
	}
	return nil
}

// enumString renders an enum member as ovsdb-server lists them (strings
// unquoted).
func enumString(a Atom) string {
	if s, ok := a.(string); ok {
		return s
	}
	return atomString(a)
}

// utf8Invalid describes the first invalid UTF-8 sequence of s as
// ovsdb-server does ("invalid UTF-8 sequence 0xc3 0x62": the lead byte
// and the bytes up to the first that cannot follow it), or returns "".
func utf8Invalid(s string) string {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || size > 1 {
			i += size
			continue
		}
		n := 1
		if need := utf8SeqLen(s[i]); need > 1 {
			for n < need && i+n < len(s) && utf8Continues(s[i], n, s[i+n]) {
				n++
			}
			if n < need {
				n++ // the byte that broke the sequence (or the end)
			}
		}
		msg := "invalid UTF-8 sequence"
		for j := 0; j < n; j++ {
			b := byte(0)
			if i+j < len(s) {
				b = s[i+j]
			}
			msg += fmt.Sprintf(" 0x%02x", b)
		}
		return msg
	}
	return ""
}

// utf8SeqLen is the length of the sequence lead byte c starts, or 0 if c
// cannot start one.
func utf8SeqLen(c byte) int {
	switch {
	case c >= 0xc2 && c <= 0xdf:
		return 2
	case c >= 0xe0 && c <= 0xef:
		return 3
	case c >= 0xf0 && c <= 0xf4:
		return 4
	}
	return 0
}

// utf8Continues reports whether b may be byte n (1-based after the lead)
// of the sequence lead starts, with the narrower second-byte ranges of
// E0, ED, F0 and F4.
func utf8Continues(lead byte, n int, b byte) bool {
	lo, hi := byte(0x80), byte(0xbf)
	if n == 1 {
		switch lead {
		case 0xe0:
			lo = 0xa0
		case 0xed:
			hi = 0x9f
		case 0xf0:
			lo = 0x90
		case 0xf4:
			hi = 0x8f
		}
	}
	return b >= lo && b <= hi
}
