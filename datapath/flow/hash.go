package flow

import (
	"hash/maphash"
	"math/bits"
)

// hashWord mixes one key word at position i. Each word is mixed on its
// own (a 64x64->128 multiply folded to 64 bits) and the results are summed,
// so the multiplies of different words do not wait on each other: hashing
// a whole key costs about one cycle per word instead of a dependent chain.
// The position enters through posSeed so that equal values in different
// fields do not cancel.
func hashWord(w uint64, i int) uint64 {
	hi, lo := bits.Mul64(w^posSeed(i), 0x9e3779b97f4a7c15)
	return hi ^ lo
}

func posSeed(i int) uint64 { return uint64(i+1) * 0xa0761d6478bd642f }

// hashFinish finishes a word hash.
func hashFinish(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}

// keySeed seeds whole-key hashing. It is chosen once per process and never
// changes: whole-key hashes index in-memory caches only and are never
// stored or sent.
var keySeed = maphash.MakeSeed()

// Hash returns a hash of the whole key. It uses the runtime's AES-based
// memory hash over the key's 352 bytes, several times faster than mixing
// the 44 words one by one; the value is stable only within a process.
func (k *Key) Hash(basis uint64) uint64 {
	return hashFinish(maphash.Comparable(keySeed, *k.W()) ^ basis)
}

// StableHash returns a hash of the whole key that is the same in every
// process (for identifiers such as UFIDs), at a higher cost than Hash.
func (k *Key) StableHash(basis uint64) uint64 {
	w := k.W()
	var a, b, c, d uint64
	i := 0
	for ; i+4 <= len(w); i += 4 {
		a += hashWord(w[i], i)
		b += hashWord(w[i+1], i+1)
		c += hashWord(w[i+2], i+2)
		d += hashWord(w[i+3], i+3)
	}
	for ; i < len(w); i++ {
		a += hashWord(w[i], i)
	}
	return hashFinish(basis ^ a ^ bits.RotateLeft64(b, 17) ^ bits.RotateLeft64(c, 31) ^ bits.RotateLeft64(d, 47))
}

// HashWords hashes the key words at the given indices, each ANDed with the
// mask word: the hash of the key as seen through a mask that is zero
// outside idx. idx lists the mask's non-zero words (see Mask.NonZero).
func (k *Key) HashWords(m *Mask, idx []uint8, basis uint64) uint64 {
	kw, mw := k.W(), m.W()
	// The basis enters every word's multiply, not just the sum, so which
	// keys collide depends on it: a per-table random basis then defeats
	// collisions precomputed offline.
	var h uint64
	for _, i := range idx {
		h += hashWord(kw[i]&mw[i]^basis, int(i))
	}
	return hashFinish(h ^ basis)
}

// NonZero appends the indices of the mask's non-zero words to dst.
func (m *Mask) NonZero(dst []uint8) []uint8 {
	for i, w := range m.W() {
		if w != 0 {
			dst = append(dst, uint8(i))
		}
	}
	return dst
}

// Apply sets k to k AND m.
func (k *Key) Apply(m *Mask) {
	kw, mw := k.W(), m.W()
	for i := range kw {
		kw[i] &= mw[i]
	}
}

// Masked returns k AND m.
func (k *Key) Masked(m *Mask) Key {
	c := *k
	c.Apply(m)
	return c
}

// Matches reports whether k, seen through the match's mask, equals the
// match's key.
func (m *Match) Matches(k *Key) bool {
	kw, mk, mm := k.W(), m.Key.W(), m.Mask.W()
	for i := range kw {
		if kw[i]&mm[i] != mk[i] {
			return false
		}
	}
	return true
}

// Normalize clears key bits outside the mask.
func (m *Match) Normalize() { m.Key.Apply(&m.Mask) }

// Or sets m to m OR o (un-wildcarding).
func (m *Mask) Or(o *Mask) {
	a, b := m.W(), o.W()
	for i := range a {
		a[i] |= b[i]
	}
}

// IsZero reports whether no bit is set.
func (m *Mask) IsZero() bool {
	for _, w := range m.W() {
		if w != 0 {
			return false
		}
	}
	return true
}

// All returns a mask with every bit set (an exact match).
func All() Mask {
	var m Mask
	w := m.W()
	for i := range w {
		w[i] = ^uint64(0)
	}
	return m
}
