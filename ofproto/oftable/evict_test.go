package oftable_test

import (
	"slices"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
)

// inPort matches in_port=p.
func inPort(t testing.TB, p uint16) mf.Match { return match(t, fv{"in_port", be16(p), nil}) }

// inPortSrc matches in_port=p,dl_src=00:00:00:00:00:s.
func inPortSrc(t testing.TB, p uint16, s byte) mf.Match {
	return match(t, fv{"in_port", be16(p), nil}, fv{"eth_src", []byte{0, 0, 0, 0, 0, s}, nil})
}

func timed(m mf.Match, idle, hard, importance uint16, cookie uint64) *oftable.FlowMod {
	fm := add(m, 100, cookie, output(1))
	fm.IdleTimeout, fm.HardTimeout, fm.Importance = idle, hard, importance
	return fm
}

// cookies lists table 0's rules' cookies, sorted.
func cookies(tb *oftable.Tables) []uint64 {
	var out []uint64
	for r := range tb.Rules(0, nil) {
		out = append(out, r.Cookie)
	}
	slices.Sort(out)
	return out
}

func tryApply(tb *oftable.Tables, fm *oftable.FlowMod) ([]oftable.Removal, error) {
	x := tb.Begin()
	if err := x.Apply(fm); err != nil {
		x.Abort()
		return nil, err
	}
	return x.Commit(), nil
}

func TestRefusePolicyFailsAddsWithTableFullButAllowsReplaceAndModify(t *testing.T) {
	c := newClock()
	tb := newTables(t, c)
	tb.SetLimit(0, oftable.Limit{MaxFlows: 2})
	apply(t, tb, timed(inPort(t, 1), 10, 0, 0, 1), timed(inPort(t, 2), 0, 0, 0, 2))

	_, err := tryApply(tb, timed(inPort(t, 3), 0, 0, 0, 3))
	wantCode(t, err, ofp.OFPFMFC_TABLE_FULL)
	// A modify that would add (OpenFlow 1.0 semantics) is refused too.
	mod := cmd(ofp.FlowModify, 0, inPort(t, 3), 100, output(2))
	mod.ModifyMayAdd, mod.NewCookie = true, 3
	_, err = tryApply(tb, mod)
	wantCode(t, err, ofp.OFPFMFC_TABLE_FULL)

	// Replacing an identical flow and modifying one need no room.
	apply(t, tb, timed(inPort(t, 2), 0, 0, 0, 22), cmd(ofp.FlowModify, 0, inPort(t, 1), 100, output(7)))
	if got := cookies(tb); !slices.Equal(got, []uint64{1, 22}) {
		t.Fatalf("cookies %v, want [1 22]", got)
	}
	if st := tb.Stats(0); st.Active != 2 || tb.MaxFlows(0) != 2 {
		t.Fatalf("stats %+v, limit %d", st, tb.MaxFlows(0))
	}
	if n := tb.MaxFlows(1); n != oftable.Unlimited {
		t.Fatalf("table 1 limit %d, want unlimited", n)
	}
}

