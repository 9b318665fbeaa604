package tnl

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/packet"
)

// Pop validates the outer headers of a received tunnel frame of type t
// (Ethernet without VLAN, IPv4 without options or IPv6 without extension
// headers, then UDP with Geneve or VXLAN, or GRE), strips them, leaving
// the inner Ethernet frame with its offsets unset, and replaces p.Md with
// zero metadata holding the tunnel key (the caller sets in_port).
// It reports false, leaving p unchanged, for anything Open vSwitch's
// netdev_{geneve,vxlan,gre}_pop_header refuses: a bad IPv4 header
// checksum, a truncated IP packet, IP options, a fragment, a wrong UDP
// checksum (when non-zero), a Geneve version other than 0, a Geneve
// payload other than Ethernet, options past the packet, VXLAN flags other
// than I or a non-zero reserved VNI byte, GRE flags other than C, K and S
// (so also a GRE version other than 0), a GRE header past the packet or a
// wrong GRE checksum. Geneve options longer than packet.TunMetaBytes are
// refused too (the flow key's limit), and so are GRE payloads other than
// Ethernet (Open vSwitch also takes any Ethertype as an L3 packet; this
// datapath carries only Ethernet packets).
func Pop(p *packet.Packet, t Type) bool {
	d := p.Data()
	if len(d) < ethLen {
		return false
	}
	var tun packet.Tunnel
	var l3 []byte // the IP packet, trimmed to its length
	var pseudo uint32
	hlen := ethLen
	proto := uint8(ipProtoUDP)
	if t.IsGRE() {
		proto = ipProtoGRE
	}
	switch binary.BigEndian.Uint16(d[12:]) {
	case ethTypeIPv4:
		ip := d[ethLen:]
		if len(ip) < ipv4Len || ip[0] != 0x45 {
			return false // not version 4, or options
		}
		if packet.Checksum(ip[:ipv4Len]) != 0 {
			return false
		}
		tot := int(binary.BigEndian.Uint16(ip[2:]))
		if tot > len(ip) || tot < ipv4Len {
			return false
		}
		if binary.BigEndian.Uint16(ip[6:])&0x3fff != 0 {
			return false // MF or a fragment offset
		}
		if ip[9] != proto {
			return false
		}
		l3 = ip[:tot]
		tun.Src = binary.BigEndian.Uint32(ip[12:])
		tun.Dst = binary.BigEndian.Uint32(ip[16:])
		tun.Tos = ip[1]
		tun.TTL = ip[8]
		hlen += ipv4Len
		pseudo = packet.PseudoHeaderIPv4(tun.Src, tun.Dst, ipProtoUDP, tot-ipv4Len)
	case ethTypeIPv6:
		ip := d[ethLen:]
		if len(ip) < ipv6Len || ip[0]>>4 != 6 {
			return false
		}
		plen := int(binary.BigEndian.Uint16(ip[4:]))
		if ipv6Len+plen > len(ip) || ip[6] != proto {
			return false
		}
		l3 = ip[:ipv6Len+plen]
		copy(tun.IPv6Src[:], ip[8:24])
		copy(tun.IPv6Dst[:], ip[24:40])
		tun.Tos = uint8(binary.BigEndian.Uint32(ip) >> 20)
		tun.TTL = ip[7]
		hlen += ipv6Len
		pseudo = packet.PseudoHeaderIPv6(ip[8:24], ip[24:40], ipProtoUDP, plen)
	default:
		return false
	}
	if t.IsGRE() {
		n, ok := popGRE(d[hlen:ethLen+len(l3)], &tun)
		if !ok {
			return false
		}
		return finishPop(p, &tun, hlen+n, ethLen+len(l3))
	}
	udp := d[hlen : ethLen+len(l3)]
	if len(udp) < udpLen+8 { // UDP plus the Geneve base or VXLAN header
		return false
	}
	if binary.BigEndian.Uint16(udp[6:]) != 0 {
		if packet.Fold(packet.ChecksumPartial(udp, pseudo)) != 0 {
			return false
		}
		tun.Flags |= packet.TunFlagCsum
	}
	tun.TpSrc = binary.BigEndian.Uint16(udp[0:])
	tun.TpDst = binary.BigEndian.Uint16(udp[2:])
	hlen += udpLen
	th := udp[udpLen:]
	switch t {
	case TypeGeneve:
		optLen := int(th[0]&0x3f) * 4
		if geneveLen+optLen > len(th) {
			return false
		}
		if th[0]>>6 != 0 || binary.BigEndian.Uint16(th[2:]) != ethTypeTEB {
			return false
		}
		if optLen > len(tun.Meta) {
			return false
		}
		if th[1]&0x80 != 0 {
			tun.Flags |= packet.TunFlagOAM
		}
		tun.ID = uint64(binary.BigEndian.Uint32(th[4:]) >> 8)
		copy(tun.Meta[:], th[geneveLen:geneveLen+optLen])
		tun.MetaPresent = uint64(optLen)
		tun.Flags |= flow.TunFlagUDPIF
		hlen += geneveLen + optLen
	case TypeVXLAN:
		flags := binary.BigEndian.Uint32(th)
		if flags&vxlanGPE != 0 {
			// VXLAN-GPE: OAM packets are dropped, and only an
			// Ethernet payload is supported (Open vSwitch also takes
			// IPv4, IPv6 and NSH as non-Ethernet packet types).
			if flags&vxlanGPEOAM != 0 || th[3] != vxlanGPEEthernet {
				return false
			}
			flags &^= vxlanGPEUsed
		}
		if flags != vxlanFlags || th[7] != 0 {
			return false
		}
		tun.ID = uint64(binary.BigEndian.Uint32(th[4:]) >> 8)
		hlen += vxlanLen
	default:
		return false
	}
	tun.Flags |= packet.TunFlagKey
	return finishPop(p, &tun, hlen, ethLen+len(l3))
}

