package odp

import (
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/datapath/tnl"
	"github.com/gvs-project/gvs/internal/ovshash"
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
		return ovshash.Finish(ovshash.Add(ovshash.Add(tnl.PacketHash(p), 0), basis), 8)
	}
	var k flow.Key
	flow.Extract(p, &k)
	return flow.SymmetricL3L4Hash(&k, basis, false)
}
