package tnlneigh

import (
	"context"
	"net/netip"
	"testing"
)

// FuzzCommands feeds arbitrary arguments to tnl/neigh/set and aging: no
// panic, and a successful set is visible to Lookup.
func FuzzCommands(f *testing.F) {
	for _, s := range [][3]string{
		{"br0", "1.1.2.92", "f8:bc:12:44:34:b6"}, {"br0", "2001:cafe::92", "1ff:-1:+2:0x3:0X4:a"},
		{"a-very-long-bridge-name", "::ffff:1.2.3.4", "0:0:0:0:0:1"}, {"", "", ""}, {"br0", "fe80::1%eth0", "x"},
	} {
		f.Add(s[0], s[1], s[2], "900")
	}
	f.Add("br0", "1.1.1.1", "00:00:00:00:00:01", "-1")
	f.Fuzz(func(t *testing.T, br, ip, mac, aging string) {
		c := New()
		for _, cmd := range c.Commands() {
			switch cmd.Name {
			case "tnl/neigh/aging", "tnl/neigh/retrans_time":
				_, _ = cmd.Run(context.Background(), []string{aging})
			case "tnl/neigh/set":
				if _, err := cmd.Run(context.Background(), []string{br, ip, mac}); err == nil {
					a, _ := netip.ParseAddr(ip)
					want, _ := parseMAC(mac)
					if got, ok := c.Lookup(br, a); !ok || got != want {
						t.Fatalf("set %q %q %q then Lookup = %x, %v", br, ip, mac, got, ok)
					}
				}
			}
		}
		_ = c.Show()
	})
}

// FuzzSnoop checks Snoop never panics and learns only what it reports.
func FuzzSnoop(f *testing.F) {
	f.Add(uint16(0x0806), uint8(2), uint32(0x0101025c), uint32(0x01010258), []byte{0xf8, 0xbc, 0x12, 0x44, 0x34, 0xb6}, uint16(0), uint16(0), []byte{}, []byte{})
	f.Add(uint16(0x86dd), uint8(58), uint32(0), uint32(0), []byte{}, uint16(136), uint16(0), []byte{0x20, 0x01, 0xca, 0xfe, 15: 0x92}, []byte{1, 2, 3, 4, 5, 6})
	f.Fuzz(func(t *testing.T, et uint16, proto uint8, spa, tpa uint32, sha []byte, typ, code uint16, tgt, tll []byte) {
		fl := Fields{EthType: et, NwProto: proto, ArpSPA: spa, ArpTPA: tpa, ICMPType: typ, ICMPCode: code}
		copy(fl.ArpSHA[:], sha)
		copy(fl.NDTarget[:], tgt)
		copy(fl.NDTLL[:], tll)
		c := New()
		learned := c.Snoop("br0", &fl, true)
		if n := len(c.Entries()); (n == 1) != learned {
			t.Fatalf("Snoop = %v but %d entries", learned, n)
		}
	})
}
