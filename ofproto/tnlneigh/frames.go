package tnlneigh

import (
	"encoding/binary"
	"net/netip"
)

// ARPRequest returns the broadcast ARP request Open vSwitch sends to
// resolve dstIP from srcMAC/srcIP: 42 bytes, no padding, target hardware
// address zero. Non-IPv4 addresses are written as 0.0.0.0.
func ARPRequest(srcMAC [6]byte, srcIP, dstIP netip.Addr) []byte {
	b := make([]byte, 42)
	copy(b[0:6], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	copy(b[6:12], srcMAC[:])
	binary.BigEndian.PutUint16(b[12:], 0x0806)
	// htype Ethernet, ptype IPv4, hlen 6, plen 4, op request
	copy(b[14:22], []byte{0, 1, 0x08, 0x00, 6, 4, 0, 1})
	copy(b[22:28], srcMAC[:])
	copy(b[28:32], ip4(srcIP))
	// b[32:38] target hardware address stays zero
	copy(b[38:42], ip4(dstIP))
	return b
}

func ip4(a netip.Addr) []byte {
	a = a.Unmap()
	if !a.Is4() {
		return make([]byte, 4)
	}
	v := a.As4()
	return v[:]
}

// NeighborSolicit returns the IPv6 Neighbor Solicitation Open vSwitch sends
// to resolve dstIP: to the solicited-node multicast group of dstIP (and its
// 33:33:ff:xx:xx:xx MAC), hop limit 255, traffic class and flow label 0,
// with a source link-layer address option and a valid ICMPv6 checksum.
func NeighborSolicit(srcMAC [6]byte, srcIP, dstIP netip.Addr) []byte {
	const (
		ethLen  = 14
		ip6Len  = 40
		icmpLen = 24 + 8 // NS message + SLL option
	)
	src, tgt := srcIP.As16(), dstIP.As16()
	sn := [16]byte{0: 0xff, 1: 0x02, 11: 0x01, 12: 0xff, 13: tgt[13], 14: tgt[14], 15: tgt[15]}
	b := make([]byte, ethLen+ip6Len+icmpLen)
	copy(b[0:6], []byte{0x33, 0x33, sn[12], sn[13], sn[14], sn[15]})
	copy(b[6:12], srcMAC[:])
	binary.BigEndian.PutUint16(b[12:], 0x86dd)
	ip := b[ethLen:]
	ip[0] = 0x60
	binary.BigEndian.PutUint16(ip[4:], icmpLen)
	ip[6] = 58 // ICMPv6
	ip[7] = 255
	copy(ip[8:24], src[:])
	copy(ip[24:40], sn[:])
	m := ip[ip6Len:]
	m[0] = 135 // Neighbor Solicitation; code, checksum, reserved 0
	copy(m[8:24], tgt[:])
	m[24], m[25] = 1, 1 // source link-layer address option, 8 bytes
	copy(m[26:32], srcMAC[:])
	binary.BigEndian.PutUint16(m[2:], icmp6Checksum(src, sn, m))
	return b
}

func icmp6Checksum(src, dst [16]byte, msg []byte) uint16 {
	var sum uint32
	add := func(b []byte) {
		for i := 0; i+1 < len(b); i += 2 {
			sum += uint32(b[i])<<8 | uint32(b[i+1])
		}
		if len(b)%2 == 1 {
			sum += uint32(b[len(b)-1]) << 8
		}
	}
	add(src[:])
	add(dst[:])
	sum += uint32(len(msg)) + 58
	add(msg)
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}
