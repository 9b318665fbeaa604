package afpacket

import (
	"encoding/binary"
	"testing"

	"github.com/gvs-project/gvs/datapath/packet"
)

// udp4 builds an Ethernet/IPv4/UDP frame whose checksum field holds junk,
// as an offloading stack leaves it.
func udp4(payload string, vlan bool) []byte {
	f := make([]byte, 14)
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	if vlan {
		f = append(f[:12], 0x81, 0x00, 0x00, 0x64, 0x08, 0x00)
	}
	ip := make([]byte, 20)
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(20+8+len(payload)))
	ip[8], ip[9] = 64, 17
	copy(ip[12:], []byte{10, 0, 0, 1, 10, 0, 0, 2})
	binary.BigEndian.PutUint16(ip[10:], packet.Checksum(ip))
	udp := make([]byte, 8)
	binary.BigEndian.PutUint16(udp[0:], 1234)
	binary.BigEndian.PutUint16(udp[2:], 9999)
	binary.BigEndian.PutUint16(udp[4:], uint16(8+len(payload)))
	binary.BigEndian.PutUint16(udp[6:], 0xdead)
	f = append(f, ip...)
	f = append(f, udp...)
	return append(f, payload...)
}

func tcp6() []byte {
	f := make([]byte, 14+40+20)
	binary.BigEndian.PutUint16(f[12:], 0x86dd)
	ip := f[14:]
	ip[0] = 0x60
	binary.BigEndian.PutUint16(ip[4:], 20)
	ip[6], ip[7] = 6, 64
	ip[8+15], ip[24+15] = 1, 2
	ip[40+12] = 5 << 4
	return f
}

func verifies(f []byte, l3off int, v6 bool) bool {
	ip := f[l3off:]
	if v6 {
		l4 := ip[40 : 40+int(binary.BigEndian.Uint16(ip[4:]))]
		return packet.Fold(packet.ChecksumPartial(l4, packet.PseudoHeaderIPv6(ip[8:24], ip[24:40], ip[6], len(l4)))) == 0
	}
	l4 := ip[int(ip[0]&0xf)*4 : binary.BigEndian.Uint16(ip[2:])]
	return packet.Fold(packet.ChecksumPartial(l4, packet.PseudoHeaderIPv4(binary.BigEndian.Uint32(ip[12:]), binary.BigEndian.Uint32(ip[16:]), ip[9], len(l4)))) == 0
}

func TestCompleteChecksum(t *testing.T) {
	cases := []struct {
		name  string
		f     []byte
		l3off int
		v6    bool
	}{
		{"udp4", udp4("hello", false), 14, false},
		{"udp4 odd length in vlan", udp4("abc", true), 18, false},
		{"tcp6", tcp6(), 14, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !completeChecksum(c.f) {
				t.Fatal("checksum not written")
			}
			if !verifies(c.f, c.l3off, c.v6) {
				t.Fatalf("checksum does not verify: %x", c.f)
			}
		})
	}
}

func TestCompleteChecksumLeavesOtherFramesAlone(t *testing.T) {
	frag := udp4("x", false)
	frag[14+6] = 0x20 // more fragments
	arp := make([]byte, 42)
	binary.BigEndian.PutUint16(arp[12:], 0x0806)
	short := udp4("x", false)[:14+20+4]
	for name, f := range map[string][]byte{"fragment": frag, "arp": arp, "truncated": short, "empty": nil} {
		before := append([]byte(nil), f...)
		if completeChecksum(f) || string(before) != string(f) {
			t.Errorf("%s: frame changed", name)
		}
	}
}

func FuzzCompleteChecksum(f *testing.F) {
	f.Add(udp4("hello", false))
	f.Add(udp4("abc", true))
	f.Add(tcp6())
	f.Fuzz(func(t *testing.T, b []byte) {
		if completeChecksum(b) {
			// What was written must verify.
			off := 14
			for et := binary.BigEndian.Uint16(b[12:]); et == 0x8100 || et == 0x88a8; et = binary.BigEndian.Uint16(b[off-2:]) {
				off += 4
			}
			if !verifies(b, off, b[off]>>4 == 6) {
				t.Fatalf("written checksum does not verify: %x", b)
			}
		}
	})
}
