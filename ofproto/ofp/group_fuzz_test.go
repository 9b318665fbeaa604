package ofp_test

import (
	"bytes"
	"testing"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// groupSeeds are the recorded group and meter messages, gvs's encodings
// of the hand-built ones and the malformed ones.
func groupSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	for _, c := range readGroupCaptures(tb) {
		if len(c.data) <= 4096 {
			seeds = append(seeds, c.data)
		}
	}
	for _, pc := range groupPrintCases(tb) {
		seeds = append(seeds, mustEncode(tb, pc.v, 7, pc.msg))
	}
	for _, m := range groupMalformed(tb) {
		seeds = append(seeds, m.msg)
	}
	return seeds
}

// FuzzDecodeGroupMessage: as FuzzDecodeMessage, seeded with group and
// meter mods, descriptions, statistics and features: no input panics,
// every failure carries an OpenFlow error code, and whatever decodes
// re-encodes stably.
func FuzzDecodeGroupMessage(f *testing.F) {
	for _, s := range groupSeeds(f) {
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
		// Replies split by EncodeReplies decode too.
		parts, err := ofp.EncodeReplies(m.Version, m.XID, m.Body)
		if err != nil {
			t.Fatalf("%s: EncodeReplies: %v", m.Raw, err)
		}
		for _, p := range parts {
			if _, err := ofp.Decode(p); err != nil {
				t.Fatalf("%s: split part does not decode: %v\n%x", m.Raw, err, p)
			}
		}
	})
}
