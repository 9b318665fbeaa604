package router

import (
	"context"
	"net/netip"
	"strings"
	"testing"
)

// FuzzCommands runs arbitrary argument lists through every ovs/route
// command: no panic, replies are OK/known errors, and a route that was
// added is found by lookup of its own address.
func FuzzCommands(f *testing.F) {
	for _, s := range []string{
		"1.1.2.92/24 br0", "198.51.100.200/24 br0 192.0.2.250 pkt_mark=1234", "2001:db8:babe::/64 br0 2001:db8:cafe::3 pkt_mark=321",
		"1.1.2.0/255.255.255.0 br0 pkt_mark=0x10", "::ffff:1.1.2.0/120 br0", "1.1.2.344/24 br0 pkt_mark=-1", "foo", "1.1.1.0/33 br0",
		"1.2.3.4/ffff:: br0", " 2001::/ 64 br0", "1.1.2.0/24 br0 1.1.2.1 pkt_mark=010abc",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, " ")
		tbl := New(func(string) []netip.Prefix {
			return []netip.Prefix{netip.MustParsePrefix("1.1.2.88/0"), netip.MustParsePrefix("fd00::1/0")}
		})
		for _, c := range tbl.Commands() {
			if len(args) < c.MinArgs || len(args) > c.MaxArgs {
				continue
			}
			out, err := c.Run(context.Background(), args)
			if err == nil && c.Name == "ovs/route/add" {
				if out != "OK\n" {
					t.Fatalf("add reply %q", out)
				}
				a, _ := parseAddArgs(args)
				if _, ok := tbl.Lookup(a.prefix.Addr(), a.mark); !ok {
					t.Fatalf("added %q but lookup of its address misses", line)
				}
			}
		}
		_ = tbl.Show()
	})
}

// FuzzParseRoute checks the CIDR parsers never panic and return masked-able
// prefixes of valid length.
func FuzzParseRoute(f *testing.F) {
	for _, s := range []string{"1.2.3.4", "1.2.3.4/24", "1.2.3.4/255.255.0.0", "::1/128", "fe80::/ffff:ffff::", " 1. 2.3.4", "+1.2.3.4/-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if p, _, ok := parseRoute(s); ok {
			if !p.IsValid() || p.Bits() < 0 {
				t.Fatalf("parseRoute(%q) = %v", s, p)
			}
			_ = normalize(p)
		}
		_, _ = parseMark(s)
	})
}
