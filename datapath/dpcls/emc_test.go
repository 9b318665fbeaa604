package dpcls

import (
	"math/rand/v2"
	"testing"

	"github.com/gvs-project/gvs/datapath/flow"
)

func emcKey(i int) flow.Key {
	var k flow.Key
	k.InPort, k.EthType, k.NwSrc, k.TpSrc = 1, flow.EthTypeIPv4, uint32(i), uint16(i)
	return k
}

func TestEMCPutThenLookupHitsOnlyTheSameKeyAndHash(t *testing.T) {
	c := NewEMC[int](EMCConfig{Entries: 64, InsertInvProb: 1, Seed: 1})
	k := emcKey(5)
	h := k.Hash(0)
	c.Put(&k, h, 42)
	if v, ok := c.Lookup(&k, h); v != 42 || !ok {
		t.Fatalf("Lookup = %d, %v; want 42, true", v, ok)
	}
	other := k
	other.TpDst = 1 // same stored hash, different key
	if _, ok := c.Lookup(&other, h); ok {
		t.Fatal("Lookup of a different key with the same hash hit")
	}
	if _, ok := c.Lookup(&k, h+1); ok {
		t.Fatal("Lookup with a different hash hit")
	}
	c.Put(&k, h, 43)
	if v, _ := c.Lookup(&k, h); v != 43 || c.Len() != 1 {
		t.Fatalf("after a second Put of the same key: value %d, Len %d; want 43, 1", v, c.Len())
	}
}

func TestEMCIsTwoWayAssociative(t *testing.T) {
	c := NewEMC[int](EMCConfig{Entries: 16, InsertInvProb: 1, Seed: 1})
	// Three hashes with the same first way (low 4 bits: 3) and second
	// ways 1, 2 and 3 (bits 4-7).
	hs := []uint64{0x13, 0x23, 0x33}
	ks := []flow.Key{emcKey(1), emcKey(2), emcKey(3)}
	c.Put(&ks[0], hs[0], 0)
	c.Put(&ks[1], hs[1], 1)
	for i := range 2 {
		if v, ok := c.Lookup(&ks[i], hs[i]); !ok || v != i {
			t.Fatalf("key %d: Lookup = %d, %v after two colliding Puts", i, v, ok)
		}
	}
	// Key 0 sits in way 3, key 1 in its second way (2). Key 2's ways are
	// 3 (key 0) and 3 again, so it evicts key 0.
	c.Put(&ks[2], hs[2], 2)
	if _, ok := c.Lookup(&ks[0], hs[0]); ok {
		t.Fatal("key 0 survived a colliding Put into its only way")
	}
	for i := 1; i < 3; i++ {
		if v, ok := c.Lookup(&ks[i], hs[i]); !ok || v != i {
			t.Fatalf("key %d: Lookup = %d, %v", i, v, ok)
		}
	}
}

func TestEMCEvictsTheSmallerHashWhenBothWaysAreFull(t *testing.T) {
	c := NewEMC[int](EMCConfig{Entries: 16, InsertInvProb: 1, Seed: 1})
	a, b, n := emcKey(1), emcKey(2), emcKey(3)
	c.Put(&a, 0x01, 0) // way 1 (second way 0)
	c.Put(&b, 0x02, 1) // way 2
	c.Put(&n, 0x21, 2) // ways 1 and 2: both used; evict the smaller hash (0x01)
	if _, ok := c.Lookup(&a, 0x01); ok {
		t.Fatal("the entry with the smaller hash was not the one evicted")
	}
	if _, ok := c.Lookup(&b, 0x02); !ok {
		t.Fatal("the entry with the larger hash was evicted")
	}
	if v, ok := c.Lookup(&n, 0x21); !ok || v != 2 {
		t.Fatalf("new key: Lookup = %d, %v", v, ok)
	}
}

func TestEMCInsertProbability(t *testing.T) {
	for _, tc := range []struct {
		inv      uint32
		min, max int
	}{
		{0, 0, 0},
		{1, 10000, 10000},
		{100, 60, 140},
	} {
		c := NewEMC[int](EMCConfig{Entries: 1 << 16, InsertInvProb: tc.inv, Seed: 12345})
		n := 0
		for i := range 10000 {
			k := emcKey(i)
			if c.Insert(&k, k.Hash(0), i) {
				n++
			}
		}
		if n < tc.min || n > tc.max {
			t.Errorf("InsertInvProb %d: %d of 10000 inserted, want %d..%d", tc.inv, n, tc.min, tc.max)
		}
	}
}

func TestEMCRemoveClearAndSweep(t *testing.T) {
	c := NewEMC[*bool](EMCConfig{Entries: 1000, InsertInvProb: 1, Seed: 3})
	if c.Cap() != 1024 {
		t.Fatalf("Cap() = %d for 1000 entries, want 1024", c.Cap())
	}
	alive := make([]bool, 100)
	keys := make([]flow.Key, 100)
	for i := range keys {
		keys[i] = emcKey(i)
		alive[i] = i%2 == 0
		c.Put(&keys[i], uint64(i), &alive[i]) // hashes 0..99: no collisions
	}
	if !c.Remove(&keys[0], 0) || c.Remove(&keys[0], 0) {
		t.Fatal("Remove should succeed once")
	}
	c.SweepStep(c.Cap(), func(p *bool) bool { return *p })
	if c.Len() != 49 {
		t.Fatalf("after removing one and sweeping 50 dead: Len() = %d, want 49", c.Len())
	}
	for i := range keys {
		if _, ok := c.Lookup(&keys[i], uint64(i)); ok != (i%2 == 0 && i != 0) {
			t.Fatalf("key %d: hit = %v", i, ok)
		}
	}
	c.Clear()
	if c.Len() != 0 {
		t.Fatalf("Len() after Clear = %d", c.Len())
	}
}

func TestEMCDefaultConfig(t *testing.T) {
	c := NewEMC[int](DefaultEMCConfig())
	if c.Cap() != DefaultEMCEntries {
		t.Fatalf("Cap() = %d, want %d", c.Cap(), DefaultEMCEntries)
	}
	if c := NewEMC[int](EMCConfig{}); c.Cap() != DefaultEMCEntries {
		t.Fatalf("zero config: Cap() = %d, want %d", c.Cap(), DefaultEMCEntries)
	}
}

func TestEMCLookupDoesNotAllocate(t *testing.T) {
	c := NewEMC[*int](DefaultEMCConfig())
	r := rand.New(rand.NewPCG(1, 1))
	k := randKey(r)
	h := k.Hash(0)
	c.Put(&k, h, new(int))
	miss := randKey(r)
	if n := testing.AllocsPerRun(100, func() {
		c.Lookup(&k, h)
		c.Lookup(&miss, h^1)
	}); n != 0 {
		t.Fatalf("EMC.Lookup allocates %v times per run", n)
	}
}
