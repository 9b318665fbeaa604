package dpcls

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gvs-project/gvs/datapath/flow"
)

// checkAgainst compares every read API of c with the reference on keys
// and returns how many keys hit.
func checkAgainst(t *testing.T, c *Classifier[int], ref *linear, keys []flow.Key) (hits int) {
	t.Helper()
	ptrs := make([]*flow.Key, len(keys))
	for i := range keys {
		ptrs[i] = &keys[i]
	}
	out := make([]int, len(keys))
	ok := make([]bool, len(keys))
	for i := range out {
		out[i], ok[i] = -1, true // LookupBatch must overwrite misses
	}
	c.LookupBatch(ptrs, out, ok)
	for i := range keys {
		want, wantOK := ref.lookup(&keys[i])
		if got, gotOK := c.Lookup(&keys[i]); got != want || gotOK != wantOK {
			t.Fatalf("Lookup(key %d) = %d, %v; reference says %d, %v", i, got, gotOK, want, wantOK)
		}
		if got, gotOK := c.Peek(&keys[i]); got != want || gotOK != wantOK {
			t.Fatalf("Peek(key %d) = %d, %v; reference says %d, %v", i, got, gotOK, want, wantOK)
		}
		if out[i] != want || ok[i] != wantOK {
			t.Fatalf("LookupBatch key %d = %d, %v; reference says %d, %v", i, out[i], ok[i], want, wantOK)
		}
		if wantOK {
			hits++
		}
	}
	if c.Len() != len(ref.ms) {
		t.Fatalf("Len() = %d, reference holds %d", c.Len(), len(ref.ms))
	}
	if c.Subtables() != ref.masks() {
		t.Fatalf("Subtables() = %d, reference has %d distinct masks", c.Subtables(), ref.masks())
	}
	return hits
}

func TestClassifierMatchesLinearReference(t *testing.T) {
	all := shapes()
	for seed := uint64(1); seed <= 4; seed++ {
		sh := all
		if seed > 1 {
			sh = all[:len(all)-1] // the catch-all blocks every other insert
		}
		r := rand.New(rand.NewPCG(seed, 99))
		c := New[int]()
		ref := &linear{}
		next, hits, lookups := 0, 0, 0
		for op := range 3000 {
			switch x := r.IntN(20); {
			case x < 13: // insert
				m := randMatch(r, sh)
				if i := ref.find(&m); i >= 0 {
					if err := c.Insert(&m, -2); !errors.Is(err, ErrExists) {
						t.Fatalf("op %d: Insert of an installed megaflow: err = %v, want ErrExists", op, err)
					}
					continue
				}
				if slices.ContainsFunc(ref.ms, func(o flow.Match) bool { return overlaps(&o, &m) }) {
					continue // the datapath never installs overlapping megaflows
				}
				next++
				if err := c.Insert(&m, next); err != nil {
					t.Fatalf("op %d: Insert: %v", op, err)
				}
				ref.ms, ref.vals = append(ref.ms, m), append(ref.vals, next)
			case x < 18 && len(ref.ms) > 0: // remove an installed megaflow
				i := r.IntN(len(ref.ms))
				m := ref.ms[i]
				// A key with bits outside the mask must still remove it.
				m.Key.TpSrc |= ^m.Mask.TpSrc
				if !c.Remove(&m) {
					t.Fatalf("op %d: Remove of an installed megaflow returned false", op)
				}
				ref.remove(i)
			default: // remove something not installed
				m := randMatch(r, sh)
				if ref.find(&m) < 0 && c.Remove(&m) {
					t.Fatalf("op %d: Remove of a megaflow not installed returned true", op)
				}
			}
			if op%7 == 0 {
				c.Rank()
			}
			keys := make([]flow.Key, 37)
			for i := range keys {
				keys[i] = randKey(r)
			}
			// Also look up keys that installed megaflows cover.
			for i := 0; i < len(ref.ms) && i < 20; i++ {
				keys = append(keys, randCovered(r, &ref.ms[r.IntN(len(ref.ms))]))
			}
			hits += checkAgainst(t, c, ref, keys)
			lookups += len(keys)
		}
		checkRange(t, c, ref)
		t.Logf("seed %d: %d inserts, %d megaflows in %d subtables at the end, %d lookups hit of %d", seed, next, len(ref.ms), c.Subtables(), hits, lookups)
	}
}

