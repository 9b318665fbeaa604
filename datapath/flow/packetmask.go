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

// PacketMask returns the exact-match mask for a packet with key k: every
// field the packet has, as Open vSwitch's flow_wildcards_init_for_packet
// (a megaflow with this mask matches only packets like this one). It is
// the mask of megaflows installed while megaflows are disabled
// (upcall/disable-megaflows). Registers, metadata and conj_id do not
// exist in the datapath key; nd_ext fields are not included, as in Open
// vSwitch 3.1.
func PacketMask(k *Key) Mask {
	var m Mask
	ones := func(b []byte) {
		for i := range b {
			b[i] = 0xff
		}
	}
	if k.TunDst != 0 || k.TunIPv6Dst != [16]byte{} {
		if k.TunFlags&tunFlagKey != 0 {
			m.TunID = ^uint64(0)
		}
		m.TunSrc, m.TunDst = ^uint32(0), ^uint32(0)
		ones(m.TunIPv6Src[:])
		ones(m.TunIPv6Dst[:])
		m.TunFlags, m.TunTos, m.TunTTL = 0xffff, 0xff, 0xff
		m.TunTpSrc, m.TunTpDst = 0xffff, 0xffff
		m.TunGbpID, m.TunGbpFlags = 0xffff, 0xff
		if k.TunFlags&TunFlagUDPIF != 0 {
			// Raw Geneve options: their length and that many bytes.
			m.TunMetaPresent = ^uint64(0)
			ones(m.TunMeta[:min(int(k.TunMetaPresent), len(m.TunMeta))])
		} else if k.TunMetaPresent != 0 {
			m.TunMetaPresent = k.TunMetaPresent
			ones(m.TunMeta[:])
		}
	} else if k.TunID != 0 {
		m.TunID = ^uint64(0)
	}
	m.SkbPriority, m.PktMark = ^uint32(0), ^uint32(0)
	m.CtState, m.CtZone, m.CtMark = 0xff, 0xffff, ^uint32(0)
	ones(m.CtLabel[:])
	m.RecircID, m.DPHash, m.InPort = ^uint32(0), ^uint32(0), ^uint32(0)
	m.PacketType = ^uint32(0)
	dlType := k.EthType
	if k.PacketType == 0 {
		ones(m.EthDst[:])
		ones(m.EthSrc[:])
		m.EthType = 0xffff
		// Every tag, and the first absent one (shown as vlan 0).
		for i := range k.VLANs {
			m.VLANs[i] = VLAN{TPID: 0xffff, TCI: 0xffff}
			if k.VLANs[i].TCI == 0 {
				break
			}
		}
	} else {
		// Packets without Ethernet: the type's Ethertype when its
		// namespace is Ethertypes (1).
		if k.PacketType>>16 != 1 {
			return m
		}
		dlType = uint16(k.PacketType)
	}
	switch dlType {
	case EthTypeIPv4:
		m.NwSrc, m.NwDst = ^uint32(0), ^uint32(0)
		m.CtNwSrc, m.CtNwDst = ^uint32(0), ^uint32(0)
	case EthTypeIPv6:
		ones(m.IPv6Src[:])
		ones(m.IPv6Dst[:])
		m.IPv6Label = 0xfffff
		if k.NwProto == IPProtoICMPv6 && (k.TpSrc == 135 || k.TpSrc == 136) && k.TpDst == 0 {
			ones(m.ArpSha[:])
			ones(m.ArpTha[:])
			ones(m.NDTarget[:])
		} else {
			ones(m.CtIPv6Src[:])
			ones(m.CtIPv6Dst[:])
		}
	case EthTypeARP, EthTypeRARP:
		m.NwSrc, m.NwDst, m.NwProto = ^uint32(0), ^uint32(0), 0xff
		ones(m.ArpSha[:])
		ones(m.ArpTha[:])
		return m
	case EthTypeMPLS, EthTypeMPLSMcst:
		m.MPLSLSE = ^uint32(0)
		return m
	default:
		return m
	}
	m.NwFrag = FragMask
	m.NwTos, m.NwTTL, m.NwProto = 0xff, 0xff, 0xff
	m.CtNwProto, m.CtTpSrc, m.CtTpDst = 0xff, 0xffff, 0xffff
	if k.NwFrag&FragLater != 0 {
		return m // no transport header in later fragments
	}
	switch k.NwProto {
	case IPProtoICMP, IPProtoICMPv6:
		m.TpSrc, m.TpDst = 0xff, 0xff // type and code are 8 bits
	case IPProtoUDP, IPProtoSCTP:
		m.TpSrc, m.TpDst = 0xffff, 0xffff
	case IPProtoTCP:
		m.TpSrc, m.TpDst, m.TCPFlags = 0xffff, 0xffff, 0x0fff
	case IPProtoIGMP:
		m.TpSrc, m.TpDst, m.IGMPGroup = 0xffff, 0xffff, ^uint32(0)
	}
	return m
}

// MatchVLANPresence makes a mask that ignores the outer VLAN tag match
// whether there is one and its VID, as Open vSwitch's userspace datapath
// does with every flow it installs: its flow key format cannot wildcard
// the presence of a tag, so a megaflow made for an untagged packet does
// not match tagged ones (nor one made for VLAN 10 packets of VLAN 20).
func (m *Mask) MatchVLANPresence() {
	if m.VLANs[0].TCI == 0 {
		m.VLANs[0].TCI = VLANCFI | 0x0fff
	}
}
