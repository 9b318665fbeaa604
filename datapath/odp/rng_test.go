package odp_test

import (
	"testing"

	"github.com/gvs-project/gvs/datapath/odp"
)

// A Context built as a literal (as a datapath worker embeds one) has no
// seed; sample must still pick about half the packets at 50%, not all.
func TestSampleWithUnseededContextIsRoughlyHalf(t *testing.T) {
	h := newHarness(t)
	h.ctx = &odp.Context{Pool: h.pool, DP: h.rec}
	sampled := 0
	const n = 400
	for range n {
		h.rec.Calls = nil
		h.run("sample(sample=50%,actions(1))", h.batch(tcpv4(t)))
		for _, c := range h.rec.Calls {
			sampled += len(c.Frames)
		}
	}
	if sampled < n*40/100 || sampled > n*60/100 {
		t.Fatalf("sampled %d of %d at 50%%", sampled, n)
	}
}