// popGRE parses the GRE header at the start of g (the outer IP payload)
// into tun and returns its length, as Open vSwitch's parse_gre_header:
// the checksum, when present, must verify over all of g, and sets the
// csum flag; a key is tun_id and sets the key flag; a sequence number is
// skipped.
func popGRE(g []byte, tun *packet.Tunnel) (int, bool) {
	if len(g) < greBaseLen {
		return 0, false
	}
	flags := binary.BigEndian.Uint16(g)
	if flags&^(greCsum|greKey|greSeq) != 0 {
		return 0, false
	}
	n := greHeaderLen(flags)
	if len(g) < n || binary.BigEndian.Uint16(g[2:]) != ethTypeTEB {
		return 0, false
	}
	o := greBaseLen
	if flags&greCsum != 0 {
		if packet.Checksum(g) != 0 {
			return 0, false
		}
		tun.Flags |= packet.TunFlagCsum
		o += 4
	}
	if flags&greKey != 0 {
		tun.ID = uint64(binary.BigEndian.Uint32(g[o:]))
		tun.Flags |= packet.TunFlagKey
	}
	return n, true
}

// finishPop strips the hlen bytes of outer headers from p, whose outer
// IP packet ends at end, and installs tun as its only metadata.
func finishPop(p *packet.Packet, tun *packet.Tunnel, hlen, end int) bool {
	// The inner frame ends where the outer IP packet does: Ethernet
	// padding of a short outer frame is not part of it.
	p.Truncate(end)
	p.Pull(hlen)
	p.ResetOffsets()
	p.RSSHash = 0 // the port's hash was of the outer headers
	// All the metadata starts afresh, as Open vSwitch's
	// pkt_metadata_init_tnl: recirc_id, dp_hash, skb_mark, skb_priority,
	// conntrack state and in_port are 0 (the datapath sets in_port).
	p.Md = packet.Metadata{Tunnel: *tun}
	p.DPHashValid = false
	return true
}
