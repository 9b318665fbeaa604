package tnlneigh

import (
	"net/netip"

	"github.com/gvs-project/gvs/datapath/flow"
)

// Fields are the flow fields Snoop reads. Translation fills them from the
// packet's flow key (FieldsFromKey) and, to keep its megaflow correct,
// un-wildcards what Open vSwitch's snooping consults: for ARP eth_type,
// nw_proto (opcode), nw_src, nw_dst and arp_sha; for ND eth_type, nw_proto,
// tp_src, tp_dst, ipv6_src, ipv6_dst, nd_target and nd_tll.
type Fields struct {
	EthType  uint16
	NwProto  uint8    // ARP opcode (low 8 bits) or IP protocol
	ArpSPA   uint32   // ARP sender IPv4, host order
	ArpTPA   uint32   // ARP target IPv4, host order
	ArpSHA   [6]byte  // ARP sender MAC
	ICMPType uint16   // ICMPv6 type (tp_src)
	ICMPCode uint16   // ICMPv6 code (tp_dst)
	NDTarget [16]byte // ND target address
	NDTLL    [6]byte  // ND target link-layer address
}

// FieldsFromKey copies the fields Snoop needs from a flow key.
func FieldsFromKey(k *flow.Key) Fields {
	return Fields{
		EthType: k.EthType, NwProto: k.NwProto, ArpSPA: k.NwSrc, ArpTPA: k.NwDst,
		ArpSHA: k.ArpSha, ICMPType: k.TpSrc, ICMPCode: k.TpDst, NDTarget: k.NDTarget, NDTLL: k.ArpTha,
	}
}

const (
	ethTypeARP  = 0x0806
	ethTypeIPv6 = 0x86dd
	arpOpReply  = 2
	protoICMPv6 = 58
	ndAdvert    = 136
)

// Snoop learns a binding on bridge from an ARP reply, a gratuitous ARP
// (sender IP equal to target IP, request or reply) or an IPv6 Neighbor
// Advertisement carrying a target link-layer address, as Open vSwitch
// does. It reports whether the packet was of a learnable kind; it updates
// the cache only when update is true (translation without side effects
// passes false and still gets the answer).
func (c *Cache) Snoop(bridge string, f *Fields, update bool) bool {
	switch f.EthType {
	case ethTypeARP:
		garp := f.ArpSPA == f.ArpTPA
		if (!garp && f.NwProto != arpOpReply) || f.ArpSHA == [6]byte{} {
			return false
		}
		if update {
			c.Set(bridge, netip.AddrFrom4([4]byte{byte(f.ArpSPA >> 24), byte(f.ArpSPA >> 16), byte(f.ArpSPA >> 8), byte(f.ArpSPA)}), f.ArpSHA)
		}
		return true
	case ethTypeIPv6:
		if f.NwProto != protoICMPv6 || f.ICMPCode != 0 || f.ICMPType != ndAdvert || f.NDTLL == [6]byte{} {
			return false
		}
		if update {
			c.Set(bridge, netip.AddrFrom16(f.NDTarget), f.NDTLL)
		}
		return true
	}
	return false
}
