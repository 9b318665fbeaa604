package odp

import (
	"encoding/binary"
	"math/bits"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/datapath/tnl"
)

// hash5 computes the hash action's value for one packet, as Open
// vSwitch's userspace datapath does on a little-endian host, so that a
// dp_hash select group sends a given packet to the same bucket:
//
//   - l4 (OVS_HASH_ALG_L4): hash_int(rss, basis), rss being the packet's
//     receive hash or else miniflow_hash_5tuple of the packet (basis 0;
//     it is then kept as the packet's receive hash, as dpif-netdev does);
//   - sym_l4 (OVS_HASH_ALG_SYM_L4): flow_hash_symmetric_l3l4 without UDP
//     ports: the XOR of the addresses, nw_proto and, for TCP and SCTP
//     unfragmented packets, the XOR of the ports, so
//     both directions hash alike; non-IP frames hash their L2 fields
//     symmetrically (flow_hash_symmetric_l2).
func hash5(p *packet.Packet, alg HashAlg, basis uint32) uint32 {
	if alg == HashL4 {
		return hashFinish(hashAdd(hashAdd(tnl.PacketHash(p), 0), basis), 8)
	}
	var k flow.Key
	flow.Extract(p, &k)
	h := basis
	switch k.EthType {
	case flow.EthTypeIPv4:
		h = hashAdd(h, bits.ReverseBytes32(k.NwSrc^k.NwDst))
	case flow.EthTypeIPv6:
		for i := 0; i < 16; i += 8 {
			x := binary.LittleEndian.Uint64(k.IPv6Src[i:]) ^ binary.LittleEndian.Uint64(k.IPv6Dst[i:])
			h = hashAdd(hashAdd(h, uint32(x)), uint32(x>>32))
		}
	default:
		return symmetricL2(&k, basis)
	}
	h = hashAdd(h, uint32(k.NwProto))
	if k.NwFrag&flow.FragMask == 0 && (k.NwProto == protoTCP || k.NwProto == protoSCTP) {
		h = hashAdd(h, uint32(bits.ReverseBytes16(k.TpSrc^k.TpDst)))
	}
	return hashFinish(h, basis)
}

// symmetricL2 is Open vSwitch's flow_hash_symmetric_l2: three words of
// (eth_type, XOR of the VLAN ids, XOR of the Ethernet addresses, 0)
// loaded from their network-order bytes.
func symmetricL2(k *flow.Key, basis uint32) uint32 {
	var b [12]byte
	binary.BigEndian.PutUint16(b[0:], k.EthType)
	var vid uint16
	for _, v := range k.VLANs {
		vid ^= v.TCI & 0x0fff
	}
	binary.BigEndian.PutUint16(b[2:], vid)
	for i := 0; i < 6; i++ {
		b[4+i] = k.EthSrc[i] ^ k.EthDst[i]
	}
	h := basis
	for i := 0; i < 12; i += 4 {
		h = hashAdd(h, binary.LittleEndian.Uint32(b[i:]))
	}
	return hashFinish(h, basis)
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
