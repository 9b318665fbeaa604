package dpcls

import (
	"math/rand/v2"
	"sync/atomic"

	"github.com/gvs-project/gvs/datapath/flow"
)

// inlineWords is how many masked key words an entry holds in its own 64
// bytes (with a pointer-sized value): an exact 5-tuple megaflow with
// recirc_id (recirc_id, in_port, eth_type, nw_src+nw_dst, nw_proto,
// tp_src+tp_dst) needs 6. Entries of wider masks are wideEntry values.
const inlineWords = 7

// minSlots is the smallest hash table a subtable starts with.
const minSlots = 8

// entry is one megaflow in a subtable. It is immutable once published:
// readers follow the pointer without synchronisation beyond the atomic
// slot load, and the garbage collector reclaims it after Remove.
//
// It stores only the key words selected by the subtable's mask (compact,
// like Open vSwitch's miniflow) rather than a whole flow.Key: at one
// million megaflows that is 64 bytes per entry instead of 384, and a probe
// touches one cache line instead of five. The words are compared straight
// from the entry, with no pointer to follow, so their loads issue together
// with the value's.
type entry[T any] struct {
	val T
	w   [inlineWords]uint64 // masked key words at subtable.idx[:inlineWords]
}

// wideEntry is the allocation behind an entry of a subtable whose mask
// has more than inlineWords non-zero words; slots point to its first
// field (see wide).
type wideEntry[T any] struct {
	entry[T]
	more [flow.KeyWords - inlineWords]uint64 // words at subtable.idx[inlineWords:]
}

// word returns masked key word j (the word at subtable.idx[j]).
func (s *subtable[T]) word(e *entry[T], j int) uint64 {
	if j < inlineWords {
		return e.w[j]
	}
	return wide(e).more[j-inlineWords]
}

// slot is one open-addressing bucket. tag holds the full hash of the entry
// so that probes skip non-matching slots without dereferencing e. A writer
// stores tag before e, and a reader loads e before tag, so a reader that
// sees an entry sees its tag (or a later one, which only happens after the
// entry was removed).
type slot[T any] struct {
	tag atomic.Uint64
	e   atomic.Pointer[entry[T]]
}

// table is an open-addressing hash table with linear probing. Slots go
// from nil to an entry, from an entry to the tombstone and from the
// tombstone to an entry, never back to nil, so a probe that stops at nil
// cannot miss an entry that was present when the probe started. The table
// is never more than half used (entries plus tombstones), so probes end.
type table[T any] struct {
	mask  uint64 // len(slots)-1; len is a power of two
	slots []slot[T]
}

// tables is what readers probe, published as one immutable pair. While
// the table is being resized, cur is the new table and old the previous
// one: writers copy old's entries into cur a few slots per write
// (migration), so no single Insert pays for copying a million entries.
// An entry stays in old after being copied, and Remove deletes it from
// both, so a reader that misses in cur and then probes old cannot miss an
// entry that is present, nor find one that was removed.
type tables[T any] struct {
	cur, old *table[T]
}

func newTable[T any](n int) *table[T] {
	t := &table[T]{mask: uint64(n - 1), slots: make([]slot[T], n)}
	adviseHugePages(t.slots)
	return t
}

// subtable holds the megaflows that share one mask.
type subtable[T any] struct {
	// Immutable after creation.
	mask  flow.Mask
	idx   []uint8  // indices of the mask's non-zero words
	mw    []uint64 // the mask's non-zero words, parallel to idx
	basis uint64   // hash seed, random per subtable
	tomb  *entry[T]

	tabs atomic.Pointer[tables[T]]

	// Guarded by Classifier.mu (writers only).
	live   int // entries
	used   int // entries plus tombstones in tabs.cur
	cursor int // next slot of tabs.old to migrate

	// hits is owned by the classifier's reading goroutine: Lookup and
	// LookupBatch increment it and Rank reads and resets it. It sits on
	// its own cache line so that the counting reader does not share a
	// line with fields writers touch.
	_    [64]byte
	hits uint64
	_    [56]byte
}

