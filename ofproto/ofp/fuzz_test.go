package ofp_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// FuzzDecodeMessage: no input panics; every failure carries an OpenFlow
// error code; whatever decodes re-encodes to bytes that decode again and
// re-encode identically (decode -> encode -> decode -> encode is stable).
func FuzzDecodeMessage(f *testing.F) {
	for _, c := range readCaptures(f) {
		f.Add(c.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ofp.Decode(data)
		if err != nil {
			if ofp.CodeOf(err) == 0 {
				t.Fatalf("error without OpenFlow code: %v", err)
			}
			return
		}
		out, err := ofp.EncodeMsg(nil, m)
		if err != nil {
			return // some decoded values have no encoding (reported, not a crash)
		}
		m2, err := ofp.Decode(out)
		if err != nil {
			t.Fatalf("re-encoded %s does not decode: %v\nin  %x\nout %x", m.Raw, err, data, out)
		}
		out2, err := ofp.EncodeMsg(nil, m2)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("%s not stable: %v\n1 %x\n2 %x", m.Raw, err, out, out2)
		}
	})
}

// FuzzDecodeMatch exercises the NXM/OXM match codec alone.
func FuzzDecodeMatch(f *testing.F) {
	for _, c := range readCaptures(f) {
		m, err := ofp.Decode(c.data)
		if err != nil {
			continue
		}
		if fm, ok := m.Body.(*ofp.FlowMod); ok && fm.Format != ofp.FormatOF10 {
			v := m.Version
			if fm.Format == ofp.FormatNXM {
				v = 0
			}
			f.Add(v, ofp.AppendNXM(nil, v, &fm.Match, 0, 0))
		}
	}
	f.Fuzz(func(t *testing.T, version uint8, p []byte) {
		version %= 7
		var m mf.Match
		if err := ofp.DecodeNXM(p, true, &m, nil); err != nil {
			if ofp.CodeOf(err) == 0 {
				t.Fatalf("error without OpenFlow code: %v", err)
			}
			return
		}
		out := ofp.AppendNXM(nil, version, &m, 0, 0)
		var m2 mf.Match
		if err := ofp.DecodeNXM(out, true, &m2, nil); err != nil {
			if version != 0 && ofp.CodeOf(err) == ofp.OFPBMC_BAD_PREREQ {
				return // NXM vlan_tci without CFI has no OXM form (as in Open vSwitch)
			}
			t.Fatalf("re-encoded match does not decode: %v\nin  %x\nout %x", err, p, out)
		}
		if out2 := ofp.AppendNXM(nil, version, &m2, 0, 0); !bytes.Equal(out, out2) {
			t.Fatalf("match not stable\n1 %x\n2 %x", out, out2)
		}
	})
}

func ovnFlowMod(tb testing.TB) []byte {
	for _, c := range readCaptures(tb) {
		if c.name == "of15_add_flow_ovn" && c.sent && c.data[1] == 14 {
			return c.data
		}
	}
	tb.Fatal("no OVN flow mod capture")
	return nil
}

// BenchmarkFlowModDecodeEncode decodes and re-encodes a typical OVN flow
// mod (OF1.5, metadata + registers + ct_state + ct_label + ip match).
func BenchmarkFlowModDecodeEncode(b *testing.B) {
	msg := ovnFlowMod(b)
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		m, err := ofp.Decode(msg)
		if err != nil {
			b.Fatal(err)
		}
		if buf, err = ofp.EncodeMsg(buf[:0], m); err != nil {
			b.Fatal(err)
		}
	}
	if !bytes.Equal(buf, msg) {
		b.Fatal("round trip differs")
	}
}

// BenchmarkMatchDecodeEncode is the OXM match alone.
func BenchmarkMatchDecodeEncode(b *testing.B) {
	msg := ovnFlowMod(b)
	n := int(binary.BigEndian.Uint16(msg[48+2:]))
	oxm := msg[48+4 : 48+n]
	var m mf.Match
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		if err := ofp.DecodeNXM(oxm, true, &m, nil); err != nil {
			b.Fatal(err)
		}
		buf = ofp.AppendNXM(buf[:0], mf.OF15, &m, 0, 0)
	}
	if !bytes.Equal(buf, oxm) {
		b.Fatalf("round trip differs\n got %x\nwant %x", buf, oxm)
	}
}

func TestMatchCodecDoesNotAllocate(t *testing.T) {
	msg := ovnFlowMod(t)
	n := int(binary.BigEndian.Uint16(msg[48+2:]))
	oxm := msg[48+4 : 48+n]
	var m mf.Match
	buf := make([]byte, 0, 256)
	allocs := testing.AllocsPerRun(100, func() {
		if err := ofp.DecodeNXM(oxm, true, &m, nil); err != nil {
			t.Fatal(err)
		}
		buf = ofp.AppendNXM(buf[:0], mf.OF15, &m, 0, 0)
	})
	if allocs != 0 {
		t.Errorf("match decode+encode allocates %.1f times", allocs)
	}
}
