package tnl

import (
	"encoding/binary"
	"errors"
	"math/bits"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/packet"
)

// The UDP source port range of tunnels, Open vSwitch's default
// tnl_udp_port_min..tnl_udp_port_max (the Linux ephemeral range).
const (
	SrcPortMin = 32768
	SrcPortMax = 61000
)

// ErrNoRoom is returned by Push when the packet's buffer cannot hold the
// header in front of the frame.
var ErrNoRoom = errors.New("tnl: no room for the tunnel header")

var errBadHeader = errors.New("tnl: header is not a UDP tunnel header")

// SourcePort maps a flow hash into the tunnel source port range as Open
// vSwitch does: min + (hash * (max - min)) >> 32.
func SourcePort(hash uint32) uint16 {
	return uint16(uint64(hash)*(SrcPortMax-SrcPortMin)>>32) + SrcPortMin
}

// Push prepends h to p and fills the per-packet fields: the IP total
// (IPv4) or payload (IPv6) length with the IPv4 checksum updated for it,
// the UDP length, the UDP source port from the packet's hash (see
// PacketHash) and, when h's checksum field is non-zero, the UDP checksum
// over the pseudo-header. It uses the headroom when there is enough and
// otherwise moves the frame back into the tailroom; it allocates nothing.
// The offsets are reset to the outer headers (L3 after Ethernet, L4 at
// UDP). The metadata is left to the caller (the datapath re-initialises
// it, as Open vSwitch's netdev_push_header does).
func Push(p *packet.Packet, h *Header) error {
	n := int(h.Len)
	if n > MaxLen || n < ethLen+ipv4Len+udpLen {
		return errBadHeader
	}
	iplen := h.ipLen()
	if n < ethLen+iplen+udpLen {
		return errBadHeader
	}
	l4len := n - ethLen - iplen + p.Len()
	if l4len+iplen > 0xffff {
		return ErrNoRoom
	}
	hash := PacketHash(p)
	hdr, err := p.Push(n)
	if err != nil {
		hdr, err = pushMoving(p, n)
		if err != nil {
			return err
		}
	}
	copy(hdr, h.Data[:n])
	d := p.Data()
	ip := d[ethLen:]
	var pseudo uint32
	if iplen == ipv6Len {
		binary.BigEndian.PutUint16(ip[4:], uint16(l4len))
		pseudo = packet.PseudoHeaderIPv6(ip[8:24], ip[24:40], ip[6], l4len)
	} else {
		tot := uint16(l4len + ipv4Len)
		binary.BigEndian.PutUint16(ip[2:], tot)
		csum := binary.BigEndian.Uint16(ip[10:])
		binary.BigEndian.PutUint16(ip[10:], packet.UpdateChecksum16(csum, 0, tot))
		pseudo = packet.PseudoHeaderIPv4(binary.BigEndian.Uint32(ip[12:]), binary.BigEndian.Uint32(ip[16:]), ip[9], l4len)
	}
	udp := ip[iplen:]
	binary.BigEndian.PutUint16(udp[0:], SourcePort(hash))
	binary.BigEndian.PutUint16(udp[4:], uint16(l4len))
	if binary.BigEndian.Uint16(udp[6:]) != 0 {
		// The template's 0xffff stays in while summing: it is the
		// ones' complement zero.
		c := packet.Fold(packet.ChecksumPartial(udp[:l4len], pseudo))
		if c == 0 {
			c = 0xffff
		}
		binary.BigEndian.PutUint16(udp[6:], c)
	}
	p.ResetOffsets()
	p.L3 = ethLen
	p.L4 = uint16(ethLen + iplen)
	return nil
}

// pushMoving makes room for n header bytes when the headroom is too
// small: it grows the frame at the tail and moves the bytes back.
func pushMoving(p *packet.Packet, n int) ([]byte, error) {
	old := p.Len()
	if _, err := p.Append(n); err != nil {
		return nil, ErrNoRoom
	}
	d := p.Data()
	copy(d[n:], d[:old])
	return d[:n], nil
}

// PacketHash returns the hash Push derives the UDP source port from: the
// packet's RSS hash when the port gave one, otherwise Open vSwitch's
// miniflow_hash_5tuple of the packet (basis 0), which is also stored as
// the packet's RSS hash, as Open vSwitch's netdev_tnl_get_src_port does.
// With the same inner packet the source port is then the one Open
// vSwitch's userspace datapath picks.
func PacketHash(p *packet.Packet) uint32 {
	if p.RSSHash != 0 {
		return p.RSSHash
	}
	var k flow.Key
	flow.Extract(p, &k)
	h := Hash5Tuple(&k)
	p.RSSHash = h
	return h
}

// Hash5Tuple is Open vSwitch's miniflow_hash_5tuple(flow, 0) on a
// little-endian host: murmur3 rounds over the addresses (IPv6: the two
// addresses as 64-bit words; IPv4 and ARP: nw_src, nw_dst), nw_proto and,
// for TCP, UDP, SCTP, ICMP and ICMPv6, the two ports as one 32-bit word,
// each loaded from its network-order bytes as a native integer.
func Hash5Tuple(k *flow.Key) uint32 {
	var h uint32
	switch k.EthType {
	case flow.EthTypeIPv6:
		for _, a := range [2]*[16]byte{&k.IPv6Src, &k.IPv6Dst} {
			for i := 0; i < 16; i += 4 {
				h = hashAdd(h, binary.LittleEndian.Uint32(a[i:]))
			}
		}
	case flow.EthTypeIPv4, flow.EthTypeARP:
		h = hashAdd(h, bits.ReverseBytes32(k.NwSrc))
		h = hashAdd(h, bits.ReverseBytes32(k.NwDst))
	default:
		return hashFinish(h, 42)
	}
	h = hashAdd(h, uint32(k.NwProto))
	switch k.NwProto {
	case flow.IPProtoTCP, flow.IPProtoUDP, flow.IPProtoSCTP, flow.IPProtoICMP, flow.IPProtoICMPv6:
		h = hashAdd(h, uint32(bits.ReverseBytes16(k.TpSrc))|uint32(bits.ReverseBytes16(k.TpDst))<<16)
	}
	return hashFinish(h, 42)
}

// hashAdd and hashFinish are Open vSwitch's hash_add and hash_finish (the
// murmur3 round and finaliser).
func hashAdd(h, w uint32) uint32 {
	w *= 0xcc9e2d51
	w = bits.RotateLeft32(w, 15)
	w *= 0x1b873593
	h ^= w
	h = bits.RotateLeft32(h, 13)
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
