package tnl

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/gvs-project/gvs/datapath/packet"
)

// greFrame pushes ovsHeaderTexts[i] onto the UDP inner frame with
// sequence number seq.
func greFrame(t testing.TB, i int, seq uint32) (*Header, []byte) {
	t.Helper()
	h, _, err := ParseHeader(ovsHeaderTexts[i])
	if err != nil {
		t.Fatal(err)
	}
	p := packet.FromBytes(mustHex(t, oracleInner[1].hex))
	if err := PushSeq(p, &h, seq); err != nil {
		t.Fatal(err)
	}
	return &h, append([]byte{}, p.Data()...)
}

func TestGREPushThenPopGivesBackThePacket(t *testing.T) {
	csumKeySeq := len(ovsHeaderTexts)
	texts := append(append([]string{}, ovsHeaderTexts...),
		// csum, key and seq together: the checksum must cover the
		// sequence number.
		`header(size=50,type=3,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=47,tos=0x10,ttl=7,frag=0x4000),gre((flags=0xb000,proto=0x6558),csum=0x0,key=0xfedcba98,seq=0x0))`)
	for i, text := range texts {
		h, _, err := ParseHeader(text)
		if err != nil {
			t.Fatal(err)
		}
		if !h.Type.IsGRE() {
			continue
		}
		for _, in := range oracleInner {
			raw := mustHex(t, in.hex)
			p := packet.FromBytes(raw)
			p.Md.InPort, p.Md.RecircID = 9, 3
			if err := PushSeq(p, &h, 0x01020304); err != nil {
				t.Fatal(err)
			}
			b := h.Bytes()
			iplen := h.ipLen()
			g := p.Data()[ethLen+iplen:]
			flags := binary.BigEndian.Uint16(g)
			if flags&greSeq != 0 {
				if got := binary.BigEndian.Uint32(g[greHeaderLen(flags)-4:]); got != 0x01020304 {
					t.Errorf("header %d/%s: sequence number %#x, want 0x01020304", i, in.name, got)
				}
			}
			if p.L3 != ethLen || int(p.L4) != ethLen+iplen {
				t.Errorf("header %d/%s: offsets L3 %d L4 %d", i, in.name, p.L3, p.L4)
			}
			if !Pop(p, TypeGRE) {
				t.Fatalf("header %d/%s: Pop refused the pushed frame", i, in.name)
			}
			if !bytes.Equal(p.Data(), raw) {
				t.Errorf("header %d/%s: inner frame changed:\n got %x\nwant %x", i, in.name, p.Data(), raw)
			}
			var want packet.Tunnel
			o := greBaseLen
			if flags&greCsum != 0 {
				want.Flags |= packet.TunFlagCsum
				o += 4
			}
			if flags&greKey != 0 {
				want.Flags |= packet.TunFlagKey
				want.ID = uint64(binary.BigEndian.Uint32(b[ethLen+iplen+o:]))
			}
			if h.IPv6() {
				copy(want.IPv6Src[:], b[22:38])
				copy(want.IPv6Dst[:], b[38:54])
				want.Tos, want.TTL = uint8(binary.BigEndian.Uint32(b[14:])>>20), b[21]
			} else {
				want.Src, want.Dst = binary.BigEndian.Uint32(b[26:]), binary.BigEndian.Uint32(b[30:])
				want.Tos, want.TTL = b[15], b[22]
			}
			if p.Md != (packet.Metadata{Tunnel: want}) {
				t.Errorf("header %d/%s: metadata\n got %+v\nwant %+v", i, in.name, p.Md, packet.Metadata{Tunnel: want})
			}
			if i == csumKeySeq && want.ID != 0xfedcba98 {
				t.Errorf("32-bit key: tun_id %#x", want.ID)
			}
		}
	}
}

func TestPushWithoutSeqLeavesTheTemplatesZero(t *testing.T) {
	h, _, err := ParseHeader(ovsHeaderTexts[11]) // key and seq
	if err != nil {
		t.Fatal(err)
	}
	p := packet.FromBytes(mustHex(t, oracleInner[0].hex))
	if err := Push(p, &h); err != nil {
		t.Fatal(err)
	}
	if seq := binary.BigEndian.Uint32(p.Data()[ethLen+ipv4Len+8:]); seq != 0 {
		t.Errorf("Push wrote sequence number %#x", seq)
	}
	if h2, _, _ := ParseHeader(ovsHeaderTexts[10]); h2.HasSeq() {
		t.Error("HasSeq() = true without the S flag")
	}
	if h3, _, _ := ParseHeader(ovsHeaderTexts[0]); h3.HasSeq() {
		t.Error("HasSeq() = true for Geneve")
	}
}

