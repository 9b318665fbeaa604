package dpcls

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gvs-project/gvs/datapath/flow"
)

// exactMask is the exact 5-tuple megaflow mask (plus recirc_id), the
// common shape for OVN ACL-heavy pipelines.
func exactMask() flow.Mask { return shapes()[0].mask }

// benchKey sets the fields that make flow i of subtable j unique.
func benchKey(k *flow.Key, j, i int) {
	k.InPort = uint32(j + 1)
	k.NwSrc = 0x0a000000 + uint32(i)
	k.TpSrc = uint16(i)
}

func benchTemplate() flow.Key {
	var k flow.Key
	k.EthType, k.NwDst, k.NwProto, k.TpDst = flow.EthTypeIPv4, 0xc0a80001, flow.IPProtoTCP, 80
	return k
}

// buildClassifier installs n megaflows spread over subtables masks that
// differ in the nw_dst prefix length and in_port (so they never overlap).
func buildClassifier(b *testing.B, n, subtables int) *Classifier[*int] {
	b.Helper()
	c := New[*int]()
	val := new(int)
	m := flow.Match{Key: benchTemplate()}
	exact := exactMask()
	for i := range n {
		j := i % subtables
		m.Mask = exact
		if subtables > 1 {
			m.Mask.NwDst = ^uint32(0) << j
		}
		benchKey(&m.Key, j, i)
		if err := c.Insert(&m, val); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC() // do not bill the timed loop for collecting the setup's garbage
	return c
}

// benchOrder returns a random lookup order over n flows, a power of two
// long so the loop indexes it with a mask.
func benchOrder(n int) []uint32 {
	l := 1
	for l < n || l < 4096 {
		l *= 2
	}
	r := rand.New(rand.NewPCG(1, 2))
	o := make([]uint32, l)
	for i := range o {
		o[i] = uint32(r.IntN(n))
	}
	return o
}

func BenchmarkLookup(b *testing.B) {
	cases := []struct{ flows, subtables int }{
		{1, 1}, {256, 1}, {10000, 1}, {100000, 1}, {1000000, 1},
		{10000, 16},
	}
	for _, tc := range cases {
		var c *Classifier[*int] // built once, not for every b.N
		b.Run(fmt.Sprintf("flows=%d/subtables=%d", tc.flows, tc.subtables), func(b *testing.B) {
			if c == nil {
				c = buildClassifier(b, tc.flows, tc.subtables)
			}
			order := benchOrder(tc.flows)
			mask := len(order) - 1
			k := benchTemplate()
			misses := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f := int(order[i&mask])
				benchKey(&k, f%tc.subtables, f)
				if _, ok := c.Lookup(&k); !ok {
					misses++
				}
			}
			if misses > 0 {
				b.Fatalf("%d misses", misses)
			}
		})
	}
}

func BenchmarkLookupBatch(b *testing.B) {
	cases := []struct{ flows, subtables int }{
		{10000, 1}, {1000000, 1}, {10000, 16},
	}
	for _, tc := range cases {
		var c *Classifier[*int]
		b.Run(fmt.Sprintf("flows=%d/subtables=%d", tc.flows, tc.subtables), func(b *testing.B) {
			if c == nil {
				c = buildClassifier(b, tc.flows, tc.subtables)
			}
			order := benchOrder(tc.flows)
			mask := len(order) - 1
			var keys [32]flow.Key
			var ptrs [32]*flow.Key
			for i := range keys {
				keys[i] = benchTemplate()
				ptrs[i] = &keys[i]
			}
			var out [32]*int
			var ok [32]bool
			misses := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := range keys {
					f := int(order[(i*32+j)&mask])
					benchKey(&keys[j], f%tc.subtables, f)
				}
				c.LookupBatch(ptrs[:], out[:], ok[:])
				for j := range ok {
					if !ok[j] {
						misses++
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*32), "ns/key")
			if misses > 0 {
				b.Fatalf("%d misses", misses)
			}
		})
	}
}

func BenchmarkEMCLookup(b *testing.B) {
	for _, n := range []int{256, 4096} {
		b.Run(fmt.Sprintf("flows=%d", n), func(b *testing.B) { benchEMCLookup(b, n) })
	}
}

func benchEMCLookup(b *testing.B, n int) {
	c := NewEMC[*int](DefaultEMCConfig())
	val := new(int)
	keys := make([]flow.Key, n)
	hashes := make([]uint64, n)
	for i := range keys {
		keys[i] = benchTemplate()
		benchKey(&keys[i], 0, i)
		hashes[i] = keys[i].Hash(0)
		c.Put(&keys[i], hashes[i], val)
	}
	// Keep only the keys the 2-way cache holds (a few collide out).
	held := keys[:0]
	var heldHashes []uint64
	for i := range keys {
		if _, ok := c.Lookup(&keys[i], hashes[i]); ok {
			held = append(held, keys[i])
			heldHashes = append(heldHashes, hashes[i])
		}
	}
	order := benchOrder(len(held))
	mask := len(order) - 1
	misses := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := order[i&mask]
		if _, ok := c.Lookup(&held[j], heldHashes[j]); !ok {
			misses++
		}
	}
	if misses > 0 {
		b.Fatalf("%d misses", misses)
	}
}

func BenchmarkInsertRemove(b *testing.B) {
	c := buildClassifier(b, 10000, 1)
	m := flow.Match{Key: benchTemplate(), Mask: exactMask()}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		benchKey(&m.Key, 0, 10000+i%1000)
		if err := c.Insert(&m, nil); err != nil {
			b.Fatal(err)
		}
		c.Remove(&m)
	}
}

// BenchmarkRandomReadBaseline measures one dependent random read from a
// 96 MB array (the size of a one-million-megaflow subtable: 32 MB of slots
// and 64 MB of entries). A lookup in a table that large makes two such
// reads (slot, then entry), so this is the machine's floor for
// BenchmarkLookup/flows=1000000; compare ratios, not absolute numbers.
func BenchmarkRandomReadBaseline(b *testing.B) {
	const lines = 96 << 20 / 64
	a := make([]uint64, lines*8)
	p := rand.New(rand.NewPCG(5, 6)).Perm(lines)
	for i := range p {
		a[p[i]*8] = uint64(p[(i+1)%lines] * 8) // a single random cycle through every line
	}
	b.ResetTimer()
	x := uint64(0)
	for i := 0; i < b.N; i++ {
		x = a[x]
	}
	if x == 1 {
		b.Log(x) // keep x alive
	}
}
