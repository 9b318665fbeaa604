package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// maxDecodeDepth bounds nesting, as Open vSwitch's parser does.
const maxDecodeDepth = 1000

// ErrNulString is wrapped by the DecodeJSON error for a string that
// holds \u0000: Open vSwitch's parser refuses it ("null bytes not
// supported in quoted strings"), and a NUL stored in the database would
// make every Open vSwitch client fail on it.
var ErrNulString = errors.New("null bytes not supported in quoted strings")

// DecodeJSON decodes data into generic values (map[string]any, []any,
// string, json.Number, bool, nil), the form every parser in this package
// expects. Unlike encoding/json it keeps a string's bytes as they came,
// invalid UTF-8 included, so that OVSDB can refuse such a string as
// ovsdb-server does (CheckAtom) instead of storing U+FFFD in its place;
// it refuses \u0000 and unescaped control characters in strings, and
// encodes an unpaired trailing surrogate escape as its three bytes, as
// Open vSwitch's lexer does.
func DecodeJSON(data []byte) (any, error) {
	d := decoder{data: data}
	d.space()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.pos != len(d.data) {
		return nil, d.errorf("trailing garbage at end of input")
	}
	return v, nil
}

type decoder struct {
	data []byte
	pos  int
}

func (d *decoder) errorf(format string, args ...any) error {
	return fmt.Errorf("json: byte %d: %s", d.pos, fmt.Sprintf(format, args...))
}

func (d *decoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) value(depth int) (any, error) {
	if d.pos >= len(d.data) {
		return nil, d.errorf("unexpected end of input")
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		return d.str()
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	default:
		for _, kw := range [...]struct {
			s string
			v any
		}{{"true", true}, {"false", false}, {"null", nil}} {
			if len(d.data)-d.pos >= len(kw.s) && string(d.data[d.pos:d.pos+len(kw.s)]) == kw.s {
				d.pos += len(kw.s)
				return kw.v, nil
			}
		}
		return nil, d.errorf("syntax error expecting value")
	}
}

func (d *decoder) object(depth int) (any, error) {
	if depth > maxDecodeDepth {
		return nil, d.errorf("input exceeds maximum nesting depth %d", maxDecodeDepth)
	}
	d.pos++
	o := map[string]any{}
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return o, nil
	}
	for {
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, d.errorf("syntax error parsing object expecting string")
		}
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, d.errorf("syntax error parsing object expecting ':'")
		}
		d.pos++
		d.space()
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		o[k] = v
		d.space()
		if d.pos >= len(d.data) {
			return nil, d.errorf("unexpected end of input")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return o, nil
		default:
			return nil, d.errorf("syntax error expecting '}' or ','")
		}
	}
}

func (d *decoder) array(depth int) (any, error) {
	if depth > maxDecodeDepth {
		return nil, d.errorf("input exceeds maximum nesting depth %d", maxDecodeDepth)
	}
	d.pos++
	a := []any{}
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return a, nil
	}
	for {
		d.space()
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		d.space()
		if d.pos >= len(d.data) {
			return nil, d.errorf("unexpected end of input")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
		case ']':
			d.pos++
			return a, nil
		default:
			return nil, d.errorf("syntax error expecting ']' or ','")
		}
	}
}

func (d *decoder) number() (any, error) {
	start := d.pos
	i := d.pos
	digits := func() int {
		n := 0
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if d.data[i] == '-' {
		i++
	}
	intStart := i
	switch n := digits(); {
	case n == 0:
		return nil, d.errorf("'-' must be followed by digit")
	case n > 1 && d.data[intStart] == '0':
		return nil, d.errorf("leading zeros not allowed")
	}
	if i < len(d.data) && d.data[i] == '.' {
		i++
		if digits() == 0 {
			return nil, d.errorf("decimal point must be followed by digit")
		}
	}
	if i < len(d.data) && (d.data[i] == 'e' || d.data[i] == 'E') {
		i++
		if i < len(d.data) && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if digits() == 0 {
			return nil, d.errorf("exponent must contain at least one digit")
		}
	}
	d.pos = i
	return json.Number(d.data[start:i]), nil
}

func hexVal(c byte) (int, bool) {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0'), true
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10, true
	}
	return 0, false
}

func (d *decoder) hex4() (int, error) {
	if len(d.data)-d.pos < 4 {
		return 0, d.errorf("quoted string ends within \\u escape")
	}
	v := 0
	for i := 0; i < 4; i++ {
		h, ok := hexVal(d.data[d.pos+i])
		if !ok {
			return 0, d.errorf("malformed \\u escape")
		}
		v = v<<4 | h
	}
	d.pos += 4
	if v == 0 {
		return 0, fmt.Errorf("json: byte %d: %w", d.pos, ErrNulString)
	}
	return v, nil
}

// str decodes the string at d.pos (its opening quote).
func (d *decoder) str() (string, error) {
	d.pos++
	start := d.pos
	// Fast path: no escapes.
	for i := d.pos; i < len(d.data); i++ {
		c := d.data[i]
		if c == '"' {
			d.pos = i + 1
			return string(d.data[start:i]), nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			d.pos = i
			return "", d.errorf("U+%04X must be escaped in quoted string", c)
		}
	}
	var b []byte
	for {
		if d.pos >= len(d.data) {
			return "", d.errorf("unexpected end of input in quoted string")
		}
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return string(b), nil
		case c < 0x20:
			return "", d.errorf("U+%04X must be escaped in quoted string", c)
		case c != '\\':
			b = append(b, c)
			d.pos++
			continue
		}
		d.pos++
		if d.pos >= len(d.data) {
			return "", d.errorf("unexpected end of input in quoted string")
		}
		e := d.data[d.pos]
		d.pos++
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			c0, err := d.hex4()
			if err != nil {
				return "", err
			}
			if c0 < 0xd800 || c0 > 0xdbff {
				b = appendCodePoint(b, c0)
				continue
			}
			if len(d.data)-d.pos < 2 || d.data[d.pos] != '\\' || d.data[d.pos+1] != 'u' {
				return "", d.errorf("malformed escaped surrogate pair")
			}
			d.pos += 2
			c1, err := d.hex4()
			if err != nil {
				return "", err
			}
			if c1 < 0xdc00 || c1 > 0xdfff {
				return "", d.errorf("second half of escaped surrogate pair is not trailing surrogate")
			}
			b = utf8.AppendRune(b, rune(0x10000+(c0-0xd800)<<10+(c1-0xdc00)))
		default:
			return "", d.errorf("bad escape \\%c", e)
		}
	}
}

// appendCodePoint encodes a code point below 0x10000 in UTF-8 as Open
// vSwitch does, an unpaired trailing surrogate included (encoding/json
// and utf8.AppendRune would write U+FFFD instead).
func appendCodePoint(b []byte, c int) []byte {
	switch {
	case c < 0x80:
		return append(b, byte(c))
	case c < 0x800:
		return append(b, byte(0xc0|c>>6), byte(0x80|c&0x3f))
	}
	return append(b, byte(0xe0|c>>12), byte(0x80|(c>>6)&0x3f), byte(0x80|c&0x3f))
}
