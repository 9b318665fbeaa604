package model

import (
	"encoding/json"
	"fmt"
)

// Error names used by ovsdb-server (RFC 7047 section 3.1 and extensions).
const (
	ErrSyntax            = "syntax error"
	ErrConstraint        = "constraint violation"
	ErrReferential       = "referential integrity violation"
	ErrUnknownColumn     = "unknown column"
	ErrUnknownDatabase   = "unknown database"
	ErrDuplicateUUIDName = "duplicate uuid-name"
	ErrNotOwner          = "not owner"
	ErrTimedOut          = "timed out"
	ErrAborted           = "aborted"
	ErrNotAllowed        = "not allowed"
	ErrDomain            = "domain error"
	ErrRange             = "range error"
	ErrGeneric           = "ovsdb error"
	ErrIO                = "I/O error"
	ErrResources         = "resources exhausted"
	ErrCanceled          = "canceled"
	ErrUnknownFunction   = "unknown function"
	ErrUnknownMutator    = "unknown mutator"
)

// Error is an OVSDB error object: {"error": Name, "details": Details,
// "syntax": Syntax}. Syntax, when set, is the JSON text that was rejected.
type Error struct {
	Name    string
	Details string
	Syntax  string
}

func (e *Error) Error() string {
	if e.Details == "" {
		return e.Name
	}
	return e.Name + ": " + e.Details
}

// Errorf builds an Error with formatted details.
func Errorf(name, format string, args ...any) *Error {
	return &Error{Name: name, Details: fmt.Sprintf(format, args...)}
}

// SyntaxErrorf builds a "syntax error" that quotes the offending JSON.
func SyntaxErrorf(json any, format string, args ...any) *Error {
	return &Error{Name: ErrSyntax, Details: fmt.Sprintf(format, args...), Syntax: JSONText(json)}
}

// WithSyntax returns e with the offending JSON quoted.
func (e *Error) WithSyntax(json any) *Error {
	c := *e
	c.Syntax = JSONText(json)
	return &c
}

// MarshalJSON writes the members in the order ovsdb-server does.
func (e *Error) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	if e.Syntax != "" {
		b = append(b, `"syntax":`...)
		b = appendString(b, e.Syntax)
		b = append(b, ',')
	}
	if e.Details != "" {
		b = append(b, `"details":`...)
		b = appendString(b, e.Details)
		b = append(b, ',')
	}
	b = append(b, `"error":`...)
	b = appendString(b, e.Name)
	return append(b, '}'), nil
}

// JSONText renders a decoded JSON value compactly, for error messages.
func JSONText(v any) string {
	if v == nil {
		return "null"
	}
	b, err := marshalNoEscape(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

var _ json.Marshaler = (*Error)(nil)
