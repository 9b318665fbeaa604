package odp

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/datapath/packet"
)

// hash5 computes the hash action's value for one packet.
//
// Semantics follow Open vSwitch's hash(l4(basis)) and hash(sym_l4(basis)):
// a hash of the 5-tuple (IP source and destination, IP protocol, and the
// TCP/UDP/SCTP ports; ports are 0 for other protocols and for non-first
// fragments; non-IP packets hash only the basis). For l4, a receive-side
// hash from the port, when present, is used instead of the 5-tuple (mixed
// with the basis), as OVS does for speed. sym_l4 orders the two
// (address, port) endpoints before hashing so both directions of a
// connection hash alike. The numeric values differ from Open vSwitch's
// (a different mixing function); only the same datapath ever compares
// them, with dp_hash matches in recirculated megaflows.
func hash5(p *packet.Packet, alg HashAlg, basis uint32) uint32 {
	if alg == HashL4 && p.RSSHash != 0 {
		return hashFinish(hashAdd(basis, p.RSSHash), 4)
	}
	l3 := p.L3Data()
	var src, dst [16]byte
	var alen int
	var proto uint8
	var l4ok bool
	switch {
	case len(l3) >= 20 && l3[0]>>4 == 4:
		copy(src[:], l3[12:16])
		copy(dst[:], l3[16:20])
		alen, proto = 4, l3[9]
		l4ok = binary.BigEndian.Uint16(l3[6:])&0x1fff == 0
	case len(l3) >= 40 && l3[0]>>4 == 6:
		copy(src[:], l3[8:24])
		copy(dst[:], l3[24:40])
		alen = 16
		proto, _, l4ok = ipv6Proto(l3)
	default:
		return hashFinish(basis, 0)
	}
	var sp, dp uint16
	if l4 := p.L4Data(); l4ok && len(l4) >= 4 && (proto == protoTCP || proto == protoUDP || proto == protoSCTP) {
		sp = binary.BigEndian.Uint16(l4)
		dp = binary.BigEndian.Uint16(l4[2:])
	}
	if alg == HashSymL4 {
		if c := compareBytes(src[:alen], dst[:alen]); c > 0 || c == 0 && sp > dp {
			src, dst = dst, src
			sp, dp = dp, sp
		}
	}
	h := basis
	for i := 0; i < alen; i += 4 {
		h = hashAdd(h, binary.BigEndian.Uint32(src[i:]))
	}
	for i := 0; i < alen; i += 4 {
		h = hashAdd(h, binary.BigEndian.Uint32(dst[i:]))
	}
	h = hashAdd(h, uint32(proto))
	h = hashAdd(h, uint32(sp)<<16|uint32(dp))
	return hashFinish(h, uint32(2*alen+8))
}

func compareBytes(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// hashAdd and hashFinish are the murmur3 32-bit round and finaliser.
func hashAdd(h, w uint32) uint32 {
	w *= 0xcc9e2d51
	w = w<<15 | w>>17
	w *= 0x1b873593
	h ^= w
	h = h<<13 | h>>19
	return h*5 + 0xe6546b64
}

func hashFinish(h, n uint32) uint32 {
	h ^= n
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}
