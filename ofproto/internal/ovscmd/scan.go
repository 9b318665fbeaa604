package ovscmd

import (
	"net/netip"
	"strings"
)

// This file reproduces the pieces of Open vSwitch's argument parsing (its
// own scanf, ovs_scan, and inet_pton) and address printing shared by the
// command packages.

func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

// SkipSpaces drops leading C white space (space, \t, \n, \v, \f, \r).
func SkipSpaces(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	return s
}

func hexit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// ScanInt is ovs_scan's integer conversion (%d, %i, %u, %x with base 10, 0,
// 10, 16): leading white space, an optional sign, a 0x prefix for bases 0
// and 16, an octal 0 for base 0, then digits, wrapping modulo 2^64. The
// caller truncates to the conversion's width. On failure rest is s after
// the white space, sign and prefix.
func ScanInt(s string, base int) (v uint64, rest string, ok bool) {
	s = SkipSpaces(s)
	neg := len(s) > 0 && s[0] == '-'
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if (base == 0 || base == 16) && len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		base = 16
		s = s[2:]
	} else if base == 0 {
		base = 10
		if len(s) > 0 && s[0] == '0' {
			base = 8
		}
	}
	n := 0
	for n < len(s) {
		d := hexit(s[n])
		if d < 0 || d >= base {
			break
		}
		v = v*uint64(base) + uint64(d)
		n++
	}
	if n == 0 {
		return 0, s, false
	}
	if neg {
		v = -v
	}
	return v, s[n:], true
}

// ScanLit matches a literal prefix as ovs_scan does (white space in the
// format skips any white space in the input).
func ScanLit(s, lit string) (string, bool) {
	for i := 0; i < len(lit); i++ {
		if isSpace(lit[i]) {
			s = SkipSpaces(s)
			continue
		}
		if len(s) == 0 || s[0] != lit[i] {
			return s, false
		}
		s = s[1:]
	}
	return s, true
}

// ParseIPv4 is inet_pton(AF_INET, s).
func ParseIPv4(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return netip.Addr{}, false
	}
	return a, true
}

// ParseIPv6 is inet_pton(AF_INET6, s): no zone, and IPv4 only in the
// IPv4-mapped or -compatible forms.
func ParseIPv6(s string) (netip.Addr, bool) {
	if !strings.Contains(s, ":") || strings.Contains(s, "%") {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() {
		return netip.Addr{}, false
	}
	return a, true
}

// FormatAddr is ipv6_format_mapped: IPv4 and IPv4-mapped addresses in
// dotted quad, others as glibc's inet_ntop prints them. The zero Addr
// prints as "::" (an all-zero in6_addr).
func FormatAddr(a netip.Addr) string {
	if !a.IsValid() {
		return "::"
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	b := a.As16()
	// glibc prints IPv4-compatible addresses (::a.b.c.d, six zero words
	// followed by a non-zero word) with a dotted quad; Go does not.
	compat := true
	for _, c := range b[:12] {
		if c != 0 {
			compat = false
		}
	}
	if compat && (b[12] != 0 || b[13] != 0) {
		return "::" + netip.AddrFrom4([4]byte(b[12:16])).String()
	}
	return a.WithZone("").String()
}