func TestEvictPolicyEvictsTheRuleThatExpiresFirst(t *testing.T) {
	c := newClock()
	tb := newTables(t, c)
	tb.SetLimit(0, oftable.Limit{MaxFlows: 4, Evict: true})
	// Idle timeouts 40, 30, 20, 10 for in_port 4..1.
	for p := uint16(4); p >= 1; p-- {
		apply(t, tb, timed(inPort(t, p), p*10, 0, 0, uint64(p)))
	}
	rem := apply(t, tb, timed(inPort(t, 5), 0, 0, 0, 5))
	if len(rem) != 1 || rem[0].Rule.Cookie != 1 || rem[0].Reason != oftable.RemovedEviction {
		t.Fatalf("removals %+v, want cookie 1 evicted", rem)
	}
	if got := cookies(tb); !slices.Equal(got, []uint64{2, 3, 4, 5}) {
		t.Fatalf("cookies %v", got)
	}
	// Traffic on in_port=2 at 15s pushes its idle expiry to 35s, after
	// in_port=3's 30s.
	tb.FindStrict(0, ptr(inPort(t, 2)), 100).Stats.Add(1, 60, c.t.Add(15*time.Second))
	rem = apply(t, tb, timed(inPort(t, 6), 0, 0, 0, 6))
	if len(rem) != 1 || rem[0].Rule.Cookie != 3 {
		t.Fatalf("removals %+v, want cookie 3 evicted", rem)
	}
	// Rules without timeouts are never evicted.
	apply(t, tb, cmd(ofp.FlowDeleteStrict, 0, inPort(t, 2), 100), cmd(ofp.FlowDeleteStrict, 0, inPort(t, 4), 100),
		timed(inPort(t, 7), 0, 0, 0, 7))
	apply(t, tb, timed(inPort(t, 8), 0, 0, 0, 8))
	_, err := tryApply(tb, timed(inPort(t, 9), 0, 0, 0, 9))
	wantCode(t, err, ofp.OFPFMFC_TABLE_FULL)
}

func TestEvictionPrefersLowImportanceThenEarlierExpiry(t *testing.T) {
	c := newClock()
	tb := newTables(t, c)
	tb.SetLimit(0, oftable.Limit{MaxFlows: 3})
	tb.SetOpenFlowEviction(0, true)
	apply(t, tb, timed(inPort(t, 1), 0, 350, 30, 1), timed(inPort(t, 2), 0, 500, 30, 2), timed(inPort(t, 3), 0, 300, 30, 3))
	rem := apply(t, tb, timed(inPort(t, 4), 0, 100, 50, 4))
	if len(rem) != 1 || rem[0].Rule.Cookie != 3 || rem[0].Reason != oftable.RemovedEviction {
		t.Fatalf("removals %+v, want cookie 3 (importance 30, expires first)", rem)
	}
	// Modifying rule 1 at 200s restarts its hard timeout (expiry 550s,
	// after rule 2's 500s); rule 4 expires first but is more important.
	c.advance(200 * time.Second)
	apply(t, tb, cmd(ofp.FlowModifyStrict, 0, inPort(t, 1), 100, output(3)))
	rem = apply(t, tb, timed(inPort(t, 5), 0, 100, 50, 5))
	if len(rem) != 1 || rem[0].Rule.Cookie != 2 {
		t.Fatalf("removals %+v, want cookie 2", rem)
	}
	// Switching OpenFlow eviction off restores the refuse policy.
	tb.SetOpenFlowEviction(0, false)
	_, err := tryApply(tb, timed(inPort(t, 6), 0, 100, 50, 6))
	wantCode(t, err, ofp.OFPFMFC_TABLE_FULL)
	if got := cookies(tb); !slices.Equal(got, []uint64{1, 4, 5}) {
		t.Fatalf("cookies %v", got)
	}
}

