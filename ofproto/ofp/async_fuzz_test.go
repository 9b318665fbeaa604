package ofp_test

import (
	"bytes"
	"testing"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// asyncSeeds are the recorded async/packet/session messages, gvs's own
// encodings of the hand-built ones and the malformed ones.
func asyncSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	for _, c := range readAsyncCaptures(tb) {
		if len(c.data) <= 2048 {
			seeds = append(seeds, c.data)
		}
	}
	for _, pc := range asyncPrintCases(tb) {
		b, err := ofp.Encode(nil, pc.v, 7, pc.msg)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	for _, m := range asyncMalformed(tb) {
		seeds = append(seeds, m.msg)
	}
	return seeds
}

// FuzzDecodeAsyncMessage: as FuzzDecodeMessage, seeded with packet-ins,
// packet-outs, flow-removeds, bundles, async config, role, TLV and
// conntrack messages: no input panics, every failure carries an OpenFlow
// error code, and whatever decodes re-encodes stably.
func FuzzDecodeAsyncMessage(f *testing.F) {
	for _, s := range asyncSeeds(f) {
		f.Add(s)
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
			return
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

// A recorded message cut short (header length adjusted) fails with a
// length error of some kind, or decodes and round-trips; it never panics.
func TestTruncatedAsyncCapturesFailWithLengthErrors(t *testing.T) {
	lengthErrs := map[ofp.ErrCode]bool{ofp.OFPBRC_BAD_LEN: true, ofp.OFPBMC_BAD_LEN: true, ofp.OFPBPC_BAD_LEN: true,
		ofp.OFPBFC_MSG_BAD_LEN: true}
	for _, c := range readAsyncCaptures(t) {
		if !asyncRaws[rawNameOf(c.data)] {
			continue
		}
		for n := 0; n < len(c.data); n++ {
			p := append([]byte(nil), c.data[:n]...)
			if n >= 4 {
				p[2], p[3] = byte(n>>8), byte(n)
			}
			m, err := ofp.Decode(p)
			if err != nil {
				if !lengthErrs[ofp.CodeOf(err)] {
					t.Fatalf("%s[:%d]: %v, want a length error", c.name, n, err)
				}
				continue
			}
			out, err := ofp.EncodeMsg(nil, m)
			if err != nil {
				t.Fatalf("%s[:%d] decoded but does not encode: %v", c.name, n, err)
			}
			if m2, err := ofp.Decode(out); err != nil {
				t.Fatalf("%s[:%d] re-encoded %x does not decode: %v", c.name, n, out, err)
			} else if out2, _ := ofp.EncodeMsg(nil, m2); !bytes.Equal(out, out2) {
				t.Fatalf("%s[:%d] not stable", c.name, n)
			}
		}
	}
}

// Decoding a packet-in or packet-out and encoding it again allocates a
// bounded number of times (the body copies), not per field.
func TestPacketInCodecAllocations(t *testing.T) {
	msg := asyncMsg(t, "of15_monitor_pin2", "NXT_PACKET_IN2", 0)
	raw, err := ofp.EncodeMsg(nil, msg)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 1024)
	allocs := testing.AllocsPerRun(100, func() {
		m, err := ofp.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		buf, _ = ofp.EncodeMsg(buf[:0], m)
	})
	// Msg, PacketIn, reader, data copy, userdata copy.
	if allocs > 6 {
		t.Errorf("packet-in2 decode+encode allocates %.0f times", allocs)
	}
}

func BenchmarkPacketIn2DecodeEncode(b *testing.B) {
	msg := asyncMsg(b, "of15_monitor_pin2", "NXT_PACKET_IN2", 0)
	raw, _ := ofp.EncodeMsg(nil, msg)
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		m, err := ofp.Decode(raw)
		if err != nil {
			b.Fatal(err)
		}
		buf, _ = ofp.EncodeMsg(buf[:0], m)
	}
}

func BenchmarkPacketOut15Decode(b *testing.B) {
	msg := asyncMsg(b, "of15_packet_out", "OFPT15_PACKET_OUT", 0)
	raw, _ := ofp.EncodeMsg(nil, msg)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ofp.Decode(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// Encoding a packet-in, the switch's per-packet message, into a reused
// buffer does not allocate, in any format.
func TestPacketInEncodeDoesNotAllocate(t *testing.T) {
	n := 0
	for _, name := range []string{"of10_monitor_std", "of10_monitor_nxt", "of15_monitor_pin2", "of13_monitor_std", "of13_monitor_resume"} {
		for _, c := range readAsyncCaptures(t) {
			if c.name != name || c.sent {
				continue
			}
			m, err := ofp.Decode(c.data)
			if err != nil {
				continue
			}
			if _, ok := m.Body.(*ofp.PacketIn); !ok {
				continue
			}
			buf := make([]byte, 0, 2048)
			allocs := testing.AllocsPerRun(100, func() {
				buf, _ = ofp.EncodeMsg(buf[:0], m)
			})
			if allocs != 0 {
				t.Errorf("%s: encoding %s allocates %.0f times", name, m.Raw, allocs)
			}
			n++
		}
	}
	if n < 5 {
		t.Errorf("only %d packet-ins checked", n)
	}
}

// BenchmarkPacketIn2Encode is the switch's per-packet work for a
// controller action: encode an NXT_PACKET_IN2 with pipeline metadata.
func BenchmarkPacketIn2Encode(b *testing.B) {
	m := asyncMsg(b, "of15_monitor_pin2", "NXT_PACKET_IN2", 0)
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = ofp.EncodeMsg(buf[:0], m)
	}
}
