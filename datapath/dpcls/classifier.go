package dpcls

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gvs-project/gvs/datapath/flow"
)

// ErrExists is returned by Insert when a megaflow with the same mask and
// masked key is already installed.
var ErrExists = errors.New("megaflow already installed")

// Classifier is the megaflow cache: tuple space search over one subtable
// per distinct mask. See the package documentation for the threading
// model.
type Classifier[T any] struct {
	// vec is the subtable search order, an immutable snapshot replaced
	// by writers (new or emptied subtable) and by Rank.
	vec atomic.Pointer[vector[T]]
	n   atomic.Int64 // number of megaflows

	// mu serialises writers: Insert, Remove and the publication of a new
	// vector by Rank. Readers never take it.
	mu sync.Mutex
	// guarded by mu
	byMask map[flow.Words]*subtable[T]

	// tomb marks removed slots in every subtable of this classifier.
	tomb *entry[T]
}

// vector is an immutable subtable search order.
type vector[T any] struct {
	subs []*subtable[T]
}

// New returns an empty classifier.
func New[T any]() *Classifier[T] {
	c := &Classifier[T]{byMask: make(map[flow.Words]*subtable[T]), tomb: new(entry[T])}
	c.vec.Store(&vector[T]{})
	return c
}

// Insert installs the megaflow m with value v. Key bits outside the mask
// are ignored. It returns an error wrapping ErrExists if a megaflow with
// the same mask and masked key is installed. Callers must not install
// overlapping megaflows with different masks: which one a key that matches
// both finds is unspecified.
func (c *Classifier[T]) Insert(m *flow.Match, v T) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.byMask[*m.Mask.W()]
	if s == nil {
		s = newSubtable(&m.Mask, c.tomb)
		s.insert(&m.Key, s.hash(&m.Key), v)
		c.byMask[*m.Mask.W()] = s
		old := c.vec.Load().subs
		c.vec.Store(&vector[T]{subs: append(slices.Clip(old), s)})
		c.n.Add(1)
		return nil
	}
	if dup := s.insert(&m.Key, s.hash(&m.Key), v); dup != nil {
		return fmt.Errorf("dpcls: insert into subtable with %d mask words: %w", len(s.idx), ErrExists)
	}
	c.n.Add(1)
	return nil
}

// Remove deletes the megaflow with m's mask and masked key and reports
// whether it was installed. Once Remove returns, no lookup that starts
// afterwards returns it.
func (c *Classifier[T]) Remove(m *flow.Match) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.byMask[*m.Mask.W()]
	if s == nil || !s.remove(&m.Key, s.hash(&m.Key)) {
		return false
	}
	c.n.Add(-1)
	if s.live == 0 {
		// Readers holding the old vector may still probe the empty
		// subtable; they find nothing, as they would a moment later.
		delete(c.byMask, *m.Mask.W())
		old := c.vec.Load().subs
		subs := make([]*subtable[T], 0, len(old)-1)
		for _, o := range old {
			if o != s {
				subs = append(subs, o)
			}
		}
		c.vec.Store(&vector[T]{subs: subs})
	}
	return true
}

// Lookup returns the value of the megaflow that matches k. It counts the
// hit for Rank, so only the classifier's owning goroutine may call it (use
// Peek elsewhere). It never blocks and never allocates.
func (c *Classifier[T]) Lookup(k *flow.Key) (v T, ok bool) {
	kw := k.W()
	for _, s := range c.vec.Load().subs {
		if e := s.lookup(kw, s.hash(k)); e != nil {
			s.hits++
			return e.val, true
		}
	}
	return v, false
}

// Peek is Lookup without hit counting; any goroutine may call it.
func (c *Classifier[T]) Peek(k *flow.Key) (v T, ok bool) {
	kw := k.W()
	for _, s := range c.vec.Load().subs {
		if e := s.lookup(kw, s.hash(k)); e != nil {
			return e.val, true
		}
	}
	return v, false
}

// Get returns the value of the megaflow with exactly m's mask and masked
// key (not any megaflow that would match m.Key). Any goroutine may call
// it.
func (c *Classifier[T]) Get(m *flow.Match) (v T, ok bool) {
	mw := m.Mask.W()
	for _, s := range c.vec.Load().subs {
		if *s.mask.W() != *mw {
			continue
		}
		if e := s.lookup(m.Key.W(), s.hash(&m.Key)); e != nil {
			return e.val, true
		}
		break
	}
	return v, false
}

// batchChunk is how many keys LookupBatch tracks in one bitmap.
const batchChunk = 64

// LookupBatch looks up every key in keys, storing the value in out[i] and
// whether there was a match in ok[i] (out[i] is the zero value on a miss).
// out and ok must be at least as long as keys. Like Open vSwitch's
// dpcls_lookup it walks the subtables once, probing all keys still
// unmatched in each, so the hashing, probing and branches of one subtable
// run back to back. Same ownership rule as Lookup; never allocates.
func (c *Classifier[T]) LookupBatch(keys []*flow.Key, out []T, ok []bool) {
	out, ok = out[:len(keys)], ok[:len(keys)]
	subs := c.vec.Load().subs
	for base := 0; base < len(keys); base += batchChunk {
		end := min(base+batchChunk, len(keys))
		lookupChunk(subs, keys[base:end], out[base:end], ok[base:end])
	}
}

