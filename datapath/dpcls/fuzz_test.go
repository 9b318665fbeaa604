package dpcls

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gvs-project/gvs/datapath/flow"
)

// FuzzClassifierMatchesLinear drives the classifier with a fuzzed sequence
// of inserts, removals, ranks and lookups and compares it with the linear
// reference after every step.
func FuzzClassifierMatchesLinear(f *testing.F) {
	f.Add(uint64(1), []byte{0, 4, 8, 1, 2, 3, 12, 16, 5, 9})
	f.Add(uint64(2), []byte{0x20, 0x24, 0x28, 0x2c, 0x21, 0x25, 0x22, 0x26, 0x23})
	f.Add(uint64(3), slices.Repeat([]byte{0, 0, 1}, 40))
	sh := shapes()
	f.Fuzz(func(t *testing.T, seed uint64, ops []byte) {
		if len(ops) > 300 {
			ops = ops[:300]
		}
		r := rand.New(rand.NewPCG(seed, 1))
		c := New[int]()
		ref := &linear{}
		for n, op := range ops {
			switch op & 3 {
			case 0: // insert
				m := flow.Match{Key: randKey(r), Mask: sh[int(op>>2)%len(sh)].mask}
				m.Normalize()
				if ref.find(&m) >= 0 {
					if err := c.Insert(&m, -1); !errors.Is(err, ErrExists) {
						t.Fatalf("op %d: duplicate Insert: err = %v", n, err)
					}
					continue
				}
				if slices.ContainsFunc(ref.ms, func(o flow.Match) bool { return overlaps(&o, &m) }) {
					continue
				}
				if err := c.Insert(&m, n); err != nil {
					t.Fatalf("op %d: Insert: %v", n, err)
				}
				ref.ms, ref.vals = append(ref.ms, m), append(ref.vals, n)
			case 1: // remove
				if len(ref.ms) == 0 {
					continue
				}
				i := int(op>>2) % len(ref.ms)
				if !c.Remove(&ref.ms[i]) {
					t.Fatalf("op %d: Remove of an installed megaflow failed", n)
				}
				ref.remove(i)
			case 2:
				c.Rank()
			}
			keys := []flow.Key{randKey(r)}
			if len(ref.ms) > 0 {
				keys = append(keys, randCovered(r, &ref.ms[r.IntN(len(ref.ms))]))
			}
			checkAgainst(t, c, ref, keys)
		}
		checkRange(t, c, ref)
	})
}
