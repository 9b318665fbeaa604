package mcsnoop

import (
	"net/netip"
	"testing"
)

func FuzzDecode(f *testing.F) {
	f.Add([]byte{0x11, 0x64, 0xec, 0x1e, 0, 0, 0, 0, 2, 0x7d, 0, 0})
	f.Add([]byte{0x22, 0, 0, 0, 0, 0, 0, 2, 4, 0, 0, 0, 239, 1, 1, 1, 3, 0, 0, 0, 239, 1, 1, 2})
	f.Add([]byte{0x8f, 0, 0, 0, 0, 0, 0, 1, 4, 0, 0, 0, 0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		tb := New(DefaultConfig())
		if m, err := DecodeIGMP(netip.MustParseAddr("10.0.0.1"), b); err == nil {
			tb.Apply(m, 1, "p1", 0)
		}
		// Fix the checksum so that record walking is reached too.
		if len(b) >= 8 {
			b[2], b[3] = 0, 0
			c := checksum(b, 0)
			b[2], b[3] = byte(c>>8), byte(c)
			if m, err := DecodeIGMP(netip.MustParseAddr("10.0.0.1"), b); err == nil {
				tb.Apply(m, 1, "p1", 0)
			}
		}
		if m, err := DecodeMLD(netip.MustParseAddr("fe80::1"), netip.MustParseAddr("ff02::16"), b); err == nil {
			tb.Apply(m, 1, "p2", 0)
		}
		tb.Run(1 << 40)
		_ = tb.Show(0, func(p PortID) string { return p })
	})
}