// checkRange asserts that Range yields exactly the reference's megaflows.
func checkRange(t *testing.T, c *Classifier[int], ref *linear) {
	t.Helper()
	got := map[flow.Match]int{}
	c.Range(func(m *flow.Match, v int) bool {
		got[*m] = v
		return true
	})
	if len(got) != len(ref.ms) {
		t.Fatalf("Range yielded %d megaflows, reference holds %d", len(got), len(ref.ms))
	}
	for i := range ref.ms {
		if v, ok := got[ref.ms[i]]; !ok || v != ref.vals[i] {
			t.Fatalf("Range: megaflow %d (value %d) yielded as %d, %v", i, ref.vals[i], v, ok)
		}
		if v, ok := c.Get(&ref.ms[i]); !ok || v != ref.vals[i] {
			t.Fatalf("Get(megaflow %d) = %d, %v; want %d, true", i, v, ok, ref.vals[i])
		}
	}
}

func TestInsertDuplicateMaskedKeyFails(t *testing.T) {
	c := New[string]()
	m := flow.Match{Mask: shapes()[2].mask}
	m.Key.InPort, m.Key.EthType, m.Key.NwDst = 1, flow.EthTypeIPv4, 0x0a000105
	if err := c.Insert(&m, "a"); err != nil {
		t.Fatal(err)
	}
	// Same masked key, different bits outside the /24.
	m.Key.NwDst = 0x0a0001ff
	err := c.Insert(&m, "b")
	if !errors.Is(err, ErrExists) {
		t.Fatalf("Insert of the same masked key: err = %v, want ErrExists", err)
	}
	var k flow.Key
	k.InPort, k.EthType, k.NwDst = 1, flow.EthTypeIPv4, 0x0a000177
	if v, ok := c.Lookup(&k); v != "a" || !ok {
		t.Fatalf("Lookup = %q, %v; want the first value", v, ok)
	}
}

func TestEmptiedSubtableIsDropped(t *testing.T) {
	c := New[int]()
	sh := shapes()
	a := flow.Match{Mask: sh[0].mask}
	a.Key.InPort = 1
	b := flow.Match{Mask: sh[1].mask}
	b.Key.InPort = 2
	for i, m := range []*flow.Match{&a, &b} {
		if err := c.Insert(m, i); err != nil {
			t.Fatal(err)
		}
	}
	if c.Subtables() != 2 {
		t.Fatalf("Subtables() = %d, want 2", c.Subtables())
	}
	if !c.Remove(&a) {
		t.Fatal("Remove returned false")
	}
	if c.Subtables() != 1 || c.Len() != 1 {
		t.Fatalf("after removing the only megaflow of a mask: Subtables() = %d, Len() = %d; want 1, 1", c.Subtables(), c.Len())
	}
	if c.Remove(&a) {
		t.Fatal("second Remove returned true")
	}
}

func TestRankOrdersSubtablesByHits(t *testing.T) {
	c := New[int]()
	sh := shapes()
	// Three non-overlapping megaflows (distinct in_port) in three masks.
	var keys [3]flow.Key
	for i := range 3 {
		m := flow.Match{Mask: sh[i].mask}
		m.Key.InPort = uint32(i + 1)
		keys[i] = m.Key
		if err := c.Insert(&m, i); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		c.Lookup(&keys[2])
	}
	c.Lookup(&keys[1])
	if !c.Rank() {
		t.Fatal("Rank did nothing with no writer running")
	}
	got := c.vec.Load().subs
	if got[0].mask != sh[2].mask || got[1].mask != sh[1].mask || got[2].mask != sh[0].mask {
		t.Fatal("after Rank the subtables are not in order of hits (5, 1, 0)")
	}
	for _, s := range got {
		if s.hits != 0 {
			t.Fatalf("Rank left a hit count of %d", s.hits)
		}
	}
	// Batched lookups count too: three hits on the last subtable move
	// it first.
	ptrs := []*flow.Key{&keys[0], &keys[0], &keys[0], &keys[1]}
	c.LookupBatch(ptrs, make([]int, 4), make([]bool, 4))
	c.Rank()
	if got := c.vec.Load().subs; got[0].mask != sh[0].mask || got[1].mask != sh[1].mask {
		t.Fatal("after Rank the subtables are not in order of batched hits (3, 1, 0)")
	}
}

