package xlate

import (
	"slices"
	"testing"

	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The dp_hash table is laid out as Open vSwitch's: max(16, the power of
// two at or above total/min weight) slots handed out by Webster's method,
// ties to the first bucket.
func TestSelectGroupHashTableIsWebstersLikeOpenVSwitch(t *testing.T) {
	for _, tc := range []struct {
		weights []uint16
		want    []int
	}{
		{[]uint16{100, 100, 50}, []int{0, 1, 2, 0, 1, 0, 1, 2, 0, 1, 0, 1, 2, 0, 1, 0}},
		{[]uint16{1, 1}, []int{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}},
		{[]uint16{0, 5}, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
	} {
		var bs []ofp.Bucket
		for _, w := range tc.weights {
			bs = append(bs, ofp.Bucket{Weight: w})
		}
		g := NewGroup(1, ofp.GroupTypeSelect, bs, "", 0, nil, nil)
		if !slices.Equal(g.hashMap, tc.want) || g.hashMask != uint32(len(tc.want)-1) {
			t.Errorf("weights %v: table %v (mask %#x), want %v", tc.weights, g.hashMap, g.hashMask, tc.want)
		}
	}
	// 1 against 40: 41 slots round up to 64.
	g := NewGroup(1, ofp.GroupTypeSelect, []ofp.Bucket{{Weight: 1}, {Weight: 40}}, "", 0, nil, nil)
	if len(g.hashMap) != 64 {
		t.Errorf("weights 1, 40: %d slots, want 64", len(g.hashMap))
	}
}

func TestSelectGroupHashAlgorithmFollowsTheSelectionMethod(t *testing.T) {
	for _, tc := range []struct {
		method string
		param  uint64
		alg    odp.HashAlg
		basis  uint32
	}{
		{"", 0, odp.HashSymL4, 0},
		{"dp_hash", 0, odp.HashL4, 0},
		{"dp_hash", 1<<32 | 7, odp.HashSymL4, 7},
		{"dp_hash", 9<<32 | 3, odp.HashL4, 3},
	} {
		g := NewGroup(1, ofp.GroupTypeSelect, []ofp.Bucket{{Weight: 1}}, tc.method, tc.param, nil, nil)
		if alg, basis := g.dpHashAlg(); alg != tc.alg || basis != tc.basis {
			t.Errorf("%q %#x: alg %d basis %d, want %d %d", tc.method, tc.param, alg, basis, tc.alg, tc.basis)
		}
	}
}
