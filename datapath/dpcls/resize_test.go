package dpcls

import (
	"math/rand/v2"
	"testing"

	"github.com/gvs-project/gvs/datapath/flow"
)

// TestResizeKeepsEveryMegaflowVisible checks every read API after every
// write while tables grow, shrink and migrate a few slots per write, with
// a map as the reference (two masks told apart by in_port, so a key has at
// most one megaflow).
func TestResizeKeepsEveryMegaflowVisible(t *testing.T) {
	const pool = 20000
	sh := shapes()
	masks := []flow.Mask{sh[0].mask, sh[2].mask} // exact 5-tuple; dst/24
	ms := make([]flow.Match, pool)
	for i := range ms {
		j := i % 2
		ms[i].Mask = masks[j]
		ms[i].Key.RecircID, ms[i].Key.InPort, ms[i].Key.EthType = 0, uint32(j+1), flow.EthTypeIPv4
		ms[i].Key.NwSrc, ms[i].Key.NwDst, ms[i].Key.NwProto = uint32(i), uint32(i)<<8, flow.IPProtoTCP
		ms[i].Key.TpSrc, ms[i].Key.TpDst = uint16(i), 80
	}
	r := rand.New(rand.NewPCG(11, 12))
	c := New[int]()
	in := make([]bool, pool)
	n, migrating := 0, 0
	check := func(op int) {
		ptrs := make([]*flow.Key, 40)
		want := make([]bool, 40)
		idx := make([]int, 40)
		for j := range ptrs {
			i := r.IntN(pool)
			k := randCovered(r, &ms[i])
			idx[j], ptrs[j], want[j] = i, &k, in[i]
			if v, ok := c.Lookup(&k); ok != in[i] || (ok && v != i) {
				t.Fatalf("op %d: Lookup(megaflow %d) = %d, %v; installed: %v", op, i, v, ok, in[i])
			}
		}
		out := make([]int, 40)
		ok := make([]bool, 40)
		c.LookupBatch(ptrs, out, ok)
		for j := range ptrs {
			if ok[j] != want[j] || (ok[j] && out[j] != idx[j]) {
				t.Fatalf("op %d: LookupBatch(megaflow %d) = %d, %v; installed: %v", op, idx[j], out[j], ok[j], want[j])
			}
		}
		for _, s := range c.vec.Load().subs {
			if s.tabs.Load().old != nil {
				migrating++
			}
		}
	}
	checkAll := func(op int) {
		seen := make([]bool, pool)
		c.Range(func(m *flow.Match, v int) bool {
			want := ms[v].Key.Masked(&ms[v].Mask)
			if seen[v] || !in[v] || *m.Key.W() != *want.W() {
				t.Fatalf("op %d: Range yielded megaflow %d (seen before: %v, installed: %v)", op, v, seen[v], in[v])
			}
			seen[v] = true
			return true
		})
		total := 0
		for _, st := range c.Stats() {
			total += st.Entries
		}
		if total != n || c.Len() != n {
			t.Fatalf("op %d: Stats count %d entries and Len() %d, want %d", op, total, c.Len(), n)
		}
	}
	op := 0
	// Grow to the whole pool, shrink to almost nothing, then churn.
	for phase, target := range []int{pool, 50, pool / 2, 0} {
		for n != target {
			i := r.IntN(pool)
			if (n < target) != in[i] {
				if in[i] {
					if !c.Remove(&ms[i]) {
						t.Fatalf("op %d: Remove(%d) failed", op, i)
					}
					n--
				} else {
					if err := c.Insert(&ms[i], i); err != nil {
						t.Fatalf("op %d: Insert(%d): %v", op, i, err)
					}
					n++
				}
				in[i] = !in[i]
				op++
				if op%4 == 0 {
					check(op)
				}
				if op%997 == 0 {
					checkAll(op)
				}
			}
		}
		checkAll(op)
		if phase == 1 {
			c.Rank() // Rank must not disturb a migration either
		}
	}
	if migrating < 1000 {
		t.Fatalf("only %d checks ran during a migration; the test does not exercise resizing", migrating)
	}
	if c.Subtables() != 0 {
		t.Fatalf("Subtables() = %d after removing everything", c.Subtables())
	}
}