func newSubtable[T any](m *flow.Mask, tomb *entry[T]) *subtable[T] {
	s := &subtable[T]{mask: *m, basis: rand.Uint64(), tomb: tomb}
	s.idx = m.NonZero(nil)
	mw := m.W()
	s.mw = make([]uint64, len(s.idx))
	for j, i := range s.idx {
		s.mw[j] = mw[i]
	}
	s.tabs.Store(&tables[T]{cur: newTable[T](minSlots)})
	return s
}

// hash returns the hash of k seen through the subtable's mask.
func (s *subtable[T]) hash(k *flow.Key) uint64 {
	return k.HashWords(&s.mask, s.idx, s.basis)
}

// equal reports whether k seen through the mask equals e's key.
func (s *subtable[T]) equal(e *entry[T], kw *flow.Words) bool {
	idx, mw := s.idx, s.mw
	if len(idx) > inlineWords || len(mw) != len(idx) {
		return s.equalWide(e, kw)
	}
	w := e.w[:len(idx)]
	for j, i := range idx {
		if kw[i]&mw[j] != w[j] {
			return false
		}
	}
	return true
}

func (s *subtable[T]) equalWide(e *entry[T], kw *flow.Words) bool {
	for j, i := range s.idx {
		if kw[i]&s.mw[j] != s.word(e, j) {
			return false
		}
	}
	return true
}

// find returns the entry matching k, whose masked hash is h, or nil.
// Safe for any goroutine.
func (s *subtable[T]) find(t *table[T], kw *flow.Words, h uint64) *entry[T] {
	for p := h & t.mask; ; p = (p + 1) & t.mask {
		sl := &t.slots[p]
		e := sl.e.Load()
		if e == nil {
			return nil
		}
		if e != s.tomb && sl.tag.Load() == h && s.equal(e, kw) {
			return e
		}
	}
}

// lookup returns the entry matching k, whose masked hash is h, or nil.
// Safe for any goroutine.
func (s *subtable[T]) lookup(kw *flow.Words, h uint64) *entry[T] {
	ts := s.tabs.Load()
	if e := s.find(ts.cur, kw, h); e != nil {
		return e
	}
	if ts.old != nil {
		return s.find(ts.old, kw, h)
	}
	return nil
}

// newEntry builds the entry for key k (seen through the mask) with value v.
func (s *subtable[T]) newEntry(k *flow.Key, v T) *entry[T] {
	kw := k.W()
	if len(s.idx) <= inlineWords {
		e := &entry[T]{val: v}
		for j, i := range s.idx {
			e.w[j] = kw[i] & s.mw[j]
		}
		return e
	}
	we := &wideEntry[T]{entry: entry[T]{val: v}}
	for j, i := range s.idx {
		if j < inlineWords {
			we.w[j] = kw[i] & s.mw[j]
		} else {
			we.more[j-inlineWords] = kw[i] & s.mw[j]
		}
	}
	return &we.entry
}

// insert adds k -> v (k's masked hash is h) unless an entry with the same
// masked key exists, in which case it returns that entry and changes
// nothing.
//
// Preconditions: Classifier.mu is held.
func (s *subtable[T]) insert(k *flow.Key, h uint64, v T) (dup *entry[T]) {
	s.migrate()
	kw := k.W()
	ts := s.tabs.Load()
	if ts.old != nil {
		if e := s.find(ts.old, kw, h); e != nil {
			return e
		}
	}
	t := ts.cur
	free := -1
	p := h & t.mask
	for ; ; p = (p + 1) & t.mask {
		sl := &t.slots[p]
		e := sl.e.Load()
		if e == nil {
			break
		}
		if e == s.tomb {
			if free < 0 {
				free = int(p)
			}
			continue
		}
		if sl.tag.Load() == h && s.equal(e, kw) {
			return e
		}
	}
	if free < 0 && 2*(s.used+1) > len(t.slots) {
		s.resize()
		return s.insert(k, h, v)
	}
	if free >= 0 {
		p = uint64(free)
	} else {
		s.used++
	}
	e := s.newEntry(k, v)
	sl := &t.slots[p]
	sl.tag.Store(h)
	sl.e.Store(e)
	s.live++
	return nil
}

