package conntrack

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

// maxNATAddrTries bounds how many addresses of a range a commit tries, so
// that an IPv6 range cannot turn one packet into an unbounded search.
const maxNATAddrTries = 64

// Ephemeral ports SNAT falls back to when no port range is given and the
// original port is taken (as OVS).
const (
	ephemeralMin = 1024
	ephemeralMax = 65535
)

// addrAdd adds n to the address a of the given family (big-endian).
func addrAdd(a [16]byte, n uint64, family uint8) [16]byte {
	if family == 4 {
		v := binary.BigEndian.Uint32(a[:]) + uint32(n)
		binary.BigEndian.PutUint32(a[:], v)
		return a
	}
	lo := binary.BigEndian.Uint64(a[8:])
	hi := binary.BigEndian.Uint64(a[:])
	nl := lo + n
	if nl < lo {
		hi++
	}
	binary.BigEndian.PutUint64(a[:], hi)
	binary.BigEndian.PutUint64(a[8:], nl)
	return a
}

// addrSpan returns max-min+1 capped at 2^32 (enough for any attempt count).
func addrSpan(lo, hi [16]byte, family uint8) uint64 {
	if family == 4 {
		return uint64(binary.BigEndian.Uint32(hi[:])-binary.BigEndian.Uint32(lo[:])) + 1
	}
	if binary.BigEndian.Uint64(hi[:]) != binary.BigEndian.Uint64(lo[:]) {
		return 1 << 32
	}
	d := binary.BigEndian.Uint64(hi[8:]) - binary.BigEndian.Uint64(lo[8:])
	return min(d, 1<<32-1) + 1
}

// natChooser owns the choice of the translated tuple of a new NATed
// connection: its seed spreads connections over the address and port
// ranges; the zone tables' seed finds the reply keys already in use.
type natChooser struct {
	natSeed *hashSeed // hashes the original tuple to a starting point
	seed    *hashSeed // the zone tables' key hash seed
}

// choose picks the reply key of a new connection committed with nat:
// the first translated tuple whose reply key is not in use in the zone.
// It reports false when the address and port ranges are exhausted.
//
// Preconditions: z.mu is held (so no other commit takes the same tuple).
func (t *natChooser) choose(z *zone, orig *Key, n *odp.CtNAT) (Key, uint8, bool) {
	rev := orig.reverse()
	if !n.Src && !n.Dst {
		return rev, 0, true
	}
	var kind uint8
	// For SNAT the reply's destination changes; for DNAT its source.
	addr, port := &rev.Dst, &rev.DstPort
	kind = natSrc
	if n.Dst {
		addr, port = &rev.Src, &rev.SrcPort
		kind = natDst
	}
	ports := hasPorts(orig.Proto)
	var h uint64
	if n.Random {
		h = rand.Uint64()
	} else {
		hk := *orig
		if n.Persistent {
			hk.SrcPort, hk.DstPort = 0, 0
		}
		h = hk.hash(t.natSeed)
	}
	// Address candidates.
	naddr := uint64(1)
	var base [16]byte = *addr
	// An all-zero minimum address keeps the connection's own address and
	// only picks a free port (Open vSwitch's find_addr: "zero SNAT", the
	// ct_zero_snat capability OVN relies on).
	if n.HasAddr && n.MinAddr != ([16]byte{}) {
		if n.IPv6 != (orig.Family == 6) {
			return rev, 0, false
		}
		base = n.MinAddr
		naddr = addrSpan(n.MinAddr, n.MaxAddr, orig.Family)
	}
	// Port candidates: the configured range, or the original port then
	// (SNAT only) the ephemeral range.
	origPort := *port
	pmin, pmax := uint32(n.MinPort), uint32(n.MaxPort)
	fallback := false
	if !ports {
		pmin, pmax = uint32(origPort), uint32(origPort)
	} else if pmax == 0 {
		pmin, pmax = uint32(origPort), uint32(origPort)
		fallback = kind == natSrc
	}
	tries := min(naddr, maxNATAddrTries)
	a0 := h % naddr
	for i := uint64(0); i < tries; i++ {
		*addr = addrAdd(base, (a0+i)%naddr, orig.Family)
		if t.try(z, &rev, port, pmin, pmax, h>>32) {
			return rev, kind, true
		}
		if fallback && t.try(z, &rev, port, ephemeralMin, ephemeralMax, h>>32) {
			return rev, kind, true
		}
	}
	return rev, 0, false
}

// try searches ports lo..hi (from a hashed start) for a free reply key.
func (t *natChooser) try(z *zone, rev *Key, port *uint16, lo, hi uint32, h uint64) bool {
	span := hi - lo + 1
	start := uint32(h % uint64(span))
	for j := uint32(0); j < span; j++ {
		*port = uint16(lo + (start+j)%span)
		if c, _ := z.lookup(rev, rev.hash(t.seed)); c == nil {
			return true
		}
	}
	return false
}

// natTarget returns the tuple a packet in direction reply must carry
// after translation: the reverse of the other direction's key.
func natTarget(c *Conn, reply bool) Key {
	if reply {
		return c.nodes[0].key.reverse()
	}
	return c.nodes[1].key.reverse()
}

// natBits returns the ct_state NAT bits for a translated packet.
func natBits(c *Conn, reply bool) uint8 {
	src, dst := c.nodes[0].nat&natSrc != 0, c.nodes[0].nat&natDst != 0
	if reply {
		src, dst = dst, src
	}
	var s uint8
	if src {
		s |= CsSrcNAT
	}
	if dst {
		s |= CsDstNAT
	}
	return s
}

// rewriteHeaders changes the addresses and ports of the IP header at l3
// (L4 header at l4, ending at l4end) from `from` to `to`, fixing the IPv4
// header checksum and the TCP/UDP/ICMPv6 checksum incrementally. quoted
// marks headers inside an ICMP error, whose L4 checksum may be cut off.
func rewriteHeaders(d []byte, l3, l4, l4end int, from, to *Key, quoted bool) {
	if *from == *to {
		// The direction this packet travels is not translated (a
		// source NAT's reply side, OVN's nat on a connection without
		// a translation): a tenth of conntrack's time in the OVN
		// pipeline went to finding that field by field.
		return
	}
	l4b := d[l4:l4end]
	csumOff := -1
	switch from.Proto {
	case protoTCP:
		csumOff = 16
	case protoUDP:
		csumOff = 6
	case protoICMPv6:
		csumOff = 2
	}
	if csumOff >= 0 && csumOff+2 > len(l4b) {
		csumOff = -1
	}
	if csumOff >= 0 && from.Proto == protoUDP && from.Family == 4 && binary.BigEndian.Uint16(l4b[csumOff:]) == 0 {
		csumOff = -1 // no UDP checksum over IPv4
	}
	if quoted && from.Proto == protoICMPv6 {
		csumOff = -1
	}
	upd := func(o, n []byte) {
		if csumOff >= 0 {
			c := binary.BigEndian.Uint16(l4b[csumOff:])
			binary.BigEndian.PutUint16(l4b[csumOff:], packet.UpdateChecksumBytes(c, o, n))
		}
	}
	pseudo := from.Proto != protoICMP
	if from.Family == 4 {
		ip := d[l3:]
		for _, f := range [2]struct {
			off      int
			old, new [16]byte
		}{{12, from.Src, to.Src}, {16, from.Dst, to.Dst}} {
			if f.old == f.new {
				continue
			}
			ipc := binary.BigEndian.Uint16(ip[10:])
			binary.BigEndian.PutUint16(ip[10:], packet.UpdateChecksumBytes(ipc, f.old[:4], f.new[:4]))
			if pseudo {
				upd(f.old[:4], f.new[:4])
			}
			copy(ip[f.off:f.off+4], f.new[:4])
		}
	} else {
		ip := d[l3:]
		if from.Src != to.Src {
			upd(from.Src[:], to.Src[:])
			copy(ip[8:24], to.Src[:])
		}
		if from.Dst != to.Dst {
			upd(from.Dst[:], to.Dst[:])
			copy(ip[24:40], to.Dst[:])
		}
	}
	if hasPorts(from.Proto) && len(l4b) >= 4 {
		var o, n [2]byte
		if from.SrcPort != to.SrcPort {
			binary.BigEndian.PutUint16(o[:], from.SrcPort)
			binary.BigEndian.PutUint16(n[:], to.SrcPort)
			upd(o[:], n[:])
			copy(l4b[0:2], n[:])
		}
		if from.DstPort != to.DstPort {
			binary.BigEndian.PutUint16(o[:], from.DstPort)
			binary.BigEndian.PutUint16(n[:], to.DstPort)
			upd(o[:], n[:])
			copy(l4b[2:4], n[:])
		}
	}
}

// natPacket translates a packet of connection c in direction reply and
// returns the ct_state NAT bits to set.
func natPacket(p *packet.Packet, pi *pktInfo, c *Conn, reply bool) uint8 {
	if c.nodes[0].nat == 0 {
		return 0
	}
	to := natTarget(c, reply)
	d := p.Data()
	if !pi.related {
		rewriteHeaders(d, pi.l3, pi.l4, pi.l4end, &pi.key, &to, false)
		pi.key = to
		return natBits(c, reply)
	}
	// ICMP error: the quoted packet is the reverse of the direction the
	// error travels in; rewrite it, then the outer addresses, then the
	// ICMP checksum over the whole message.
	qFrom, qTo := pi.key.reverse(), to.reverse()
	rewriteHeaders(d, pi.innerL3, pi.innerL4, pi.l4end, &qFrom, &qTo, true)
	var outer Key
	outer.Family = pi.key.Family
	if outer.Family == 4 {
		copy(outer.Src[:4], d[pi.l3+12:])
		copy(outer.Dst[:4], d[pi.l3+16:])
		outer.Proto = protoICMP
	} else {
		copy(outer.Src[:], d[pi.l3+8:])
		copy(outer.Dst[:], d[pi.l3+24:])
		outer.Proto = protoICMPv6
	}
	newOuter := outer
	newOuter.Dst = to.Dst
	if outer.Src == pi.key.Src {
		newOuter.Src = to.Src // the peer itself sent the error
	}
	rewriteHeaders(d, pi.l3, pi.l4, pi.l4end, &outer, &newOuter, false)
	icmp := d[pi.l4:pi.l4end]
	icmp[2], icmp[3] = 0, 0
	var sum uint32
	if outer.Family == 6 {
		sum = packet.PseudoHeaderIPv6(newOuter.Src[:], newOuter.Dst[:], protoICMPv6, len(icmp))
	}
	binary.BigEndian.PutUint16(icmp[2:], packet.Fold(packet.ChecksumPartial(icmp, sum)))
	pi.key = to
	return natBits(c, reply)
}
