package dpcls

import (
	"math/bits"
	"math/rand/v2"

	"github.com/gvs-project/gvs/datapath/flow"
)

// EMC defaults, as Open vSwitch's EM_FLOW_HASH_ENTRIES and
// DEFAULT_EM_FLOW_INSERT_INV_PROB.
const (
	DefaultEMCEntries       = 8192
	DefaultEMCInsertInvProb = 100
)

// EMCConfig configures an exact-match cache.
type EMCConfig struct {
	// Entries is the number of entries, rounded up to a power of two;
	// 0 means DefaultEMCEntries.
	Entries int
	// InsertInvProb makes Insert store one key in InsertInvProb (Open
	// vSwitch's other_config:emc-insert-inv-prob): 1 stores every key, 0
	// stores none. Caching only flows that recur keeps short flows from
	// thrashing the cache.
	InsertInvProb uint32
	// Seed seeds the insertion PRNG; 0 picks a random seed.
	Seed uint64
}

// DefaultEMCConfig returns Open vSwitch's defaults.
func DefaultEMCConfig() EMCConfig {
	return EMCConfig{Entries: DefaultEMCEntries, InsertInvProb: DefaultEMCInsertInvProb}
}

// emcEntry holds the hash first so a mismatch is decided on the first
// cache line.
type emcEntry[T any] struct {
	hash uint64
	used bool
	val  T
	key  flow.Key
}

// EMC is a per-worker exact-match cache in front of the classifier: a
// 2-way set-associative array indexed by the key's hash, holding full key
// copies. It is not safe for concurrent use; each worker owns one.
//
// The EMC does not know when a cached value dies. The caller checks the
// value it gets (for datapath flows, an atomic "dead" flag) and calls
// Remove for a dead one; SweepStep drops dead values in the background.
type EMC[T any] struct {
	ents  []emcEntry[T]
	mask  uint64
	shift uint // log2(len(ents)): the second way uses the hash's next bits

	insertAll bool
	insertMin uint32 // Insert stores when a random uint32 is <= insertMin
	insertOff bool
	rnd       uint64
	sweep     int // next entry SweepStep looks at
}

// NewEMC returns an empty exact-match cache.
func NewEMC[T any](cfg EMCConfig) *EMC[T] {
	n := cfg.Entries
	if n <= 0 {
		n = DefaultEMCEntries
	}
	n = 1 << bits.Len(uint(n-1))
	c := &EMC[T]{ents: make([]emcEntry[T], n), mask: uint64(n - 1), shift: uint(bits.TrailingZeros(uint(n))), rnd: cfg.Seed}
	if c.rnd == 0 {
		c.rnd = rand.Uint64() | 1
	}
	c.SetInsertInvProb(cfg.InsertInvProb)
	return c
}

// SetInsertInvProb changes the insertion probability to 1/inv (0 disables
// Insert).
func (c *EMC[T]) SetInsertInvProb(inv uint32) {
	c.insertOff = inv == 0
	c.insertAll = inv == 1
	if inv > 0 {
		c.insertMin = ^uint32(0) / inv
	}
}

// Lookup returns the value cached for k, whose hash is hash (any 64-bit
// hash of the whole key, the same for Lookup and Insert). It never
// allocates.
func (c *EMC[T]) Lookup(k *flow.Key, hash uint64) (v T, ok bool) {
	if e := &c.ents[hash&c.mask]; e.hash == hash && e.used && *e.key.W() == *k.W() {
		return e.val, true
	}
	if e := &c.ents[(hash>>c.shift)&c.mask]; e.hash == hash && e.used && *e.key.W() == *k.W() {
		return e.val, true
	}
	return v, false
}

// Insert caches k -> v (as Put) with the configured probability and
// reports whether it did.
func (c *EMC[T]) Insert(k *flow.Key, hash uint64, v T) bool {
	if c.insertOff {
		return false
	}
	if !c.insertAll && uint32(c.next()>>32) > c.insertMin {
		return false
	}
	c.Put(k, hash, v)
	return true
}

// Chance draws the insertion probability: it reports whether an Insert
// made now would store. A caller that has not hashed the key yet calls
// Chance, then hashes and Puts only when it says yes.
func (c *EMC[T]) Chance() bool {
	if c.insertOff {
		return false
	}
	return c.insertAll || uint32(c.next()>>32) <= c.insertMin
}

// Put caches k -> v unconditionally. It replaces the same key if cached,
// else fills an unused way, else evicts the way with the smaller stored
// hash (a cheap pseudo-random choice).
func (c *EMC[T]) Put(k *flow.Key, hash uint64, v T) {
	a := &c.ents[hash&c.mask]
	b := &c.ents[(hash>>c.shift)&c.mask]
	var to *emcEntry[T]
	switch {
	case a.used && a.hash == hash && *a.key.W() == *k.W():
		to = a
	case b.used && b.hash == hash && *b.key.W() == *k.W():
		to = b
	case !a.used:
		to = a
	case !b.used:
		to = b
	case a.hash <= b.hash:
		to = a
	default:
		to = b
	}
	to.hash, to.used, to.val, to.key = hash, true, v, *k
}

// Remove drops k from the cache and reports whether it was cached.
func (c *EMC[T]) Remove(k *flow.Key, hash uint64) bool {
	for _, i := range [2]uint64{hash & c.mask, (hash >> c.shift) & c.mask} {
		if e := &c.ents[i]; e.used && e.hash == hash && *e.key.W() == *k.W() {
			c.clear(e)
			return true
		}
	}
	return false
}

// SweepStep checks the next n entries (wrapping around) and drops those
// whose value is no longer alive, so that dead values do not wait for
// eviction to be released. Call it from the owner between batches.
func (c *EMC[T]) SweepStep(n int, alive func(T) bool) {
	for range min(n, len(c.ents)) {
		if e := &c.ents[c.sweep]; e.used && !alive(e.val) {
			c.clear(e)
		}
		c.sweep = (c.sweep + 1) & int(c.mask)
	}
}

// Clear empties the cache.
func (c *EMC[T]) Clear() {
	for i := range c.ents {
		c.clear(&c.ents[i])
	}
}

// Len returns the number of cached keys (it scans the cache).
func (c *EMC[T]) Len() int {
	n := 0
	for i := range c.ents {
		if c.ents[i].used {
			n++
		}
	}
	return n
}

// Cap returns the number of entries.
func (c *EMC[T]) Cap() int { return len(c.ents) }

func (c *EMC[T]) clear(e *emcEntry[T]) {
	var zero T
	e.used, e.val = false, zero // drop the reference for the GC
}

// next steps a splitmix64 generator.
func (c *EMC[T]) next() uint64 {
	c.rnd += 0x9e3779b97f4a7c15
	z := c.rnd
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
