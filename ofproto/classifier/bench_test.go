package classifier

import (
	"math/rand/v2"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// mixedRules returns n distinct rules drawn from the generator's mask
// shapes with wide value domains (OVN-like: many exact and prefix matches
// over a few dozen masks).
func mixedRules(b testing.TB, n int) []*Rule[int] {
	g := &gen{rng: rand.New(rand.NewPCG(42, 42)), ovnCtMasks: true}
	seen := map[[2]mf.Flow]bool{}
	var out []*Rule[int]
	for len(out) < n {
		m := g.match()
		// Widen the value domains so that n distinct matches exist.
		m.Flow.Metadata &= m.Mask.Metadata
		if m.Mask.Metadata != 0 {
			m.Flow.Metadata = uint64(g.pick(64))
		}
		if m.Mask.NwDst == ^uint32(0) {
			m.Flow.NwDst = g.rng.Uint32()
		}
		if m.Mask.NwSrc == ^uint32(0) {
			m.Flow.NwSrc = g.rng.Uint32()
		}
		if m.Mask.TpDst == 0xffff {
			m.Flow.TpDst = uint16(g.rng.Uint32())
		}
		if m.Mask.Regs[0] != 0 {
			m.Flow.Regs[0] = uint32(g.pick(1 << 16))
		}
		k := [2]mf.Flow{m.Flow, m.Mask}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, mustRule(b, m, uint16(g.pick(1000)), nil, len(out)))
	}
	return out
}

func BenchmarkLookup100kMixed(b *testing.B) {
	c := mustNew(b, Options{})
	for _, r := range mixedRules(b, 100_000) {
		if err := c.Insert(r, 0); err != nil {
			b.Fatal(err)
		}
	}
	g := &gen{rng: rand.New(rand.NewPCG(7, 7))}
	flows := make([]mf.Flow, 1024)
	for i := range flows {
		flows[i] = g.flow()
	}
	b.Logf("%d rules in %d subtables", c.Count(), len(c.view.Load().subs))
	b.Run("wc", func(b *testing.B) {
		var wc mf.Flow
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			c.Lookup(0, &flows[i&1023], &wc)
		}
	})
	b.Run("nowc", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			c.Lookup(0, &flows[i&1023], nil)
		}
	})
}

func BenchmarkInsert(b *testing.B) {
	rules := mixedRules(b, 100_000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		c := mustNew(b, Options{})
		fresh := make([]*Rule[int], len(rules))
		for i, r := range rules {
			m := r.Match()
			fresh[i] = mustRule(b, m, r.priority, nil, i)
		}
		b.StartTimer()
		for _, r := range fresh {
			if err := c.Insert(r, 0); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rules)), "ns/insert")
}
