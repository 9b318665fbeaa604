package flow

import (
	"bytes"
	"testing"

	"github.com/gvs-project/gvs/datapath/packet"
)

// FuzzExtract feeds arbitrary frames to Extract. The seed corpus is the
// crafted frames of extract_test.go plus the real-looking frames in
// testdata/fuzz/FuzzExtract. It checks that extraction never panics,
// keeps extractOffsets inside the frame and in layer order, is deterministic,
// leaves the bytes and metadata alone, and never reports a field of a
// layer it did not find.
func FuzzExtract(f *testing.F) {
	for _, c := range extractCases(f) {
		f.Add(c.frame)
	}
	md := testMetadata()
	f.Fuzz(func(t *testing.T, frame []byte) {
		p := packet.FromBytes(frame)
		p.Md = md
		var k Key
		Extract(p, &k)

		o := extractOffsetsOf(p)
		checkExtractOffsets(t, p.Len(), o)
		if !bytes.Equal(p.Data(), frame) || p.Md != md {
			t.Fatalf("extraction changed the packet")
		}
		if k.InPort != md.InPort || k.RecircID != md.RecircID || k.DPHash != md.DPHash ||
			k.CtState != md.CtState || k.TunID != md.Tunnel.ID {
			t.Fatalf("metadata not copied: %+v", k)
		}

		dirty := k
		for i := range dirty.W() {
			dirty.W()[i] ^= 0x5555555555555555
		}
		Extract(p, &dirty)
		if dirty != k || extractOffsetsOf(p) != o {
			t.Fatalf("second extraction differs:%s", extractKeyDiff(&dirty, &k))
		}

		w := k.W()
		if o.L3 == offUnset {
			for i := SegTunnelEnd; i < KeyWords; i++ {
				if w[i] != 0 {
					t.Fatalf("header fields without L3: %+v", k)
				}
			}
		}
		if o.L4 == offUnset && (k.TpSrc != 0 || k.TpDst != 0 || k.TCPFlags != 0 || k.IGMPGroup != 0 ||
			k.NDTarget != [16]byte{} || k.NwFrag != 0 || k.NwTTL != 0) {
			t.Fatalf("L4 or IP fields without L4 offset: %+v", k)
		}
		if k.NwFrag&FragLater != 0 && (o.L7 != offUnset || k.TpSrc != 0 || k.TpDst != 0) {
			t.Fatalf("later fragment with L4 fields: %+v", k)
		}
		if o.L2_5 != offUnset && k.EthType != EthTypeMPLS && k.EthType != EthTypeMPLSMcst {
			t.Fatalf("L2_5 set for EthType %#x", k.EthType)
		}
	})
}
