// Package ovshash owns the hash functions whose values Open vSwitch
// exposes on the wire or in forwarding decisions (dp_hash, select groups,
// the bundle and multipath actions): murmur3's 32-bit round and finaliser
// as lib/hash.h computes them without SSE 4.2 (Debian's build), and Bob
// Jenkins' lookup3 as lib/jhash.c. gvs must compute the same values so
// that a packet takes the same path through gvs as through Open vSwitch.
//
// It imports nothing of gvs; datapath and ofproto may both import it.
package ovshash

import (
	"encoding/binary"
	"math/bits"
)

// Add is hash_add: one murmur3 round of w into h.
func Add(h, w uint32) uint32 {
	w *= 0xcc9e2d51
	w = bits.RotateLeft32(w, 15)
	w *= 0x1b873593
	h ^= w
	h = bits.RotateLeft32(h, 13)
	return h*5 + 0xe6546b64
}

// Add64 is hash_add64: the low word, then the high word.
func Add64(h uint32, w uint64) uint32 { return Add(Add(h, uint32(w)), uint32(w>>32)) }

// Finish is hash_finish: murmur3's finaliser with n mixed in.
func Finish(h, n uint32) uint32 {
	h ^= n
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// Bytes is hash_bytes: murmur rounds over p read as little-endian words
// (the last one zero-padded), finished with its length.
func Bytes(p []byte, basis uint32) uint32 {
	h, n := basis, len(p)
	for len(p) >= 4 {
		h = Add(h, binary.LittleEndian.Uint32(p))
		p = p[4:]
	}
	if len(p) > 0 {
		var t [4]byte
		copy(t[:], p)
		h = Add(h, binary.LittleEndian.Uint32(t[:]))
	}
	return Finish(h, uint32(n))
}

// TwoWords is hash_2words(x, y).
func TwoWords(x, y uint32) uint32 { return Finish(Add(Add(x, 0), y), 8) }

func jmix(a, b, c uint32) (uint32, uint32, uint32) {
	a -= c
	a ^= bits.RotateLeft32(c, 4)
	c += b
	b -= a
	b ^= bits.RotateLeft32(a, 6)
	a += c
	c -= b
	c ^= bits.RotateLeft32(b, 8)
	b += a
	a -= c
	a ^= bits.RotateLeft32(c, 16)
	c += b
	b -= a
	b ^= bits.RotateLeft32(a, 19)
	a += c
	c -= b
	c ^= bits.RotateLeft32(b, 4)
	b += a
	return a, b, c
}

func jfinal(a, b, c uint32) uint32 {
	c ^= b
	c -= bits.RotateLeft32(b, 14)
	a ^= c
	a -= bits.RotateLeft32(c, 11)
	b ^= a
	b -= bits.RotateLeft32(a, 25)
	c ^= b
	c -= bits.RotateLeft32(b, 16)
	a ^= c
	a -= bits.RotateLeft32(c, 4)
	b ^= a
	b -= bits.RotateLeft32(a, 14)
	c ^= b
	c -= bits.RotateLeft32(b, 24)
	return c
}

// JBytes is jhash_bytes: lookup3 over p read as little-endian words (the
// in-memory order on the x86 hosts Open vSwitch's values come from).
func JBytes(p []byte, basis uint32) uint32 {
	a := 0xdeadbeef + uint32(len(p)) + basis
	b, c := a, a
	for len(p) >= 12 {
		a += binary.LittleEndian.Uint32(p)
		b += binary.LittleEndian.Uint32(p[4:])
		c += binary.LittleEndian.Uint32(p[8:])
		a, b, c = jmix(a, b, c)
		p = p[12:]
	}
	if len(p) > 0 {
		var t [12]byte
		copy(t[:], p)
		a += binary.LittleEndian.Uint32(t[0:])
		b += binary.LittleEndian.Uint32(t[4:])
		c += binary.LittleEndian.Uint32(t[8:])
		c = jfinal(a, b, c)
	}
	return c
}
