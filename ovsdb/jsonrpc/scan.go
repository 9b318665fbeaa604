package jsonrpc

import (
	"errors"
	"fmt"
)

// ErrSyntax is wrapped by every framing error about bytes that are not
// JSON (unbalanced brackets, a missing value, a bad escape or number, a
// NUL character): the stream cannot be resynchronised after one, so the
// connection must be closed, as Open vSwitch's parser ends its session.
var ErrSyntax = errors.New("jsonrpc: JSON syntax error")

func syntaxError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSyntax, fmt.Sprintf(format, args...))
}

// scanner states: what the next significant byte may be.
const (
	scValue        = iota // a value (after ':' or ',' in an array)
	scValueOrClose        // a value or ']' (just after '[')
	scKeyOrClose          // a member name or '}' (just after '{')
	scKey                 // a member name (after ',' in an object)
	scColon               // ':' after a member name
	scCommaOrClose        // ',' or the container's closing bracket
	scString              // inside a string
	scEscape              // after '\' in a string
	scHex                 // inside the four digits of \u
	scSurrogate           // after a leading surrogate: '\' of the trailing one
	scSurrogateU          // after its '\': 'u'
	scNumber              // inside a number
	scKeyword             // inside true, false or null
)

// scanner checks JSON syntax one byte at a time, as the framer reads
// them, so that a message is refused as soon as it cannot be JSON: the
// rules and refusals of Open vSwitch's lexer (lib/json.c): control
// characters must be escaped in strings, \u0000 is refused, a leading
// surrogate escape must be followed by a trailing one, numbers follow
// RFC 8259 with no leading zeros, the keywords are true, false and null.
// Strings are not checked for valid UTF-8 here (Open vSwitch does not
// either); OVSDB checks string atoms when it parses them.
type scanner struct {
	stack    []byte // '{' or '[' per open container
	state    int
	isKey    bool   // the string being scanned is a member name
	hex      int    // digits of the \u escape read so far
	code     int    // the \u escape's value so far
	lead     bool   // the \u escape being read must be a trailing surrogate
	tok      []byte // the number or keyword being scanned
	complete bool   // the top-level value is finished
}

func (s *scanner) reset() {
	s.stack = s.stack[:0]
	s.state = scValue
	s.tok = s.tok[:0]
	s.complete = false
	s.lead = false
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// step consumes one byte; the top-level value is complete when
// s.complete becomes true.
func (s *scanner) step(b byte) error {
	switch s.state {
	case scString:
		switch {
		case b == '"':
			s.endString()
		case b == '\\':
			s.state = scEscape
		case b < 0x20:
			return syntaxError("U+%04X must be escaped in quoted string", b)
		}
		return nil
	case scEscape:
		switch b {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s.state = scString
		case 'u':
			s.state, s.hex, s.code = scHex, 0, 0
		default:
			return syntaxError("bad escape \\%c", b)
		}
		return nil
	case scHex:
		var v byte
		switch {
		case b >= '0' && b <= '9':
			v = b - '0'
		case b >= 'a' && b <= 'f':
			v = b - 'a' + 10
		case b >= 'A' && b <= 'F':
			v = b - 'A' + 10
		default:
			return syntaxError("malformed \\u escape")
		}
		s.code = s.code<<4 | int(v)
		if s.hex++; s.hex < 4 {
			return nil
		}
		switch {
		case s.code == 0:
			return syntaxError("null bytes not supported in quoted strings")
		case s.lead:
			if s.code < 0xdc00 || s.code > 0xdfff {
				return syntaxError("second half of escaped surrogate pair is not trailing surrogate")
			}
			s.lead = false
			s.state = scString
		case s.code >= 0xd800 && s.code <= 0xdbff:
			s.lead = true
			s.state = scSurrogate
		default:
			s.state = scString
		}
		return nil
	case scSurrogate:
		if b != '\\' {
			return syntaxError("malformed escaped surrogate pair")
		}
		s.state = scSurrogateU
		return nil
	case scSurrogateU:
		if b != 'u' {
			return syntaxError("malformed escaped surrogate pair")
		}
		s.state, s.hex, s.code = scHex, 0, 0
		return nil
	case scNumber:
		if b >= '0' && b <= '9' || b == '.' || b == 'e' || b == 'E' || b == '+' || b == '-' {
			s.tok = append(s.tok, b)
			return nil
		}
		if err := checkNumber(s.tok); err != nil {
			return err
		}
		s.endValue()
		return s.step(b)
	case scKeyword:
		if b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' {
			if len(s.tok) < 8 {
				s.tok = append(s.tok, b)
			}
			return nil
		}
		switch string(s.tok) {
		case "true", "false", "null":
		default:
			return syntaxError("invalid keyword '%s'", s.tok)
		}
		s.endValue()
		return s.step(b)
	}
	if isSpace(b) {
		return nil
	}
	switch s.state {
	case scValue, scValueOrClose:
		if b == ']' && s.state == scValueOrClose {
			return s.close(b)
		}
		return s.startValue(b)
	case scKeyOrClose, scKey:
		switch {
		case b == '}' && s.state == scKeyOrClose:
			return s.close(b)
		case b == '"':
			s.state, s.isKey = scString, true
			return nil
		}
		return syntaxError("syntax error parsing object expecting string")
	case scColon:
		if b != ':' {
			return syntaxError("syntax error parsing object expecting ':'")
		}
		s.state = scValue
		return nil
	case scCommaOrClose:
		top := s.stack[len(s.stack)-1]
		switch {
		case b == ',' && top == '{':
			s.state = scKey
			return nil
		case b == ',':
			s.state = scValue
			return nil
		case b == '}' && top == '{', b == ']' && top == '[':
			return s.close(b)
		case top == '{':
			return syntaxError("syntax error expecting '}' or ','")
		}
		return syntaxError("syntax error expecting ']' or ','")
	}
	return syntaxError("unexpected scanner state %d", s.state)
}

