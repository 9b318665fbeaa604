package conntrack

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// Key is one direction of a connection: the zone and the 5-tuple as the
// packets of that direction carry it. It is fixed-size and pointer-free
// (44 bytes, no padding) so that hashing and comparison run over its
// memory directly.
type Key struct {
	// Src and Dst hold the addresses in network byte order; IPv4 uses
	// the first 4 bytes and leaves the rest zero.
	Src, Dst [16]byte
	// SrcPort and DstPort are the TCP/UDP/SCTP ports; for ICMP echo both
	// hold the identifier.
	SrcPort, DstPort uint16
	Zone             uint16
	Proto            uint8
	// Family is 4 or 6.
	Family uint8
	// SrcType is the ICMP type this direction sends and DstType the type
	// the other direction answers with (echo request/reply); ICMPCode is
	// the ICMP code. All zero for other protocols.
	SrcType, DstType, ICMPCode uint8
	_pad                       uint8
}

// reverse returns the key of the opposite direction.
func (k *Key) reverse() Key {
	r := *k
	r.Src, r.Dst = k.Dst, k.Src
	r.SrcPort, r.DstPort = k.DstPort, k.SrcPort
	r.SrcType, r.DstType = k.DstType, k.SrcType
	return r
}

// keySize is the size of Key; hash reads it as bytes.
const keySize = 44

// hashSeed is a per-tracker random key for hash: six 64-bit words.
type hashSeed [6]uint64

// hash mixes the key's 44 bytes with seed, wyhash-style: three
// independent 64x64->128 multiplies folded together. maphash.Comparable
// costs about four times as much on this key.
func (k *Key) hash(s *hashSeed) uint64 {
	b := (*[keySize]byte)(unsafe.Pointer(k))
	w0 := binary.LittleEndian.Uint64(b[0:])
	w1 := binary.LittleEndian.Uint64(b[8:])
	w2 := binary.LittleEndian.Uint64(b[16:])
	w3 := binary.LittleEndian.Uint64(b[24:])
	w4 := binary.LittleEndian.Uint64(b[32:])
	w5 := uint64(binary.LittleEndian.Uint32(b[40:]))
	return mix(mix(w0^s[0], w1^s[1])^w4^s[4], mix(w2^s[2], w3^s[3])^w5^s[5])
}

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// IPv4 protocol numbers conntrack distinguishes.
const (
	protoICMP    = 1
	protoTCP     = 6
	protoUDP     = 17
	protoICMPv6  = 58
	protoSCTP    = 132
	protoUDPLite = 136
	protoDCCP    = 33
)

// hasPorts says the protocol's first 4 L4 bytes are source and
// destination ports.
func hasPorts(proto uint8) bool {
	switch proto {
	case protoTCP, protoUDP, protoSCTP, protoUDPLite, protoDCCP:
		return true
	}
	return false
}

// The hash reads exactly keySize bytes: fail to compile if Key changes.
var _ [keySize - unsafe.Sizeof(Key{})]byte
var _ [unsafe.Sizeof(Key{}) - keySize]byte
