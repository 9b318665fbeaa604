package router

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/internal/ovscmd"
)

// This file reproduces the route-specific argument parsing of Open vSwitch's
// unixctl commands (pkt_mark= and the CIDR helpers built on ovs_scan), so
// that gvs accepts and refuses exactly the same strings. The scanning
// primitives it builds on are in ofproto/internal/ovscmd.

// parseMark is ovs_scan(s, "pkt_mark=%"SCNi32): trailing text is ignored.
func parseMark(s string) (uint32, bool) {
	s, ok := ovscmd.ScanLit(s, "pkt_mark=")
	if !ok {
		return 0, false
	}
	v, _, ok := ovscmd.ScanInt(s, 0)
	return uint32(v), ok
}

// scanIPv4 is IP_SCAN_FMT: four %hhu separated by dots.
func scanIPv4(s string) (ip [4]byte, rest string, ok bool) {
	for i := 0; i < 4; i++ {
		if i > 0 {
			if s, ok = ovscmd.ScanLit(s, "."); !ok {
				return ip, s, false
			}
		}
		var v uint64
		if v, s, ok = ovscmd.ScanInt(s, 10); !ok {
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
	if r, ok := ovscmd.ScanLit(rest, "/"); ok {
		if m, r2, ok := scanIPv4(r); ok {
			mask, rest = uint32(m[0])<<24|uint32(m[1])<<16|uint32(m[2])<<8|uint32(m[3]), r2
		} else if v, r2, ok := ovscmd.ScanInt(r, 10); ok {
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
	s = ovscmd.SkipSpaces(s)
	n := 0
	for n < len(s) && n < 46 && strings.IndexByte(ipv6ScanChars, s[n]) >= 0 {
		n++
	}
	if n == 0 {
		return "", s, false
	}
	return s[:n], s[n:], true
}

// parseIPv6CIDR is ipv6_parse_cidr.
func parseIPv6CIDR(s string) (netip.Prefix, bool) {
	tok, rest, ok := scanIPv6Token(s)
	if !ok {
		return netip.Prefix{}, false
	}
	ip, ok := ovscmd.ParseIPv6(tok)
	if !ok {
		return netip.Prefix{}, false
	}
	bits := 128
	if r, ok := ovscmd.ScanLit(rest, "/"); ok {
		if v, r2, ok := ovscmd.ScanInt(r, 10); ok {
			p := int32(v)
			if p < 0 || p > 128 {
				return netip.Prefix{}, false
			}
			bits, rest = int(p), r2
		} else if tok, r2, ok := scanIPv6Token(r); ok {
			m, ok := ovscmd.ParseIPv6(tok)
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

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }
