package tnl

import (
	"encoding/binary"
	"errors"
	"math/bits"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/internal/ovshash"
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

var errBadHeader = errors.New("tnl: header is not a UDP or GRE tunnel header")

// SourcePort maps a flow hash into the tunnel source port range as Open
// vSwitch does: min + (hash * (max - min)) >> 32.
func SourcePort(hash uint32) uint16 {
	return uint16(uint64(hash)*(SrcPortMax-SrcPortMin)>>32) + SrcPortMin
}

// Push prepends h to p and fills the per-packet fields: the IP total
// (IPv4) or payload (IPv6) length with the IPv4 checksum updated for it;
// for UDP tunnels the UDP length, the UDP source port from the packet's
// hash (see PacketHash) and, when h's checksum field is non-zero, the UDP
// checksum over the pseudo-header; for GRE the checksum when the C flag
// is set. A GRE sequence number is left as in h (0): PushSeq sets it. It
// uses the headroom when there is enough and otherwise moves the frame
// back into the tailroom; it allocates nothing. The offsets are reset to
// the outer headers (L3 after Ethernet, L4 at UDP or GRE). The metadata
// is left to the caller (the datapath re-initialises it, as Open
// vSwitch's netdev_push_header does).
func Push(p *packet.Packet, h *Header) error { return push(p, h, 0, false) }

// PushSeq is Push for a header with a GRE sequence number (HasSeq): it
// writes seq there before the GRE checksum is computed, so that the
// checksum covers it. (Open vSwitch 3.1 sums first and then writes the
// number, which leaves a wrong checksum on every packet but the one with
// sequence number 0.)
func PushSeq(p *packet.Packet, h *Header, seq uint32) error { return push(p, h, seq, true) }

func push(p *packet.Packet, h *Header, seq uint32, setSeq bool) error {
	n := int(h.Len)
	if n > MaxLen || n < ethLen+ipv4Len+greBaseLen {
		return errBadHeader
	}
	iplen := h.ipLen()
	gre := h.Type.IsGRE()
	switch {
	case gre:
		if h.greHeader() == nil {
			return errBadHeader
		}
	case n < ethLen+iplen+udpLen:
		return errBadHeader
	}
	l4len := n - ethLen - iplen + p.Len()
	if l4len+iplen > 0xffff {
		return ErrNoRoom
	}
	var hash uint32
	if !gre {
		hash = PacketHash(p)
	}
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
	l4 := ip[iplen : iplen+l4len]
	if gre {
		pushGRE(l4, seq, setSeq)
	} else {
		binary.BigEndian.PutUint16(l4[0:], SourcePort(hash))
		binary.BigEndian.PutUint16(l4[4:], uint16(l4len))
		if binary.BigEndian.Uint16(l4[6:]) != 0 {
			// The template's 0xffff stays in while summing: it is the
			// ones' complement zero.
			c := packet.Fold(packet.ChecksumPartial(l4, pseudo))
			if c == 0 {
				c = 0xffff
			}
			binary.BigEndian.PutUint16(l4[6:], c)
		}
	}
	p.ResetOffsets()
	p.L3 = ethLen
	p.L4 = uint16(ethLen + iplen)
	return nil
}

// pushGRE fills the sequence number and checksum of the GRE packet g
// (header and payload) whose header came from a template.
func pushGRE(g []byte, seq uint32, setSeq bool) {
	flags := binary.BigEndian.Uint16(g)
	if setSeq && flags&greSeq != 0 {
		binary.BigEndian.PutUint32(g[greHeaderLen(flags)-4:], seq)
	}
	if flags&greCsum != 0 {
		// The checksum is over the GRE header and payload with the
		// checksum field 0 (as the template has it); no pseudo-header.
		binary.BigEndian.PutUint16(g[greBaseLen:], packet.Checksum(g))
	}
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
				h = ovshash.Add(h, binary.LittleEndian.Uint32(a[i:]))
			}
		}
	case flow.EthTypeIPv4, flow.EthTypeARP:
		h = ovshash.Add(h, bits.ReverseBytes32(k.NwSrc))
		h = ovshash.Add(h, bits.ReverseBytes32(k.NwDst))
	default:
		return ovshash.Finish(h, 42)
	}
	h = ovshash.Add(h, uint32(k.NwProto))
	switch k.NwProto {
	case flow.IPProtoTCP, flow.IPProtoUDP, flow.IPProtoSCTP, flow.IPProtoICMP, flow.IPProtoICMPv6:
		h = ovshash.Add(h, uint32(bits.ReverseBytes16(k.TpSrc))|uint32(bits.ReverseBytes16(k.TpDst))<<16)
	}
	return ovshash.Finish(h, 42)
}
