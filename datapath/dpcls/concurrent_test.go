package dpcls

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/flow"
)

// TestConcurrentWriterNeverHidesOrResurrectsMegaflows runs one writer
// inserting and removing megaflows (in bursts that make the subtables'
// tables grow, shrink and come and go) while the owning reader looks up
// continuously. Each megaflow has a counter the writer bumps before and
// after each Insert or Remove (odd: operation in flight; 4n+2: installed;
// 4n: absent). A lookup bracketed by two equal even readings overlapped no
// write of that megaflow, so its result is exact: found with the right
// value if installed, not found if absent.
func TestConcurrentWriterNeverHidesOrResurrectsMegaflows(t *testing.T) {
	const n = 4000
	sh := shapes()[:4] // every shape matches in_port: distinct in_port values never overlap
	ms := make([]flow.Match, n)
	keys := make([]flow.Key, n)
	r := rand.New(rand.NewPCG(7, 7))
	for i := range ms {
		ms[i].Mask = sh[i%len(sh)].mask
		ms[i].Key.InPort = uint32(i % len(sh))
		ms[i].Key.RecircID = uint32(i)
		ms[i].Key.EthType = flow.EthTypeIPv4
		ms[i].Key.NwSrc, ms[i].Key.NwDst = uint32(i), 0x0a000000|uint32(i)<<8
		ms[i].Key.NwProto, ms[i].Key.TpSrc, ms[i].Key.TpDst = flow.IPProtoTCP, uint16(i), 80
		ms[i].Normalize()
		keys[i] = randCovered(r, &ms[i])
	}
	// Masks that do not include recirc_id would make megaflows with the
	// same in_port identical; make each key unique within its mask.
	for i := range ms {
		if ms[i].Mask.RecircID == 0 {
			t.Fatalf("shape %d does not match recirc_id", i%len(sh))
		}
	}
	c := New[int]()
	state := make([]atomic.Uint64, n)

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // writer
		defer wg.Done()
		r := rand.New(rand.NewPCG(1, 2))
		for round := 0; !stop.Load(); round++ {
			// A burst of inserts, then a burst of removals, then random.
			for i := range n {
				if stop.Load() {
					return
				}
				switch {
				case round%3 == 0 && state[i].Load()%4 == 0,
					round%3 == 1 && state[i].Load()%4 == 2,
					round%3 == 2 && r.IntN(2) == 0:
				default:
					continue
				}
				st := state[i].Load()
				state[i].Store(st + 1)
				if st%4 == 0 {
					if err := c.Insert(&ms[i], i); err != nil {
						t.Errorf("Insert(%d): %v", i, err)
						return
					}
				} else if !c.Remove(&ms[i]) {
					t.Errorf("Remove(%d) of an installed megaflow returned false", i)
					return
				}
				state[i].Store(st + 2)
			}
		}
	}()

	wg.Add(1)
	go func() { // control plane: dumps and peeks, which must not race either
		defer wg.Done()
		r := rand.New(rand.NewPCG(3, 4))
		for !stop.Load() {
			n := 0
			c.Range(func(m *flow.Match, v int) bool {
				if !m.Matches(&keys[v]) {
					t.Errorf("Range yielded megaflow %d with a match that does not cover its key", v)
				}
				n++
				return true
			})
			_ = c.Stats()
			i := r.IntN(len(ms))
			if v, ok := c.Peek(&keys[i]); ok && v != i {
				t.Errorf("Peek(key %d) = %d", i, v)
			}
			if v, ok := c.Get(&ms[i]); ok && v != i {
				t.Errorf("Get(megaflow %d) = %d", i, v)
			}
		}
	}()

	deadline := time.Now().Add(400 * time.Millisecond)
	var checked, found int
	ptrs := make([]*flow.Key, 32)
	out := make([]int, 32)
	ok := make([]bool, 32)
	var before [32]uint64
	idx := make([]int, 32)
	for iter := 0; time.Now().Before(deadline) && !t.Failed(); iter++ {
		if iter%100 == 0 {
			c.Rank()
		}
		i := r.IntN(n)
		s0 := state[i].Load()
		v, hit := c.Lookup(&keys[i])
		if s1 := state[i].Load(); s0 == s1 && s0%2 == 0 {
			checked++
			if want := s0%4 == 2; hit != want || (hit && v != i) {
				t.Fatalf("megaflow %d (state %d, unchanged during the lookup): Lookup = %d, %v", i, s0, v, hit)
			}
			if hit {
				found++
			}
		}
		// The same with a batch.
		for j := range ptrs {
			idx[j] = r.IntN(n)
			ptrs[j] = &keys[idx[j]]
			before[j] = state[idx[j]].Load()
		}
		c.LookupBatch(ptrs, out, ok)
		for j := range ptrs {
			s0, s1 := before[j], state[idx[j]].Load()
			if s0 != s1 || s0%2 != 0 {
				continue
			}
			checked++
			if want := s0%4 == 2; ok[j] != want || (ok[j] && out[j] != idx[j]) {
				t.Fatalf("megaflow %d (state %d, unchanged during the batch): LookupBatch = %d, %v", idx[j], s0, out[j], ok[j])
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if checked < 1000 || found == 0 {
		t.Fatalf("only %d lookups were checkable (%d found); the test proves nothing", checked, found)
	}
	t.Logf("%d lookups checked, %d single lookups found their megaflow", checked, found)
}
