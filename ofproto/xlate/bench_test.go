package xlate_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// newBenchEnv is a 3-table pipeline: table 0 classifies by in_port,
// table 1 routes by nw_dst prefix (rewriting dl_dst), table 2 is an ACL
// on the TCP port that outputs; each table also has 200 rules the
// packet does not hit.
func newBenchEnv(tb testing.TB) *env {
	flows := []string{
		"table=0,priority=10,in_port=1,ip actions=load:0x1->NXM_NX_REG0[],resubmit(,1)",
		"table=1,priority=24,ip,nw_dst=10.1.2.0/24 actions=mod_dl_dst:aa:bb:cc:dd:ee:ff,resubmit(,2)",
		"table=2,priority=100,reg0=1,tcp,tp_dst=80 actions=output:2",
		"table=2,priority=0 actions=drop",
	}
	for i := range 200 {
		flows = append(flows,
			fmt.Sprintf("table=0,priority=10,in_port=%d,ip actions=resubmit(,1)", 1000+i),
			fmt.Sprintf("table=1,priority=16,ip,nw_dst=172.%d.0.0/16 actions=resubmit(,2)", i),
			fmt.Sprintf("table=2,priority=100,reg0=1,tcp,tp_dst=%d actions=output:3", 1000+i))
	}
	return newEnv(tb, mf.OF10, flows...)
}

func BenchmarkTranslate(b *testing.B) {
	e := newBenchEnv(b)
	in := xlate.In{Key: key(b, pktTCP)}
	var out xlate.Out
	e.x.Translate(&in, &out)
	if out.Actions.String() != "set(eth(dst=aa:bb:cc:dd:ee:ff)),2" || len(out.Rules) != 3 {
		b.Fatalf("pipeline translated to %s (%d rules)", out.Actions, len(out.Rules))
	}
	b.ReportAllocs()
	for b.Loop() {
		e.x.Translate(&in, &out)
	}
}

// Every upcall translates: a translation reuses its context (a few
// kilobytes) instead of leaving one per upcall for the collector. What it
// still allocates is its output (actions, rules and tables credited),
// which the megaflow keeps.
func TestTranslationReusesItsContext(t *testing.T) {
	e := newBenchEnv(t)
	in := xlate.In{Key: key(t, pktTCP)}
	var out xlate.Out
	e.x.Translate(&in, &out)
	if out.Actions.String() != "set(eth(dst=aa:bb:cc:dd:ee:ff)),2" {
		t.Fatalf("pipeline translated to %s", out.Actions)
	}
	const runs = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		e.x.Translate(&in, &out)
	}
	runtime.ReadMemStats(&after)
	limit := uint64(1536) // the output; a new context would be 2,048 more
	if raceEnabled {
		limit = 2600 // a quarter of the contexts dropped from the pool
	}
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > limit {
		t.Errorf("%d bytes allocated per translation, want at most %d (its output, not a new context)", per, limit)
	}
}
