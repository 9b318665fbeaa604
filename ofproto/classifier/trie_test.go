package classifier

import (
	"math/rand/v2"
	"testing"
)

// naivePlens returns the prefix lengths L (as bit L-1) for which some
// stored prefix equals v's first L bits.
func naivePlens(prefixes map[[2]uint64]int, v u128) u128 {
	var out u128
	for k, n := range prefixes {
		if n == 0 {
			continue
		}
		p, l := u128{k[0]}, int(k[1])
		if v.prefix(l) == p {
			setBit(&out, l-1)
		}
	}
	return out
}

func TestTrieLookupAgreesWithNaiveModelAndIsCanonical(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	val := func() u128 {
		// A few clustered addresses so that prefixes share paths.
		base := []uint64{0x0a000000, 0x0a010000, 0xc0a80000, 0x80000000}[rng.IntN(4)]
		return u128{(base | uint64(rng.IntN(1<<10))) << 32}
	}
	for round := range 50 {
		var root *tnode
		stored := map[[2]uint64]int{}
		var list [][2]uint64
		for range 1 + rng.IntN(60) {
			l := 1 + rng.IntN(32)
			v := val().prefix(l)
			root = trieInsert(root, v, l)
			k := [2]uint64{v[0], uint64(l)}
			stored[k]++
			list = append(list, k)
		}
		// Remove some, then compare against a trie built from scratch.
		for _, k := range list {
			if rng.IntN(3) == 0 {
				root = trieRemove(root, u128{k[0]}, int(k[1]))
				stored[k]--
			}
		}
		var fresh *tnode
		for k, n := range stored {
			for range n {
				fresh = trieInsert(fresh, u128{k[0]}, int(k[1]))
			}
		}
		for range 200 {
			v := val()
			if rng.IntN(4) == 0 {
				v = u128{uint64(rng.Uint32()) << 32}
			}
			var plens, plens2 u128
			n := trieLookup(root, v, 32, &plens)
			n2 := trieLookup(fresh, v, 32, &plens2)
			if n != n2 || plens != plens2 {
				t.Fatalf("round %d: trie after removals gives (%d, %x), rebuilt trie (%d, %x)", round, n, plens, n2, plens2)
			}
			if want := naivePlens(stored, v); plens != want {
				t.Fatalf("round %d: plens for %08x = %x, want %x", round, v[0]>>32, plens, want)
			}
			// Any value sharing the first n bits has the same plens.
			for range 20 {
				o := u128{uint64(rng.Uint32()) << 32}
				o = u128{v.prefix(n)[0] | o[0]&^u128{^uint64(0)}.prefix(n)[0]}
				if got := naivePlens(stored, o); got != plens {
					t.Fatalf("round %d: %08x and %08x share %d bits but plens %x vs %x", round, v[0]>>32, o[0]>>32, n, plens, got)
				}
			}
		}
	}
}

func TestCIDRLen(t *testing.T) {
	cases := []struct {
		m     u128
		width int
		want  int
	}{
		{u128{}, 32, 0},
		{u128{0xffffff00 << 32}, 32, 24},
		{u128{0xffffffff << 32}, 32, 32},
		{u128{0xff00ff00 << 32}, 32, 0},
		{u128{^uint64(0), ^uint64(0)}, 128, 128},
		{u128{^uint64(0), 0xffff000000000000}, 128, 80},
		{u128{^uint64(0), 1}, 128, 0},
	}
	for _, tc := range cases {
		if got := cidrLen(tc.m, tc.width); got != tc.want {
			t.Errorf("cidrLen(%x) = %d, want %d", tc.m, got, tc.want)
		}
	}
}
