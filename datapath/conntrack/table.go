package conntrack

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// node is one key of a connection in a zone's hash chain, with the key
// itself, so that a chain walk reads one cache line per node and a hit
// needs no other line to compare. Both nodes are embedded in their Conn,
// at its start (node.conn finds the Conn from the node), so that a commit
// is one allocation.
//
// Chains are lock-free lists with one writer at a time (the zone lock):
// an insert publishes a fully linked node at the head; a removal points
// the predecessor past the node and leaves the node's own next alone, so
// a reader standing on it still reaches the rest of the chain. A resize
// relinks every node into a new bucket array; readers detect it with the
// zone's sequence counter and retry (see zone.lookup).
type node struct {
	next  atomic.Pointer[node]
	hash  uint32 // low bits of the key hash (they also pick the bucket)
	reply bool   // this node is the connection's reply-direction key (nodes[1])
	// nat is natSrc|natDst, in nodes[0] only (set before publication).
	nat uint8
	key Key
	// slot is the connection's index in its zone's all, in nodes[0]
	// only (zone lock).
	slot uint32
}

// conn returns the connection n belongs to: n is nodes[0] or nodes[1]
// of it, and nodes is its first field.
func (n *node) conn() *Conn {
	off := uintptr(0)
	if n.reply {
		off = unsafe.Sizeof(node{})
	}
	return (*Conn)(unsafe.Add(unsafe.Pointer(n), -int(off)))
}

// The layout the lookup relies on (see Conn): a node is one cache line,
// nodes starts the Conn, and a Conn fills the 192-byte size class, whose
// objects are 64-byte aligned.
var (
	_ [unsafe.Sizeof(node{}) - 64]byte
	_ [64 - unsafe.Sizeof(node{})]byte
	_ [unsafe.Sizeof(Conn{}) - 192]byte
	_ [192 - unsafe.Sizeof(Conn{})]byte
	_ [unsafe.Offsetof(Conn{}.nodes)]byte
	_ [-unsafe.Offsetof(Conn{}.nodes)]byte
)

// buckets is a power-of-two array of chain heads.
type buckets struct {
	mask  uint64
	heads []atomic.Pointer[node]
}

func newBuckets(n int) *buckets {
	return &buckets{mask: uint64(n - 1), heads: make([]atomic.Pointer[node], n)}
}

const minBuckets = 16

// maxHintBuckets caps the table size a refilled zone starts with.
const maxHintBuckets = 1 << 16

// zone is one zone's connection table.
type zone struct {
	id  uint16
	tab atomic.Pointer[buckets]
	// seq is odd while a resize relinks the chains (a seqlock).
	seq atomic.Uint64
	// count is the number of connections (not keys) in the table.
	count atomic.Int64
	// limit is the zone's connection limit, 0 for none.
	limit atomic.Uint32
	// refused counts commits refused because the zone was at its limit.
	refused atomic.Uint64
	// policy is the zone's timeout policy.
	policy atomic.Pointer[TimeoutPolicy]
	// nexp is the number of pending helper expectations (read without mu
	// to skip the expectation check on the common path).
	nexp atomic.Int32

	mu sync.Mutex
	// dead is set when the zone has been flushed: its table is detached
	// and commits must go to the zone's replacement.
	// guarded by mu
	dead bool
	// exps are the pending helper expectations.
	// guarded by mu
	exps []expectation
	// all are the zone's connections in commit order (removals swap the
	// last into the hole): a flush retires them as one run, whose
	// memory the next commits reuse in the same order.
	// guarded by mu
	all []*Conn
	// spare are pooled connections taken for the next commits, from
	// spareHead on.
	// guarded by mu
	spare []*Conn
	// guarded by mu
	spareHead int
	// sinceCheck counts fresh allocations since the zone last found
	// the pool empty.
	// guarded by mu
	sinceCheck int
}

func newZone(id uint16, tab *buckets) *zone {
	z := &zone{id: id}
	z.tab.Store(tab)
	return z
}

// track appends c, just inserted, to z.all.
//
// Preconditions: z.mu is held.
func (z *zone) track(u *reuse, c *Conn) {
	if z.all == nil {
		z.all = u.newList()
	}
	c.nodes[0].slot = uint32(len(z.all))
	z.all = append(z.all, c)
}

