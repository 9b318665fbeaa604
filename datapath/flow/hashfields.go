package flow

import (
	"encoding/binary"
	"math/bits"

	"github.com/gvs-project/gvs/internal/ovshash"
)

// HashFields names the fields the bundle and multipath actions hash
// (NX_HASH_FIELDS_*, in wire order).
type HashFields uint16

// The NX_HASH_FIELDS_* values.
const (
	HashEthSrc HashFields = iota
	HashSymmetricL4
	HashSymmetricL3L4
	HashSymmetricL3L4UDP
	HashNwSrc
	HashNwDst
	HashSymmetricL3
)

// FieldsHash is Open vSwitch's flow_hash_fields: the hash of k's fields
// named by f, with basis. The values are Open vSwitch's (little-endian
// host), so that bundle and multipath choose what it chooses.
func FieldsHash(k *Key, f HashFields, basis uint16) uint32 {
	b := uint32(basis)
	switch f {
	case HashEthSrc:
		return ovshash.JBytes(k.EthSrc[:], b)
	case HashSymmetricL4:
		return symmetricL4(k, b)
	case HashSymmetricL3L4:
		return SymmetricL3L4Hash(k, b, false)
	case HashSymmetricL3L4UDP:
		return SymmetricL3L4Hash(k, b, true)
	case HashNwSrc, HashNwDst:
		var v4 [4]byte
		a4, a6 := k.NwSrc, k.IPv6Src
		if f == HashNwDst {
			a4, a6 = k.NwDst, k.IPv6Dst
		}
		switch k.EthType {
		case EthTypeIPv4:
			binary.BigEndian.PutUint32(v4[:], a4)
			return ovshash.JBytes(v4[:], b)
		case EthTypeIPv6:
			return ovshash.JBytes(a6[:], b)
		}
		return b
	case HashSymmetricL3:
		// struct { union { be32; in6_addr }; be16 eth_type; } padded to 20.
		var s [20]byte
		xorAddrs(k, s[:16])
		binary.BigEndian.PutUint16(s[16:], k.EthType)
		return ovshash.JBytes(s[:], b)
	}
	return b
}

// xorAddrs writes the XOR of the source and destination IPv4 or IPv6
// addresses in network order to dst (16 bytes; zero for other frames).
func xorAddrs(k *Key, dst []byte) {
	switch k.EthType {
	case EthTypeIPv4:
		binary.BigEndian.PutUint32(dst, k.NwSrc^k.NwDst)
	case EthTypeIPv6:
		for i := range 16 {
			dst[i] = k.IPv6Src[i] ^ k.IPv6Dst[i]
		}
	}
}

// symmetricL4 is flow_hash_symmetric_l4 over its C struct as laid out
// in memory: addresses (16), eth_type, VLAN ids, ports, Ethernet
// addresses, IP protocol, padded to 32 bytes.
func symmetricL4(k *Key, basis uint32) uint32 {
	var s [32]byte
	for i := range 6 {
		s[22+i] = k.EthSrc[i] ^ k.EthDst[i]
	}
	var vid uint16
	for _, v := range k.VLANs {
		vid ^= v.TCI & 0x0fff
	}
	binary.BigEndian.PutUint16(s[18:], vid)
	binary.BigEndian.PutUint16(s[16:], k.EthType)
	if k.EthType == EthTypeIPv4 || k.EthType == EthTypeIPv6 {
		xorAddrs(k, s[:16])
		s[28] = k.NwProto
		if k.NwProto == IPProtoTCP || k.NwProto == IPProtoSCTP {
			binary.BigEndian.PutUint16(s[20:], k.TpSrc^k.TpDst)
		}
	}
	return ovshash.JBytes(s[:], basis)
}

