package classifier

import "sync/atomic"

// hnode is an entry of an hmap chain. It is immutable once published.
type hnode[V any] struct {
	hash uint64
	val  V
	next *hnode[V]
}

type htable[V any] struct {
	buckets []atomic.Pointer[hnode[V]]
	mask    uint64
}

// hmap is a hash multimap from a 64-bit hash to values, read without locks
// and written by one writer at a time (the classifier's mutex). Readers
// load the table, then a bucket, and walk an immutable chain; a writer
// publishes a new chain head (insert), a copied chain prefix (remove) or a
// whole new table (resize) with one atomic store, so a reader sees either
// the old or the new state of a bucket, never a partial one.
type hmap[V any] struct {
	t atomic.Pointer[htable[V]]
	n int // entries; writer only
}

// head returns the chain that holds hash h, if any.
func (m *hmap[V]) head(h uint64) *hnode[V] {
	t := m.t.Load()
	if t == nil {
		return nil
	}
	return t.buckets[h&t.mask].Load()
}

// contains reports whether some entry has hash h.
func (m *hmap[V]) contains(h uint64) bool {
	for e := m.head(h); e != nil; e = e.next {
		if e.hash == h {
			return true
		}
	}
	return false
}

func (m *hmap[V]) insert(h uint64, v V) {
	t := m.t.Load()
	if t == nil || m.n >= len(t.buckets) {
		t = m.resize(t)
	}
	b := &t.buckets[h&t.mask]
	b.Store(&hnode[V]{hash: h, val: v, next: b.Load()})
	m.n++
}

func (m *hmap[V]) resize(old *htable[V]) *htable[V] {
	n := 8
	for n < m.n {
		n *= 2
	}
	if old != nil && m.n >= len(old.buckets) {
		n = 4 * len(old.buckets)
	}
	t := &htable[V]{buckets: make([]atomic.Pointer[hnode[V]], n), mask: uint64(n - 1)}
	if old != nil {
		for i := range old.buckets {
			for e := old.buckets[i].Load(); e != nil; e = e.next {
				b := &t.buckets[e.hash&t.mask]
				b.Store(&hnode[V]{hash: e.hash, val: e.val, next: b.Load()})
			}
		}
	}
	m.t.Store(t)
	return t
}

// remove deletes the first entry with hash h for which eq is true.
func (m *hmap[V]) remove(h uint64, eq func(V) bool) bool {
	t := m.t.Load()
	if t == nil {
		return false
	}
	b := &t.buckets[h&t.mask]
	var before [8]*hnode[V]
	prefix := before[:0]
	for e := b.Load(); e != nil; e = e.next {
		if e.hash == h && eq(e.val) {
			// Copy the nodes in front of e; the tail is shared.
			rest := e.next
			for i := len(prefix) - 1; i >= 0; i-- {
				rest = &hnode[V]{hash: prefix[i].hash, val: prefix[i].val, next: rest}
			}
			b.Store(rest)
			m.n--
			if m.n == 0 {
				m.t.Store(nil)
			}
			return true
		}
		prefix = append(prefix, e)
	}
	return false
}

// all calls f for every value until f returns false.
func (m *hmap[V]) all(f func(V) bool) bool {
	t := m.t.Load()
	if t == nil {
		return true
	}
	for i := range t.buckets {
		for e := t.buckets[i].Load(); e != nil; e = e.next {
			if !f(e.val) {
				return false
			}
		}
	}
	return true
}