func (s *scanner) startValue(b byte) error {
	switch {
	case b == '{' || b == '[':
		if len(s.stack) >= MaxDepth {
			return ErrTooDeep
		}
		s.stack = append(s.stack, b)
		if b == '{' {
			s.state = scKeyOrClose
		} else {
			s.state = scValueOrClose
		}
	case b == '"':
		s.state, s.isKey = scString, false
	case b == '-' || b >= '0' && b <= '9':
		s.state, s.tok = scNumber, append(s.tok[:0], b)
	case b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z':
		s.state, s.tok = scKeyword, append(s.tok[:0], b)
	default:
		if b >= 0x20 && b < 0x7f {
			return syntaxError("invalid character '%c'", b)
		}
		return syntaxError("invalid character U+%04x", b)
	}
	return nil
}

func (s *scanner) endString() {
	if s.isKey {
		s.isKey = false
		s.state = scColon
		return
	}
	s.endValue()
}

// endValue follows a complete scalar or container.
func (s *scanner) endValue() {
	if len(s.stack) == 0 {
		s.complete = true
		s.state = scValue
		return
	}
	s.state = scCommaOrClose
}

func (s *scanner) close(b byte) error {
	s.stack = s.stack[:len(s.stack)-1]
	s.endValue()
	return nil
}

// checkNumber checks a number token against RFC 8259's grammar with
// Open vSwitch's messages.
func checkNumber(t []byte) error {
	i := 0
	if i < len(t) && t[i] == '-' {
		i++
	}
	start := i
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	switch {
	case i == start:
		return syntaxError("'-' must be followed by digit")
	case t[start] == '0' && i-start > 1:
		return syntaxError("leading zeros not allowed")
	}
	if i < len(t) && t[i] == '.' {
		i++
		d := i
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		if i == d {
			return syntaxError("decimal point must be followed by digit")
		}
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			i++
		}
		d := i
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		if i == d {
			return syntaxError("exponent must contain at least one digit")
		}
	}
	if i != len(t) {
		return syntaxError("syntax error in number")
	}
	return nil
}

// stringRun returns how many bytes at the start of b may be taken inside
// a string without a change of state: none of '"', '\\' or a control
// character.
func stringRun(b []byte) int {
	for i, c := range b {
		if c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return len(b)
}