// SymmetricL3L4Hash is flow_hash_symmetric_l3l4: murmur over the XOR of
// the addresses, the protocol and, for unfragmented TCP and SCTP (and UDP
// with udp), the XOR of the ports; other frames hash their L2 fields. It
// is also the datapath's hash(sym_l4) (udp false).
func SymmetricL3L4Hash(k *Key, basis uint32, udp bool) uint32 {
	h := basis
	switch k.EthType {
	case EthTypeIPv4:
		h = ovshash.Add(h, bits.ReverseBytes32(k.NwSrc^k.NwDst))
	case EthTypeIPv6:
		for i := 0; i < 16; i += 8 {
			h = ovshash.Add64(h, binary.LittleEndian.Uint64(k.IPv6Src[i:])^binary.LittleEndian.Uint64(k.IPv6Dst[i:]))
		}
	default:
		return SymmetricL2Hash(k, basis)
	}
	h = ovshash.Add(h, uint32(k.NwProto))
	if k.NwFrag&FragMask == 0 && (k.NwProto == IPProtoTCP || k.NwProto == IPProtoSCTP || udp && k.NwProto == IPProtoUDP) {
		h = ovshash.Add(h, uint32(bits.ReverseBytes16(k.TpSrc^k.TpDst)))
	}
	return ovshash.Finish(h, basis)
}

// SymmetricL2Hash is flow_hash_symmetric_l2: three words of (eth_type,
// XOR of the VLAN ids, XOR of the Ethernet addresses, 0) loaded from
// their network-order bytes; 0 for a frame that is not Ethernet.
func SymmetricL2Hash(k *Key, basis uint32) uint32 {
	if k.PacketType != 0 {
		return 0
	}
	var b [12]byte
	binary.BigEndian.PutUint16(b[0:], k.EthType)
	var vid uint16
	for _, v := range k.VLANs {
		vid ^= v.TCI & 0x0fff
	}
	binary.BigEndian.PutUint16(b[2:], vid)
	for i := range 6 {
		b[4+i] = k.EthSrc[i] ^ k.EthDst[i]
	}
	h := basis
	for i := 0; i < 12; i += 4 {
		h = ovshash.Add(h, binary.LittleEndian.Uint32(b[i:]))
	}
	return ovshash.Finish(h, basis)
}

// MaskHashFields sets in m the bits of k that FieldsHash(k, f, ...)
// consults, as flow_mask_hash_fields (the megaflow must match them).
func MaskHashFields(k, m *Key, f HashFields) {
	all6 := [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	isIP := k.EthType == EthTypeIPv4 || k.EthType == EthTypeIPv6
	addrs := func(src, dst bool) {
		switch k.EthType {
		case EthTypeIPv4:
			if src {
				m.NwSrc = ^uint32(0)
			}
			if dst {
				m.NwDst = ^uint32(0)
			}
		case EthTypeIPv6:
			if src {
				m.IPv6Src = [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
			}
			if dst {
				m.IPv6Dst = [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
			}
		}
	}
	switch f {
	case HashEthSrc:
		m.EthSrc = all6
	case HashSymmetricL4:
		m.EthSrc, m.EthDst = all6, all6
		addrs(true, true)
		if isIP {
			m.NwProto = 0xff
			if k.NwProto != IPProtoUDP {
				if k.NwProto == IPProtoICMP {
					m.TpSrc, m.TpDst = 0xff, 0xff
				} else {
					m.TpSrc, m.TpDst = 0xffff, 0xffff
				}
			}
		}
		for i := range m.VLANs {
			m.VLANs[i].TCI |= 0x1fff
		}
	case HashSymmetricL3L4UDP, HashSymmetricL3L4:
		if !isIP {
			return
		}
		unfrag := k.NwFrag&FragMask == 0
		if f == HashSymmetricL3L4UDP && k.NwProto == IPProtoUDP && unfrag {
			m.TpSrc, m.TpDst = 0xffff, 0xffff
		}
		addrs(true, true)
		m.NwProto = 0xff
		if (k.NwProto == IPProtoTCP || k.NwProto == IPProtoSCTP) && unfrag {
			m.TpSrc, m.TpDst = 0xffff, 0xffff
		}
	case HashNwSrc:
		addrs(true, false)
	case HashNwDst:
		addrs(false, true)
	case HashSymmetricL3:
		addrs(true, true)
	}
}
