package router

import (
	"net/netip"
	"strconv"
	"strings"
)

// This file reproduces the argument parsing of Open vSwitch's unixctl
// commands (its own scanf, ovs_scan, and the CIDR helpers built on it), so
// that gvs accepts and refuses exactly the same strings.

func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

func skipSpaces(s string) string {
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

// scanInt is ovs_scan's integer conversion (%d, %i, %u, %x with base 10, 0,
// 10, 16): leading white space, an optional sign, a 0x prefix for bases 0
// and 16, an octal 0 for base 0, then digits, wrapping modulo 2^64. The
// caller truncates to the conversion's width.
func scanInt(s string, base int) (v uint64, rest string, ok bool) {
	s = skipSpaces(s)
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

// scanLit matches a literal prefix as ovs_scan does (white space in the
// format skips any white space in the input).
func scanLit(s, lit string) (string, bool) {
	for i := 0; i < len(lit); i++ {
		if isSpace(lit[i]) {
			s = skipSpaces(s)
			continue
		}
		if len(s) == 0 || s[0] != lit[i] {
			return s, false
		}
		s = s[1:]
	}
	return s, true
}

// parseMark is ovs_scan(s, "pkt_mark=%"SCNi32): trailing text is ignored.
func parseMark(s string) (uint32, bool) {
	s, ok := scanLit(s, "pkt_mark=")
	if !ok {
		return 0, false
	}
	v, _, ok := scanInt(s, 0)
	return uint32(v), ok
}

// scanIPv4 is IP_SCAN_FMT: four %hhu separated by dots.
func scanIPv4(s string) (ip [4]byte, rest string, ok bool) {
	for i := 0; i < 4; i++ {
		if i > 0 {
			if s, ok = scanLit(s, "."); !ok {
				return ip, s, false
			}
		}
		var v uint64
		if v, s, ok = scanInt(s, 10); !ok {
			return ip, s, false
		}
		ip[i] = byte(v)
	}
	return ip, s, true
}

// parseIPv4CIDR is ip_parse_cidr: "a.b.c.d", "a.b.c.d/len" or
// "a.b.c.d/mask" with a contiguous mask and nothing after.
func parseIPv4CIDR(s string) (netip.Prefix, bool) {
	ip, rest, ok := scanIPv4(s)
	if !ok {
		return netip.Prefix{}, false
	}
	var mask uint32
	if r, ok := scanLit(rest, "/"); ok {
		if m, r2, ok := scanIPv4(r); ok {
			mask, rest = uint32(m[0])<<24|uint32(m[1])<<16|uint32(m[2])<<8|uint32(m[3]), r2
		} else if v, r2, ok := scanInt(r, 10); ok {
			p := int32(v)
			if p < 0 || p > 32 {
				return netip.Prefix{}, false
			}
			mask, rest = prefixMask32(int(p)), r2
		} else {
			mask = ^uint32(0) // "a.b.c.d" alone; the "/" is then garbage
		}
	} else {
		mask = ^uint32(0)
	}
	inv := ^mask
	if inv&(inv+1) != 0 { // not a CIDR mask
		return netip.Prefix{}, false
	}
	if rest != "" {
		return netip.Prefix{}, false
	}
	bits := 0
	for m := mask; m != 0; m <<= 1 {
		bits++
	}
	return netip.PrefixFrom(netip.AddrFrom4(ip), bits), true
}

func prefixMask32(p int) uint32 {
	if p == 0 {
		return 0
	}
	return ^uint32(0) << (32 - p)
}

const ipv6ScanChars = "0123456789abcdefABCDEF:."

// scanIPv6Token is " %46[0123456789abcdefABCDEF:.]".
func scanIPv6Token(s string) (tok, rest string, ok bool) {
	s = skipSpaces(s)
	n := 0
	for n < len(s) && n < 46 && strings.IndexByte(ipv6ScanChars, s[n]) >= 0 {
		n++
	}
	if n == 0 {
		return "", s, false
	}
	return s[:n], s[n:], true
}

// parseIPv6 is inet_pton(AF_INET6, s).
func parseIPv6(s string) (netip.Addr, bool) {
	if !strings.Contains(s, ":") || strings.Contains(s, "%") {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() {
		return netip.Addr{}, false
	}
	return a, true
}

// parseIPv4 is inet_pton(AF_INET, s).
func parseIPv4(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return netip.Addr{}, false
	}
	return a, true
}

// parseIPv6CIDR is ipv6_parse_cidr.
func parseIPv6CIDR(s string) (netip.Prefix, bool) {
	tok, rest, ok := scanIPv6Token(s)
	if !ok {
		return netip.Prefix{}, false
	}
	ip, ok := parseIPv6(tok)
	if !ok {
		return netip.Prefix{}, false
	}
	bits := 128
	if r, ok := scanLit(rest, "/"); ok {
		if v, r2, ok := scanInt(r, 10); ok {
			p := int32(v)
			if p < 0 || p > 128 {
				return netip.Prefix{}, false
			}
			bits, rest = int(p), r2
		} else if tok, r2, ok := scanIPv6Token(r); ok {
			m, ok := parseIPv6(tok)
			if !ok {
				return netip.Prefix{}, false
			}
			b := m.As16()
			bits = 0
			for _, c := range b {
				for i := 7; i >= 0; i-- {
					if c&(1<<i) == 0 {
						goto counted
					}
					bits++
				}
			}
		counted:
			if masks[bits] != b {
				return netip.Prefix{}, false
			}
			rest = r2
		}
	}
	if rest != "" {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(ip, bits), true
}

// parseRoute parses a route destination, IPv4 first as Open vSwitch does.
// IPv4-mapped IPv6 input stays IPv6 with its 128-bit length.
func parseRoute(s string) (p netip.Prefix, is4 bool, ok bool) {
	if p, ok := parseIPv4CIDR(s); ok {
		return p, true, true
	}
	if p, ok := parseIPv6CIDR(s); ok {
		return p, false, true
	}
	return netip.Prefix{}, false, false
}

// formatAddr is ipv6_format_mapped: IPv4 and IPv4-mapped addresses in dotted
// quad, others as glibc's inet_ntop prints them.
func formatAddr(a netip.Addr) string {
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

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }
