package flow

// MarkL3L4 sets in w every L3 and L4 field the packet k has (by its
// Ethernet type and IP protocol) to all ones, as Open vSwitch's
// flow_wildcards_init_for_packet does for a flow's printed form: IPv4 or
// IPv6 addresses (and label), protocol, TOS, TTL and fragment bits, ports
// (the low byte for ICMP type and code) and TCP flags, or the ARP fields.
func MarkL3L4(w, k *Key) {
	switch k.EthType {
	case EthTypeIPv4, EthTypeIPv6:
		if k.EthType == EthTypeIPv4 {
			w.NwSrc, w.NwDst = ^uint32(0), ^uint32(0)
		} else {
			w.IPv6Src = [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
			w.IPv6Dst = w.IPv6Src
			w.IPv6Label = 0xfffff
		}
		w.NwProto, w.NwTos, w.NwTTL, w.NwFrag = 0xff, 0xff, 0xff, FragMask
		switch k.NwProto {
		case IPProtoTCP, IPProtoUDP, IPProtoSCTP:
			w.TpSrc, w.TpDst = 0xffff, 0xffff
			if k.NwProto == IPProtoTCP {
				w.TCPFlags = 0x0fff
			}
		case IPProtoICMP, IPProtoICMPv6:
			w.TpSrc, w.TpDst = 0xff, 0xff
		}
	case EthTypeARP, EthTypeRARP:
		w.NwSrc, w.NwDst, w.NwProto = ^uint32(0), ^uint32(0), 0xff
		w.ArpSha = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		w.ArpTha = w.ArpSha
	}
}
