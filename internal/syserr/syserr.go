// Package syserr owns how gvs words a system error where Open vSwitch
// prints C's strerror text ("Connection refused", "Resource temporarily
// unavailable"): logs, status columns and tool messages compared with
// Open vSwitch's. It imports nothing of gvs.
package syserr

import (
	"context"
	"errors"
	"os"
	"syscall"
)

// Text is err as strerror words an errno it wraps (Go's own text for
// errno values, capitalised), else Go's message.
func Text(err error) string {
	var en syscall.Errno
	if errors.As(err, &en) {
		if s := en.Error(); s != "" {
			return string(s[0]-'a'+'A') + s[1:]
		}
	}
	return err.Error()
}

// ClientText is Text for a client's operation with a deadline: a
// deadline that passed is ETIMEDOUT's "Connection timed out", as Open
// vSwitch's tools report a timeout.
func ClientText(err error) string {
	if !errors.As(err, new(syscall.Errno)) && (errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded)) {
		return "Connection timed out"
	}
	return Text(err)
}
