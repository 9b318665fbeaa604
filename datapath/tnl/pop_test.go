package tnl

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/packet"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Frames Open vSwitch's tests/tunnel-push-pop.at receives on its tunnel
// ports: Geneve with two options (tun_metadata0=0xa) and VXLAN.
const (
	ovsGeneveFrame = "aa55aa550000001b213cab64080045000096794640004011ba5b0101025c01010258308817c1008200000400655800007b00ffff80010000000affff00010000000bfe71d883724fbeb6f4e1494a080045000054ba200000400184861e0000011e00000200004227e75400030af3195500000000f265010000000000101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f3031323334353637"
	ovsVXLANFrame  = "aa55aa550000f8bc1244cafe08004500004e00010000401173e90101025c01010258c85312b5003a8cd40c00000300007b00ffffffffffff00000000000008004500001c0001000040117cce7f0000017f0000010035003500080172"
)

func TestPopGeneveFillsTunnelMetadataAsOpenVSwitch(t *testing.T) {
	raw := mustHex(t, ovsGeneveFrame)
	p := packet.FromBytes(raw)
	p.Md.Tunnel.Meta[60] = 0xee // stale bytes must not survive
	p.Md.RecircID, p.Md.PktMark, p.Md.CtState, p.Md.InPort = 7, 3, 0x21, 1
	if !Pop(p, TypeGeneve) {
		t.Fatal("Pop refused a valid Geneve frame")
	}
	if want := raw[14+20+8+8+16:]; !bytes.Equal(p.Data(), want) {
		t.Errorf("inner frame:\n got %x\nwant %x", p.Data(), want)
	}
	want := packet.Tunnel{
		ID: 0x7b, Src: 0x0101025c, Dst: 0x01010258, TTL: 64, TpSrc: 0x3088, TpDst: 6081,
		Flags:       packet.TunFlagKey | flow.TunFlagUDPIF,
		MetaPresent: 16,
	}
	copy(want.Meta[:], mustHex(t, "ffff80010000000affff00010000000b"))
	if p.Md != (packet.Metadata{Tunnel: want}) {
		t.Errorf("metadata:\n got %+v\nwant %+v", p.Md, packet.Metadata{Tunnel: want})
	}
	if p.L3 != packet.OffsetUnset || p.L4 != packet.OffsetUnset {
		t.Errorf("offsets not reset: L3=%d L4=%d", p.L3, p.L4)
	}
	// The flow key prints it as Open vSwitch prints the upcall's key.
	var k flow.Key
	flow.Extract(p, &k)
	if got, want := k.TunID, uint64(0x7b); got != want {
		t.Errorf("key tun_id %#x, want %#x", got, want)
	}
}

func TestPopVXLANSetsKeyAndChecksumFlags(t *testing.T) {
	raw := mustHex(t, ovsVXLANFrame)
	p := packet.FromBytes(raw)
	if !Pop(p, TypeVXLAN) {
		t.Fatal("Pop refused a valid VXLAN frame")
	}
	if want := raw[14+20+8+8:]; !bytes.Equal(p.Data(), want) {
		t.Errorf("inner frame:\n got %x\nwant %x", p.Data(), want)
	}
	want := packet.Tunnel{ID: 0x7b, Src: 0x0101025c, Dst: 0x01010258, TTL: 64, TpSrc: 0xc853, TpDst: 4789,
		Flags: packet.TunFlagKey | packet.TunFlagCsum}
	if p.Md.Tunnel != want {
		t.Errorf("tunnel metadata:\n got %+v\nwant %+v", p.Md.Tunnel, want)
	}
}

// TestPushThenPopGivesBackThePacket pushes every oracle header and pops
// it again: the inner frame comes back byte for byte with the tunnel
// metadata the header describes.
func TestPushThenPopGivesBackThePacket(t *testing.T) {
	for _, c := range oraclePushCases {
		h, _, err := ParseHeader(c.header)
		if err != nil {
			t.Fatal(err)
		}
		if h.Type.IsGRE() {
			continue // TestGREPushThenPopGivesBackThePacket
		}
		for _, in := range oracleInner {
			raw := mustHex(t, in.hex)
			p := packet.FromBytes(raw)
			if err := Push(p, &h); err != nil {
				t.Fatal(err)
			}
			sport := binary.BigEndian.Uint16(p.Data()[14+h.ipLen():])
			if !Pop(p, h.Type) {
				t.Fatalf("%s/%s: Pop refused the pushed frame", c.name, in.name)
			}
			if !bytes.Equal(p.Data(), raw) {
				t.Errorf("%s/%s: inner frame changed:\n got %x\nwant %x", c.name, in.name, p.Data(), raw)
			}
			got := p.Md.Tunnel
			b := h.Bytes()
			want := packet.Tunnel{TpSrc: sport, Flags: packet.TunFlagKey}
			udp := b[14+h.ipLen():]
			want.TpDst = binary.BigEndian.Uint16(udp[2:])
			want.ID = uint64(binary.BigEndian.Uint32(udp[12:]) >> 8)
			if binary.BigEndian.Uint16(udp[6:]) != 0 {
				want.Flags |= packet.TunFlagCsum
			}
			if h.IPv6() {
				copy(want.IPv6Src[:], b[22:38])
				copy(want.IPv6Dst[:], b[38:54])
				want.Tos, want.TTL = uint8(binary.BigEndian.Uint32(b[14:])>>20), b[21]
			} else {
				want.Src, want.Dst = binary.BigEndian.Uint32(b[26:]), binary.BigEndian.Uint32(b[30:])
				want.Tos, want.TTL = b[15], b[22]
			}
			if h.Type == TypeGeneve {
				want.Flags |= flow.TunFlagUDPIF
				if udp[9]&0x80 != 0 {
					want.Flags |= packet.TunFlagOAM
				}
				opts := udp[16:]
				want.MetaPresent = uint64(copy(want.Meta[:], opts))
			}
			if got != want {
				t.Errorf("%s/%s: tunnel metadata:\n got %+v\nwant %+v", c.name, in.name, got, want)
			}
		}
	}
}