func TestTableGrowsAndShrinks(t *testing.T) {
	c := New[int]()
	mask := shapes()[0].mask
	ms := make([]flow.Match, 5000)
	for i := range ms {
		ms[i].Mask = mask
		ms[i].Key.InPort, ms[i].Key.NwSrc = 1, uint32(i)
		if err := c.Insert(&ms[i], i); err != nil {
			t.Fatal(err)
		}
	}
	st := c.Stats()
	if len(st) != 1 || st[0].Entries != 5000 || st[0].Words != 6 || st[0].Slots != 16384 {
		t.Fatalf("after 5000 inserts: %d subtables, %d entries, %d words, %d slots; want 1, 5000, 6, 16384", len(st), st[0].Entries, st[0].Words, st[0].Slots)
	}
	for i := range ms[:4990] {
		if !c.Remove(&ms[i]) {
			t.Fatalf("Remove(%d) = false", i)
		}
	}
	st = c.Stats()
	if st[0].Entries != 10 || st[0].Slots > 256 {
		t.Fatalf("after removing all but 10: entries %d in %d slots, want 10 in at most 256", st[0].Entries, st[0].Slots)
	}
	for i := range ms {
		v, ok := c.Lookup(&ms[i].Key)
		if want := i >= 4990; ok != want || (ok && v != i) {
			t.Fatalf("Lookup(%d) = %d, %v; want found=%v", i, v, ok, want)
		}
	}
}

func TestRangeStopsWhenCallbackReturnsFalse(t *testing.T) {
	c := New[int]()
	for i := range 10 {
		m := flow.Match{Mask: shapes()[0].mask}
		m.Key.NwSrc = uint32(i)
		if err := c.Insert(&m, i); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	c.Range(func(*flow.Match, int) bool { n++; return n < 3 })
	if n != 3 {
		t.Fatalf("Range called fn %d times after it returned false on call 3", n)
	}
}

func TestLookupBatchLongerThanOneChunk(t *testing.T) {
	c := New[int]()
	mask := shapes()[0].mask
	keys := make([]flow.Key, 150)
	ptrs := make([]*flow.Key, len(keys))
	for i := range keys {
		keys[i].NwSrc = uint32(i)
		ptrs[i] = &keys[i]
		if i%3 != 0 {
			if err := c.Insert(&flow.Match{Key: keys[i], Mask: mask}, i); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := make([]int, len(keys))
	ok := make([]bool, len(keys))
	c.LookupBatch(ptrs, out, ok)
	for i := range keys {
		if want := i%3 != 0; ok[i] != want || (want && out[i] != i) || (!want && out[i] != 0) {
			t.Fatalf("key %d: %d, %v", i, out[i], ok[i])
		}
	}
}

func TestLookupsDoNotAllocate(t *testing.T) {
	c := New[*int]()
	sh := shapes()
	keys := make([]flow.Key, 32)
	ptrs := make([]*flow.Key, 32)
	for i := range keys {
		m := flow.Match{Mask: sh[i%4].mask}
		m.Key.InPort = uint32(i + 1)
		m.Key.NwSrc = uint32(i)
		keys[i], ptrs[i] = m.Key, &keys[i]
		if err := c.Insert(&m, new(int)); err != nil {
			t.Fatal(err)
		}
	}
	out := make([]*int, 32)
	ok := make([]bool, 32)
	var miss flow.Key
	if n := testing.AllocsPerRun(100, func() {
		c.Lookup(&keys[7])
		c.Lookup(&miss)
		c.Peek(&keys[3])
	}); n != 0 {
		t.Errorf("Lookup allocates %v times per run", n)
	}
	if n := testing.AllocsPerRun(100, func() { c.LookupBatch(ptrs, out, ok) }); n != 0 {
		t.Errorf("LookupBatch allocates %v times per run", n)
	}
	for i := range ok {
		if !ok[i] {
			t.Fatalf("key %d missed", i)
		}
	}
}
