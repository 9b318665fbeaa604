package ovscmd

import (
	"net/netip"
	"strings"
	"testing"
)

func TestScanIntFollowsOVSScan(t *testing.T) {
	for _, tc := range []struct {
		in   string
		base int
		v    uint64
		rest string
		ok   bool
	}{
		{"42", 10, 42, "", true},
		{" \t+42x", 10, 42, "x", true},
		{"-1", 10, 1<<64 - 1, "", true},
		{"0x1F", 16, 31, "", true},
		{"0X1f:", 16, 31, ":", true},
		{"0x", 16, 0, "", false},
		{"0x10", 10, 0, "x10", true},
		{"0x10", 0, 16, "", true},
		{"010", 0, 8, "", true},
		{"019", 0, 1, "9", true},
		{"0", 0, 0, "", true},
		{"18446744073709551617", 10, 1, "", true}, // wraps modulo 2^64
		{"", 10, 0, "", false},
		{" -", 10, 0, "", false},
		{"g", 16, 0, "g", false},
	} {
		v, rest, ok := ScanInt(tc.in, tc.base)
		if v != tc.v || rest != tc.rest || ok != tc.ok {
			t.Errorf("ScanInt(%q, %d) = %d, %q, %v; want %d, %q, %v", tc.in, tc.base, v, rest, ok, tc.v, tc.rest, tc.ok)
		}
	}
}

func TestScanLitSkipsSpaceOnlyWhereFormatHasSpace(t *testing.T) {
	for _, tc := range []struct {
		in, lit, rest string
		ok            bool
	}{
		{"pkt_mark=5", "pkt_mark=", "5", true},
		{" pkt_mark=5", "pkt_mark=", " pkt_mark=5", false},
		{"/ \n 24", "/ ", "24", true},
		{"a", "ab", "", false},
	} {
		rest, ok := ScanLit(tc.in, tc.lit)
		if rest != tc.rest || ok != tc.ok {
			t.Errorf("ScanLit(%q, %q) = %q, %v; want %q, %v", tc.in, tc.lit, rest, ok, tc.rest, tc.ok)
		}
	}
}

func TestParseIPMatchesInetPton(t *testing.T) {
	for _, tc := range []struct {
		in     string
		v4, v6 bool
	}{
		{"1.2.3.4", true, false},
		{"01.2.3.4", false, false},
		{"1.2.3", false, false},
		{"::1", false, true},
		{"::ffff:1.2.3.4", false, true},
		{"fe80::1%eth0", false, false},
		{"", false, false},
	} {
		if _, ok := ParseIPv4(tc.in); ok != tc.v4 {
			t.Errorf("ParseIPv4(%q) ok = %v", tc.in, ok)
		}
		if _, ok := ParseIPv6(tc.in); ok != tc.v6 {
			t.Errorf("ParseIPv6(%q) ok = %v", tc.in, ok)
		}
	}
}

func TestFormatAddrPrintsLikeIPv6FormatMapped(t *testing.T) {
	for _, tc := range []struct {
		in   netip.Addr
		want string
	}{
		{netip.Addr{}, "::"},
		{netip.MustParseAddr("1.2.3.4"), "1.2.3.4"},
		{netip.MustParseAddr("::ffff:1.2.3.4"), "1.2.3.4"},
		{netip.MustParseAddr("::1.2.3.4"), "::1.2.3.4"},
		{netip.MustParseAddr("::1"), "::1"},
		{netip.MustParseAddr("::ffff"), "::ffff"},
		{netip.MustParseAddr("2001:db8::1%eth0"), "2001:db8::1"},
	} {
		if got := FormatAddr(tc.in); got != tc.want {
			t.Errorf("FormatAddr(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzScanInt checks ScanInt never panics and consumes a prefix of its
// input; a successful IPv6 parse round-trips through FormatAddr.
func FuzzScanInt(f *testing.F) {
	for _, s := range []string{"42", " -0x1f", "0777", "+", "::1", "::ffff:1.2.3.4", "\v\f9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, base := range []int{0, 10, 16} {
			_, rest, _ := ScanInt(s, base)
			if !strings.HasSuffix(s, rest) {
				t.Fatalf("ScanInt(%q, %d) rest %q is not a suffix", s, base, rest)
			}
		}
		if a, ok := ParseIPv6(s); ok {
			if b, ok := ParseIPv6(FormatAddr(a)); (!ok && !a.Unmap().Is4()) || (ok && b != a) {
				t.Fatalf("FormatAddr(%v) = %q does not parse back", a, FormatAddr(a))
			}
		}
	})
}