func TestPopRefusesWhatOpenVSwitchRefuses(t *testing.T) {
	geneve := mustHex(t, ovsGeneveFrame)
	vxlan := mustHex(t, ovsVXLANFrame)
	ipcsum := func(b []byte) {
		binary.BigEndian.PutUint16(b[24:], 0)
		binary.BigEndian.PutUint16(b[24:], packet.Checksum(b[14:34]))
	}
	for _, c := range []struct {
		name  string
		frame []byte
		typ   Type
		edit  func(b []byte) []byte
	}{
		{"wrong tunnel type", geneve, TypeVXLAN, nil},
		{"unknown type", geneve, 105, nil},
		{"udp tunnel as gre", geneve, TypeGRE, nil},
		{"bad ip checksum", geneve, TypeGeneve, func(b []byte) []byte { b[24] ^= 1; return b }},
		{"ip options", geneve, TypeGeneve, func(b []byte) []byte { b[14] = 0x46; ipcsum(b); return b }},
		{"ip version", geneve, TypeGeneve, func(b []byte) []byte { b[14] = 0x55; ipcsum(b); return b }},
		{"ip truncated", geneve, TypeGeneve, func(b []byte) []byte { return b[:len(b)-1] }},
		{"first fragment", geneve, TypeGeneve, func(b []byte) []byte { b[20] = 0x20; ipcsum(b); return b }},
		{"later fragment", geneve, TypeGeneve, func(b []byte) []byte { b[20], b[21] = 0, 8; ipcsum(b); return b }},
		{"not udp", geneve, TypeGeneve, func(b []byte) []byte { b[23] = 6; ipcsum(b); return b }},
		{"vlan tagged", geneve, TypeGeneve, func(b []byte) []byte {
			return append(append(append([]byte{}, b[:12]...), 0x81, 0, 0, 5), b[12:]...)
		}},
		{"geneve version 1", geneve, TypeGeneve, func(b []byte) []byte { b[42] |= 0x40; return b }},
		{"geneve not ethernet", geneve, TypeGeneve, func(b []byte) []byte { b[44], b[45] = 0x08, 0; return b }},
		{"geneve options past end", geneve, TypeGeneve, func(b []byte) []byte { b[42] = 0x3f; return b }},
		{"bad udp checksum", vxlan, TypeVXLAN, func(b []byte) []byte { b[40] ^= 1; return b }},
		{"vxlan flags", vxlan, TypeVXLAN, func(b []byte) []byte { b[42] = 0x88; binary.BigEndian.PutUint16(b[40:], 0); return b }},
		{"vxlan reserved vni byte", vxlan, TypeVXLAN, func(b []byte) []byte { b[49] = 1; binary.BigEndian.PutUint16(b[40:], 0); return b }},
		{"vxlan-gpe oam", vxlan, TypeVXLAN, func(b []byte) []byte { b[42] |= 0x01; binary.BigEndian.PutUint16(b[40:], 0); return b }},
		{"vxlan-gpe ipv4 payload", vxlan, TypeVXLAN, func(b []byte) []byte { b[45] = 1; binary.BigEndian.PutUint16(b[40:], 0); return b }},
		{"too short for vxlan", vxlan, TypeVXLAN, func(b []byte) []byte {
			b = b[:14+20+8+7]
			binary.BigEndian.PutUint16(b[16:], 20+8+7)
			binary.BigEndian.PutUint16(b[40:], 0)
			ipcsum(b)
			return b
		}},
		{"short frame", geneve[:13], TypeGeneve, nil},
	} {
		b := append([]byte{}, c.frame...)
		if c.edit != nil {
			b = c.edit(b)
		}
		p := packet.FromBytes(b)
		before := p.Md
		if Pop(p, c.typ) {
			t.Errorf("%s: Pop accepted the frame", c.name)
			continue
		}
		if !bytes.Equal(p.Data(), b) || p.Md != before {
			t.Errorf("%s: a refused packet was changed", c.name)
		}
	}
}