// untrack drops c, just removed, from z.all.
//
// Preconditions: z.mu is held.
func (z *zone) untrack(c *Conn) {
	i, last := c.nodes[0].slot, len(z.all)-1
	if int(i) > last || z.all[i] != c {
		return
	}
	if int(i) != last {
		m := z.all[last]
		z.all[i], m.nodes[0].slot = m, i
	}
	z.all[last] = nil
	z.all = z.all[:last]
}

// find walks k's chain in b.
func find(b *buckets, k *Key, h uint32) (*Conn, bool) {
	for n := b.heads[uint64(h)&b.mask].Load(); n != nil; n = n.next.Load() {
		if n.hash == h && n.key == *k {
			return n.conn(), n.reply
		}
	}
	return nil, false
}

// lookup returns the connection with key k (hash h) and whether k is its
// reply key. It never allocates and takes no lock, except while the
// zone's table is being resized, when it waits for the resize (bounded
// by the zone's size; a flushed zone refills at its old size, so that
// resizes are rare).
func (z *zone) lookup(k *Key, h64 uint64) (*Conn, bool) {
	h := uint32(h64)
	for {
		s := z.seq.Load()
		if s&1 != 0 {
			z.mu.Lock()
			c, r := find(z.tab.Load(), k, h)
			z.mu.Unlock()
			return c, r
		}
		c, r := find(z.tab.Load(), k, h)
		// A hit is always right (the key was compared); a miss is
		// trusted only if no resize moved the chains meanwhile.
		if c != nil || z.seq.Load() == s {
			return c, r
		}
	}
}

// insertLocked adds both keys of c, whose hashes are h.
//
// Preconditions: z.mu is held.
func (z *zone) insertLocked(c *Conn, h [2]uint64) {
	b := z.tab.Load()
	if keys := int(z.count.Load()+1) * 2; keys > len(b.heads) {
		b = z.resizeLocked(b, len(b.heads)*2)
	}
	for dir := range 2 {
		n := &c.nodes[dir]
		n.hash, n.reply = uint32(h[dir]), dir == 1
		head := &b.heads[uint64(n.hash)&b.mask]
		n.next.Store(head.Load())
		head.Store(n)
	}
	z.count.Add(1)
}

// removeLocked unlinks both keys of c; it reports false if c was not in
// the table (already removed).
//
// Preconditions: z.mu is held.
func (z *zone) removeLocked(c *Conn) bool {
	b := z.tab.Load()
	found := false
	for dir := range 2 {
		n := &c.nodes[dir]
		head := &b.heads[uint64(n.hash)&b.mask]
		if head.Load() == n {
			head.Store(n.next.Load())
			found = true
			continue
		}
		for p := head.Load(); p != nil; p = p.next.Load() {
			if p.next.Load() == n {
				p.next.Store(n.next.Load())
				found = true
				break
			}
		}
	}
	if found {
		z.count.Add(-1)
		if n := len(b.heads); n > minBuckets && int(z.count.Load())*8 < n {
			z.resizeLocked(b, n/2)
		}
	}
	return found
}

// resizeLocked relinks every node into a table of n buckets and
// publishes it. Readers that walk the old chains meanwhile may be led
// astray, so the sequence counter is odd for the duration and they
// retry. A node's next is rewritten once, to a node relinked before it,
// so no reader can ever loop.
//
// Preconditions: z.mu is held.
func (z *zone) resizeLocked(old *buckets, n int) *buckets {
	nb := newBuckets(n)
	z.seq.Add(1)
	for i := range old.heads {
		for o := old.heads[i].Load(); o != nil; {
			next := o.next.Load()
			h := &nb.heads[uint64(o.hash)&nb.mask]
			o.next.Store(h.Load())
			h.Store(o)
			o = next
		}
	}
	z.tab.Store(nb)
	z.seq.Add(1)
	return nb
}

// forEach calls fn for every connection in the zone (once per
// connection), holding the zone lock so that a concurrent resize cannot
// hide any; fn returning false stops.
func (z *zone) forEach(fn func(c *Conn) bool) bool {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.dead {
		// Flushed: empty, and its table may be another zone's by now.
		return true
	}
	b := z.tab.Load()
	for i := range b.heads {
		for n := b.heads[i].Load(); n != nil; n = n.next.Load() {
			if !n.reply && !fn(n.conn()) {
				return false
			}
		}
	}
	return true
}
