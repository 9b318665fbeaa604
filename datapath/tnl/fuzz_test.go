package tnl

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/gvs-project/gvs/datapath/packet"
)

// FuzzPop feeds arbitrary frames to Pop: it must never panic, must leave
// a refused frame unchanged, and an accepted frame's inner bytes must be
// a suffix of what came in.
func FuzzPop(f *testing.F) {
	f.Add(mustHex(f, ovsGeneveFrame), uint8(TypeGeneve))
	f.Add(mustHex(f, ovsVXLANFrame), uint8(TypeVXLAN))
	for _, c := range oraclePushCases {
		h, _, err := ParseHeader(c.header)
		if err != nil {
			f.Fatal(err)
		}
		p := packet.FromBytes(mustHex(f, oracleInner[1].hex))
		if err := Push(p, &h); err != nil {
			f.Fatal(err)
		}
		f.Add(append([]byte{}, p.Data()...), uint8(h.Type))
	}
	f.Fuzz(func(t *testing.T, frame []byte, typ uint8) {
		p := packet.FromBytes(frame)
		in := append([]byte{}, p.Data()...)
		if !Pop(p, Type(typ)) {
			if !bytes.Equal(p.Data(), in) {
				t.Fatal("refused frame changed")
			}
			return
		}
		if !bytes.Contains(in, p.Data()) || p.Md.Tunnel.MetaPresent > packet.TunMetaBytes || !p.Md.Tunnel.Valid() {
			t.Fatalf("accepted frame: inner %x tunnel %+v", p.Data(), p.Md.Tunnel)
		}
	})
}

// FuzzParseHeader checks that ParseHeader never panics and that what it
// accepts prints back to text that parses to the same header.
func FuzzParseHeader(f *testing.F) {
	for _, s := range ovsHeaderTexts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, n, err := ParseHeader(s)
		if err != nil {
			return
		}
		if n > len(s) {
			t.Fatalf("consumed %d of %d bytes", n, len(s))
		}
		text := AppendHeaderText(nil, &h)
		h2, _, err := ParseHeader(string(text))
		if err != nil {
			t.Fatalf("reparse of %s: %v", text, err)
		}
		if h2 != h {
			t.Fatalf("round trip changed the header:\n%s\n%x\n%x", text, h.Bytes(), h2.Bytes())
		}
		_ = hex.EncodeToString(h.Bytes())
	})
}

// FuzzHeaderText prints arbitrary header bytes: it must never panic.
func FuzzHeaderText(f *testing.F) {
	for _, s := range ovsHeaderTexts {
		h, _, _ := ParseHeader(s)
		f.Add(h.Bytes(), uint8(h.Type))
	}
	f.Fuzz(func(t *testing.T, b []byte, typ uint8) {
		var h Header
		h.Type = Type(typ)
		h.Len = uint16(copy(h.Data[:], b))
		_ = AppendHeaderText(nil, &h)
	})
}

// FuzzPush pushes arbitrary header bytes onto arbitrary frames: it must
// never panic, and a successful push must leave the frame after the
// header unchanged.
func FuzzPush(f *testing.F) {
	for _, s := range ovsHeaderTexts {
		h, _, _ := ParseHeader(s)
		f.Add(h.Bytes(), uint8(h.Type), mustHex(f, oracleInner[0].hex))
	}
	f.Fuzz(func(t *testing.T, hb []byte, typ uint8, frame []byte) {
		var h Header
		h.Type = Type(typ)
		h.Len = uint16(copy(h.Data[:], hb))
		p := packet.FromBytes(frame)
		in := append([]byte{}, p.Data()...)
		if err := PushSeq(p, &h, 7); err != nil {
			return
		}
		if !bytes.Equal(p.Data()[h.Len:], in) {
			t.Fatal("inner frame changed")
		}
	})
}