func TestPopAcceptsZeroUDPChecksumOverIPv6(t *testing.T) {
	h, _, err := ParseHeader(ovsHeaderTexts[9]) // IPv6, csum=0x0
	if err != nil {
		t.Fatal(err)
	}
	p := packet.FromBytes(mustHex(t, oracleInner[1].hex))
	if err := Push(p, &h); err != nil {
		t.Fatal(err)
	}
	if !Pop(p, TypeGeneve) || p.Md.Tunnel.Flags&packet.TunFlagCsum != 0 {
		t.Fatalf("Pop = %v, flags %#x; want accepted without csum", p.Md.Tunnel.Valid(), p.Md.Tunnel.Flags)
	}
}

func TestPushWithoutHeadroomMovesTheFrame(t *testing.T) {
	h, _, err := ParseHeader(ovsHeaderTexts[7])
	if err != nil {
		t.Fatal(err)
	}
	raw := mustHex(t, oracleInner[0].hex)
	a := packet.FromBytes(raw)
	// A packet whose data starts near the buffer start.
	c := packet.FromBytes(raw)
	d, err := c.Push(c.HeadroomLen() - 10)
	if err != nil {
		t.Fatal(err)
	}
	copy(d[:cap(d)], raw)
	c.Truncate(len(raw))
	if !bytes.Equal(c.Data(), raw) {
		t.Fatal("test set-up: frame not moved")
	}
	if c.HeadroomLen() >= int(h.Len) {
		t.Fatalf("test set-up: headroom %d", c.HeadroomLen())
	}
	if err := Push(a, &h); err != nil {
		t.Fatal(err)
	}
	if err := Push(c, &h); err != nil {
		t.Fatalf("Push without headroom: %v", err)
	}
	if !bytes.Equal(a.Data(), c.Data()) {
		t.Errorf("frames differ:\n%x\n%x", a.Data(), c.Data())
	}
}

func TestSourcePortCoversOpenVSwitchRange(t *testing.T) {
	for _, c := range []struct {
		hash uint32
		want uint16
	}{{0, 32768}, {0xffffffff, 60999}, {0x80000000, 46884}} {
		if got := SourcePort(c.hash); got != c.want {
			t.Errorf("SourcePort(%#x) = %d, want %d", c.hash, got, c.want)
		}
	}
}

func TestPushAndPopDoNotAllocate(t *testing.T) {
	h, _, err := ParseHeader(ovsHeaderTexts[4])
	if err != nil {
		t.Fatal(err)
	}
	raw := mustHex(t, oracleInner[0].hex)
	p := packet.FromBytes(raw)
	n := testing.AllocsPerRun(200, func() {
		p.SetData(raw)
		p.RSSHash = 0
		if err := Push(p, &h); err != nil {
			t.Fatal(err)
		}
		if !Pop(p, TypeGeneve) {
			t.Fatal("pop failed")
		}
	})
	if n != 0 {
		t.Errorf("Push+Pop allocate %v times per packet", n)
	}
}

func BenchmarkPush(b *testing.B) {
	for _, c := range []struct {
		name string
		text string
	}{{"geneve4", ovsHeaderTexts[0]}, {"geneve4-opts-csum", ovsHeaderTexts[8]}, {"vxlan6", ovsHeaderTexts[5]}} {
		b.Run(c.name, func(b *testing.B) {
			h, _, err := ParseHeader(c.text)
			if err != nil {
				b.Fatal(err)
			}
			raw := mustHex(b, oracleInner[0].hex)
			p := packet.FromBytes(raw)
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				p.SetData(raw)
				p.RSSHash = 0x12345678 // as a port with RSS gives
				_ = Push(p, &h)
			}
		})
	}
	b.Run("geneve4-hash", func(b *testing.B) {
		h, _, _ := ParseHeader(ovsHeaderTexts[0])
		raw := mustHex(b, oracleInner[0].hex)
		p := packet.FromBytes(raw)
		b.ReportAllocs()
		for b.Loop() {
			p.SetData(raw)
			p.RSSHash = 0 // no RSS: the 5-tuple hash is computed
			_ = Push(p, &h)
		}
	})
}

func BenchmarkPop(b *testing.B) {
	for _, c := range []struct {
		name  string
		frame string
		typ   Type
	}{{"geneve4-opts", ovsGeneveFrame, TypeGeneve}, {"vxlan4-csum", ovsVXLANFrame, TypeVXLAN}} {
		b.Run(c.name, func(b *testing.B) {
			raw := mustHex(b, c.frame)
			p := packet.FromBytes(raw)
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				p.SetData(raw)
				if !Pop(p, c.typ) {
					b.Fatal("pop failed")
				}
			}
		})
	}
}
