package ofp_test

import (
	"bytes"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

// A flow dump encodes every rule's actions with one ActionEncoder:
// reused, it encodes the same bytes as a fresh one and allocates nothing,
// whatever forms the version needs (OpenFlow 1.0 turns set_field into
// mod_dl_dst or reg_load, OpenFlow 1.3 keeps set_field, 1.5 turns
// reg_load into set_field).
func TestReusedActionEncoderEncodesTheSameBytesWithoutAllocating(t *testing.T) {
	fl, err := ofptext.ParseFlow("ip,tcp,actions=set_field:00:00:00:00:00:01->eth_dst,set_field:10.0.0.1->ip_dst,"+
		"load:0x5->NXM_NX_REG0[0..15],move:NXM_NX_REG1[]->NXM_NX_REG2[],mod_nw_ttl:9,set_field:0x1->ip_ecn,load:0x1->NXM_NX_IP_TTL[0..3],"+
		"mod_tp_dst:80,ct(commit,zone=5),resubmit(,3),output:2", mf.OF10)
	if err != nil {
		t.Fatal(err)
	}
	acts := fl.Actions
	if err := ofp.ValidateOfpactsVersion(mf.OF10, acts, &fl.Match, 100, 0, 254); err != nil {
		t.Fatal(err)
	}
	var enc ofp.ActionEncoder
	buf := make([]byte, 0, 4096)
	for _, c := range []struct {
		v            uint8
		instructions bool
	}{{mf.OF10, false}, {mf.OF13, true}, {mf.OF15, true}} {
		want, err := ofp.AppendOfpacts(nil, acts, c.v, c.instructions)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			got, err := enc.AppendOfpacts(buf[:0], acts, c.v, c.instructions)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("version %#x: reused encoder gave %x, %v; want %x", c.v, got, err, want)
			}
		}
		if n := testing.AllocsPerRun(50, func() {
			if _, err := enc.AppendOfpacts(buf[:0], acts, c.v, c.instructions); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("version %#x: %v allocations per encode with a reused encoder, want 0", c.v, n)
		}
	}
}