func TestPopGRERefusesWhatOpenVSwitchRefuses(t *testing.T) {
	_, keyed := greFrame(t, 13, 0) // IPv4, csum and key
	_, plain := greFrame(t, 12, 0) // IPv4, no options
	_, v6 := greFrame(t, 16, 0)    // IPv6, csum and key
	const g = ethLen + ipv4Len     // GRE header offset over IPv4
	ipcsum := func(b []byte) {
		binary.BigEndian.PutUint16(b[24:], 0)
		binary.BigEndian.PutUint16(b[24:], packet.Checksum(b[14:34]))
	}
	for _, c := range []struct {
		name  string
		frame []byte
		edit  func(b []byte) []byte
	}{
		{"routing flag", plain, func(b []byte) []byte { b[g] = 0x40; return b }},
		{"strict source route flag", plain, func(b []byte) []byte { b[g] = 0x08; return b }},
		{"gre version 1", plain, func(b []byte) []byte { b[g+1] = 0x01; return b }},
		{"acknowledgment flag", plain, func(b []byte) []byte { b[g+1] = 0x80; return b }},
		{"ipv4 payload", plain, func(b []byte) []byte { b[g+2], b[g+3] = 0x08, 0x00; return b }},
		{"length below 0x600", plain, func(b []byte) []byte { b[g+2], b[g+3] = 0x05, 0xff; return b }},
		{"bad gre checksum", keyed, func(b []byte) []byte { b[g+5] ^= 1; return b }},
		{"payload changed under checksum", keyed, func(b []byte) []byte { b[len(b)-1] ^= 0x40; return b }},
		{"bad gre checksum over ipv6", v6, func(b []byte) []byte { b[len(b)-1] ^= 0x40; return b }},
		{"not gre", plain, func(b []byte) []byte { b[23] = 17; ipcsum(b); return b }},
		{"ipv6 not gre", v6, func(b []byte) []byte { b[20] = 17; return b }},
		{"key past the packet", plain, func(b []byte) []byte {
			b = b[:g+6]
			b[g] = 0x20
			binary.BigEndian.PutUint16(b[16:], ipv4Len+6)
			ipcsum(b)
			return b
		}},
		{"truncated base header", plain, func(b []byte) []byte {
			b = b[:g+3]
			binary.BigEndian.PutUint16(b[16:], ipv4Len+3)
			ipcsum(b)
			return b
		}},
		{"ip truncated", keyed, func(b []byte) []byte { return b[:len(b)-1] }},
		{"fragment", plain, func(b []byte) []byte { b[20] = 0x20; ipcsum(b); return b }},
	} {
		b := c.edit(append([]byte{}, c.frame...))
		p := packet.FromBytes(b)
		before := p.Md
		if Pop(p, TypeGRE) {
			t.Errorf("%s: Pop accepted the frame", c.name)
			continue
		}
		if !bytes.Equal(p.Data(), b) || p.Md != before {
			t.Errorf("%s: a refused packet was changed", c.name)
		}
	}
}

func TestPopTakesGREOverEitherFamilyForEitherType(t *testing.T) {
	// Open vSwitch's gre_sys and ip6gre_sys both decapsulate with
	// netdev_gre_pop_header, whatever the outer family.
	for _, i := range []int{10, 15} {
		for _, typ := range []Type{TypeGRE, TypeIP6GRE} {
			_, f := greFrame(t, i, 0)
			p := packet.FromBytes(f)
			if !Pop(p, typ) || p.Md.Tunnel.ID != 0x1c8 || p.Md.Tunnel.Flags != packet.TunFlagKey {
				t.Errorf("header %d as %v: tunnel %+v", i, typ, p.Md.Tunnel)
			}
		}
	}
}

func TestPopIgnoresEthernetPaddingInGREChecksum(t *testing.T) {
	h, f := greFrame(t, 13, 0)
	// A short outer frame padded by the sender: the checksum and the
	// inner frame end where the IP packet does.
	padded := append(append([]byte{}, f...), 0xaa, 0xbb, 0xcc)
	p := packet.FromBytes(padded)
	if !Pop(p, h.Type) {
		t.Fatal("Pop refused a padded frame")
	}
	if !bytes.Equal(p.Data(), mustHex(t, oracleInner[1].hex)) {
		t.Errorf("inner frame %x", p.Data())
	}
}

func TestGREPushAndPopDoNotAllocate(t *testing.T) {
	h, _, err := ParseHeader(ovsHeaderTexts[13])
	if err != nil {
		t.Fatal(err)
	}
	raw := mustHex(t, oracleInner[0].hex)
	p := packet.FromBytes(raw)
	seq := uint32(0)
	n := testing.AllocsPerRun(200, func() {
		p.SetData(raw)
		seq++
		if err := PushSeq(p, &h, seq); err != nil {
			t.Fatal(err)
		}
		if !Pop(p, TypeGRE) {
			t.Fatal("pop failed")
		}
	})
	if n != 0 {
		t.Errorf("GRE Push+Pop allocate %v times per packet", n)
	}
}

func BenchmarkGRE(b *testing.B) {
	for _, c := range []struct {
		name string
		i    int
	}{{"gre4-key", 10}, {"gre4-csum-key", 13}, {"ip6gre-key", 15}} {
		h, _, err := ParseHeader(ovsHeaderTexts[c.i])
		if err != nil {
			b.Fatal(err)
		}
		raw := mustHex(b, oracleInner[0].hex)
		b.Run("push/"+c.name, func(b *testing.B) {
			p := packet.FromBytes(raw)
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				p.SetData(raw)
				_ = Push(p, &h)
			}
		})
		b.Run("pop/"+c.name, func(b *testing.B) {
			p := packet.FromBytes(raw)
			_ = Push(p, &h)
			frame := append([]byte{}, p.Data()...)
			b.ReportAllocs()
			b.SetBytes(int64(len(frame)))
			for b.Loop() {
				p.SetData(frame)
				if !Pop(p, TypeGRE) {
					b.Fatal("pop failed")
				}
			}
		})
	}
}