func lookupChunk[T any](subs []*subtable[T], keys []*flow.Key, out []T, ok []bool) {
	var (
		hashes [batchChunk]uint64
		tags   [batchChunk]uint64
		first  [batchChunk]*entry[T]
	)
	left := ^uint64(0) >> (batchChunk - len(keys))
	for _, s := range subs {
		ts := s.tabs.Load()
		t := ts.cur
		// Pass 1 hashes. Pass 2 loads each key's home slot: a loop of a
		// few instructions per key, so the out-of-order core has the
		// cache misses of many keys in flight at once (a large table
		// misses on nearly every slot). Hashing in the same loop would
		// make each iteration long and the misses queue.
		for m := left; m != 0; m &= m - 1 {
			i := bits.TrailingZeros64(m)
			hashes[i] = s.hash(keys[i])
		}
		for m := left; m != 0; m &= m - 1 {
			i := bits.TrailingZeros64(m)
			sl := &t.slots[hashes[i]&t.mask]
			first[i] = sl.e.Load()
			tags[i] = sl.tag.Load()
		}
		// Pass 3: compare with the home slot's entry (the usual case at
		// half load or less), again independent across keys; probe on
		// only when the home slot holds another key.
		found := left
		for m := left; m != 0; m &= m - 1 {
			i := bits.TrailingZeros64(m)
			e, h, kw := first[i], hashes[i], keys[i].W()
			if e != nil && (e == s.tomb || tags[i] != h || !s.equal(e, kw)) {
				e = s.find(t, kw, h)
			}
			if e == nil && ts.old != nil { // resizing: not yet copied?
				e = s.find(ts.old, kw, h)
			}
			if e == nil {
				continue
			}
			out[i], ok[i] = e.val, true
			left &^= 1 << i
		}
		s.hits += uint64(bits.OnesCount64(found &^ left))
		if left == 0 {
			return
		}
	}
	var zero T
	for m := left; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		out[i], ok[i] = zero, false
	}
}

// rankMigrateSteps bounds the resize work Rank does per subtable.
const rankMigrateSteps = 64

// Rank re-sorts the subtable search order by the hits counted since the
// previous Rank (most hit first) and resets the counts, as Open vSwitch's
// periodic dpcls subtable sort. It also advances unfinished table resizes
// a bounded amount. Only the owning goroutine may call it. It never waits
// for a writer: if one holds the lock it does nothing and returns false.
func (c *Classifier[T]) Rank() bool {
	if !c.mu.TryLock() {
		return false
	}
	defer c.mu.Unlock()
	subs := slices.Clone(c.vec.Load().subs)
	slices.SortStableFunc(subs, func(a, b *subtable[T]) int {
		switch {
		case a.hits > b.hits:
			return -1
		case a.hits < b.hits:
			return 1
		}
		return 0
	})
	for _, s := range subs {
		s.hits = 0
		// Move a resize along even when no writes come to do it.
		for range rankMigrateSteps {
			s.migrate()
		}
	}
	c.vec.Store(&vector[T]{subs: subs})
	return true
}

// Len returns the number of installed megaflows.
func (c *Classifier[T]) Len() int { return int(c.n.Load()) }

// Subtables returns the number of distinct masks.
func (c *Classifier[T]) Subtables() int { return len(c.vec.Load().subs) }

// SubtableStats describes one subtable in search order.
type SubtableStats struct {
	Mask    flow.Mask
	Entries int // megaflows seen by a scan of the current table
	Slots   int // hash table capacity
	Words   int // non-zero mask words compared per probe
}

// Stats returns per-subtable statistics in search order. Any goroutine
// may call it. (Hit counts are deliberately absent: they belong to the
// owning goroutine.)
func (c *Classifier[T]) Stats() []SubtableStats {
	subs := c.vec.Load().subs
	st := make([]SubtableStats, len(subs))
	for i, s := range subs {
		n := 0
		s.rangeEntries(func(*entry[T]) bool { n++; return true })
		st[i] = SubtableStats{Mask: s.mask, Entries: n, Slots: len(s.tabs.Load().cur.slots), Words: len(s.idx)}
	}
	return st
}

// Range calls fn for each installed megaflow until fn returns false. The
// Match is reused between calls: copy it to keep it. Any goroutine may
// call Range; megaflows inserted or removed during the walk may or may not
// be seen. fn may call Insert and Remove.
func (c *Classifier[T]) Range(fn func(m *flow.Match, v T) bool) {
	var m flow.Match
	for _, s := range c.vec.Load().subs {
		m.Mask = s.mask
		more := s.rangeEntries(func(e *entry[T]) bool {
			s.unmask(e, &m.Key)
			return fn(&m, e.val)
		})
		if !more {
			return
		}
	}
}