// remove deletes the entry matching k (hash h) and reports whether there
// was one.
//
// Preconditions: Classifier.mu is held.
func (s *subtable[T]) remove(k *flow.Key, h uint64) bool {
	s.migrate()
	kw := k.W()
	ts := s.tabs.Load()
	found := s.removeFrom(ts.cur, kw, h)
	if ts.old != nil && s.removeFrom(ts.old, kw, h) {
		found = true
	}
	if !found {
		return false
	}
	s.live--
	if ts.old == nil && len(ts.cur.slots) > minSlots && 16*s.live < len(ts.cur.slots) {
		s.resize() // give memory back after mass removal
	}
	return true
}

func (s *subtable[T]) removeFrom(t *table[T], kw *flow.Words, h uint64) bool {
	for p := h & t.mask; ; p = (p + 1) & t.mask {
		sl := &t.slots[p]
		e := sl.e.Load()
		if e == nil {
			return false
		}
		if e != s.tomb && sl.tag.Load() == h && s.equal(e, kw) {
			sl.e.Store(s.tomb)
			return true
		}
	}
}

// migrateMin is the least number of old slots a write migrates.
const migrateMin = 64

// resize starts moving the entries to a new table sized for s.live
// (growing, shrinking or shedding tombstones), finishing any migration
// still under way first.
//
// Preconditions: Classifier.mu is held.
func (s *subtable[T]) resize() {
	for s.tabs.Load().old != nil {
		s.migrate()
	}
	n := minSlots
	for n < 4*s.live {
		n *= 2
	}
	cur := s.tabs.Load().cur
	s.used, s.cursor = 0, 0
	s.tabs.Store(&tables[T]{cur: newTable[T](n), old: cur})
}

// migrate copies the next slots of the old table, if there is one, into
// the current one; it copies enough per call (at least migrateMin, more
// when the new table is much smaller) that the migration ends before the
// current table is half used, however the writes that drive it mix
// inserts and removals: a migration takes at most len(cur)/4 writes, and
// the live entries it copies fill at most a quarter of cur.
//
// Preconditions: Classifier.mu is held.
func (s *subtable[T]) migrate() {
	ts := s.tabs.Load()
	if ts.old == nil {
		return
	}
	old, cur := ts.old, ts.cur
	end := min(s.cursor+max(migrateMin, 4*len(old.slots)/len(cur.slots)), len(old.slots))
	for ; s.cursor < end; s.cursor++ {
		sl := &old.slots[s.cursor]
		e := sl.e.Load()
		if e == nil || e == s.tomb {
			continue
		}
		// The key cannot be in cur already: Insert refuses a key that
		// old holds, and this slot has not been copied before.
		h := sl.tag.Load()
		p := h & cur.mask
		for {
			x := cur.slots[p].e.Load()
			if x == nil || x == s.tomb {
				break
			}
			p = (p + 1) & cur.mask
		}
		if cur.slots[p].e.Load() == nil {
			s.used++
		}
		cur.slots[p].tag.Store(h)
		cur.slots[p].e.Store(e)
	}
	if s.cursor == len(old.slots) {
		s.tabs.Store(&tables[T]{cur: cur})
	}
}

// rangeEntries calls fn for each entry until fn returns false, and
// reports whether it ran to the end. During a migration it yields old's
// entries and those of cur that old does not hold (inserted since the
// migration began), so each entry is seen once even if it is copied
// during the walk.
func (s *subtable[T]) rangeEntries(fn func(e *entry[T]) bool) bool {
	ts := s.tabs.Load()
	var k flow.Key
	for _, t := range [2]*table[T]{ts.old, ts.cur} {
		if t == nil {
			continue
		}
		for i := range t.slots {
			sl := &t.slots[i]
			e := sl.e.Load()
			if e == nil || e == s.tomb {
				continue
			}
			if t == ts.cur && ts.old != nil {
				s.unmask(e, &k)
				if s.find(ts.old, k.W(), sl.tag.Load()) != nil {
					continue
				}
			}
			if !fn(e) {
				return false
			}
		}
	}
	return true
}

// unmask sets k to e's masked key (zero outside the mask).
func (s *subtable[T]) unmask(e *entry[T], k *flow.Key) {
	*k = flow.Key{}
	kw := k.W()
	for j, i := range s.idx {
		kw[i] = s.word(e, j)
	}
}