func TestEvictionFairnessGroupsEvictFromTheLargestGroup(t *testing.T) {
	c := newClock()
	tb := newTables(t, c)
	inPortField := ofp.Subfield{Field: mf.ByName("in_port"), Ofs: 0, NBits: 16}
	tb.SetLimit(0, oftable.Limit{MaxFlows: 4, Evict: true, Groups: []ofp.Subfield{inPortField}})
	apply(t, tb,
		timed(inPortSrc(t, 2, 0x88), 10, 0, 0, 1),
		timed(inPortSrc(t, 1, 0x55), 20, 0, 0, 2),
		timed(inPortSrc(t, 1, 0x66), 30, 0, 0, 3),
		timed(inPortSrc(t, 1, 0x77), 40, 0, 0, 4))
	// in_port=1 is the largest group: its soonest-expiring rule goes,
	// not the soonest overall (cookie 1).
	rem := apply(t, tb, timed(inPortSrc(t, 2, 0x99), 0, 0, 0, 5))
	if len(rem) != 1 || rem[0].Rule.Cookie != 2 {
		t.Fatalf("removals %+v, want cookie 2", rem)
	}
	// Without groups, and a larger limit, the soonest overall goes.
	tb.SetLimit(0, oftable.Limit{MaxFlows: 7, Evict: true})
	apply(t, tb, timed(inPortSrc(t, 2, 0xaa), 50, 0, 0, 6), timed(inPortSrc(t, 2, 0xbb), 60, 0, 0, 7),
		timed(inPortSrc(t, 2, 0xcc), 70, 0, 0, 8))
	rem = apply(t, tb, timed(inPortSrc(t, 2, 0xdd), 80, 0, 0, 9))
	if len(rem) != 1 || rem[0].Rule.Cookie != 1 {
		t.Fatalf("removals %+v, want cookie 1", rem)
	}
	// Shrinking the limit evicts down to it, soonest first.
	rem = tb.SetLimit(0, oftable.Limit{MaxFlows: 4, Evict: true})
	got := mapSlice(rem, func(r oftable.Removal) uint64 { return r.Rule.Cookie })
	slices.Sort(got)
	if !slices.Equal(got, []uint64{3, 4, 6}) || rem[0].Reason != oftable.RemovedEviction {
		t.Fatalf("evicted %v (%+v), want [3 4 6]", got, rem)
	}
	if got := cookies(tb); !slices.Equal(got, []uint64{5, 7, 8, 9}) {
		t.Fatalf("cookies %v", got)
	}
}

func TestShrinkingTheLimitWithRefusePolicyEvictsNothing(t *testing.T) {
	c := newClock()
	tb := newTables(t, c)
	apply(t, tb, timed(inPort(t, 1), 10, 0, 0, 1), timed(inPort(t, 2), 10, 0, 0, 2))
	if rem := tb.SetLimit(0, oftable.Limit{MaxFlows: 1}); len(rem) != 0 {
		t.Fatalf("refuse policy evicted %+v", rem)
	}
	if st := tb.Stats(0); st.Active != 2 {
		t.Fatalf("active %d, want 2", st.Active)
	}
	_, err := tryApply(tb, timed(inPort(t, 3), 10, 0, 0, 3))
	wantCode(t, err, ofp.OFPFMFC_TABLE_FULL)
}

func TestAbortRestoresAnEvictedRule(t *testing.T) {
	c := newClock()
	tb := newTables(t, c)
	tb.SetLimit(0, oftable.Limit{MaxFlows: 1, Evict: true})
	apply(t, tb, timed(inPort(t, 1), 10, 0, 0, 1))
	x := tb.Begin()
	if err := x.Apply(timed(inPort(t, 2), 10, 0, 0, 2)); err != nil {
		t.Fatal(err)
	}
	x.Abort()
	if got := cookies(tb); !slices.Equal(got, []uint64{1}) || tb.Stats(0).Active != 1 {
		t.Fatalf("after abort: cookies %v, active %d", got, tb.Stats(0).Active)
	}
}

// BenchmarkAddEvictingFromFullTable adds one flow per iteration to a full
// table of 1000 evictable flows (each add evicts one: a linear scan).
func BenchmarkAddEvictingFromFullTable(b *testing.B) {
	c := newClock()
	tb := newTables(b, c)
	const n = 1000
	tb.SetLimit(0, oftable.Limit{MaxFlows: n, Evict: true})
	fms := make([]*oftable.FlowMod, 2*n)
	for i := range fms {
		fms[i] = timed(ipDst(b, net10|uint32(i), 32), uint16(10+i%50), 0, 0, uint64(i))
	}
	for i := range n {
		apply(b, tb, fms[i])
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.advance(time.Millisecond)
		x := tb.Begin()
		if err := x.Apply(fms[n+i%n]); err != nil {
			b.Fatal(err)
		}
		x.Commit()
		x = tb.Begin()
		if err := x.Apply(fms[i%n]); err != nil {
			b.Fatal(err)
		}
		x.Commit()
	}
}
