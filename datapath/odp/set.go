package odp

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/gvs-project/gvs/datapath/packet"
)

// IP protocol numbers the set actions care about.
const (
	protoICMP   = 1
	protoTCP    = 6
	protoUDP    = 17
	protoICMPv6 = 58
	protoSCTP   = 132
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// applySet writes a set or masked set action into one packet. It relies
// on the offsets flow extraction set (the megaflow guarantees the header
// is there) but still checks every length, so a packet that does not
// carry the header is left unchanged rather than corrupted or read past.
func applySet(p *packet.Packet, s *SetField) {
	switch s.Field {
	case FieldEth:
		if d := p.Data(); len(d) >= 12 {
			mergeBytes(d[:12], s.Val[:12], s.Mask[:12])
		}
	case FieldIPv4:
		setIPv4(p, s)
	case FieldIPv6:
		setIPv6(p, s)
	case FieldTCP:
		if l4 := p.L4Data(); len(l4) >= 20 {
			c := binary.BigEndian.Uint16(l4[16:])
			mergeWords(l4[:4], s.Val[:4], s.Mask[:4], &c, nil)
			binary.BigEndian.PutUint16(l4[16:], c)
		}
	case FieldUDP:
		if l4 := p.L4Data(); len(l4) >= 8 {
			c := binary.BigEndian.Uint16(l4[6:])
			if c == 0 { // no checksum stays no checksum
				mergeBytes(l4[:4], s.Val[:4], s.Mask[:4])
				return
			}
			mergeWords(l4[:4], s.Val[:4], s.Mask[:4], &c, nil)
			putUDPCsum(l4, c)
		}
	case FieldSCTP:
		setSCTP(p, s)
	case FieldICMP, FieldICMPv6:
		if l4 := p.L4Data(); len(l4) >= 4 {
			c := binary.BigEndian.Uint16(l4[2:])
			mergeWords(l4[:2], s.Val[:2], s.Mask[:2], &c, nil)
			binary.BigEndian.PutUint16(l4[2:], c)
		}
	case FieldARP:
		if l3 := p.L3Data(); len(l3) >= 28 {
			mergeBytes(l3[6:28], s.Val[6:28], s.Mask[6:28])
		}
	case FieldND:
		setND(p, s)
	case FieldSkbMark:
		p.Md.PktMark = mergeWord(p.Md.PktMark, s)
	case FieldSkbPriority:
		p.Md.SkbPriority = mergeWord(p.Md.SkbPriority, s)
	case FieldTunnel:
		if s.tun != nil {
			p.Md.Tunnel = *s.tun
		}
	case FieldMPLS:
		setMPLS(p, s)
	}
}

func mergeWord(old uint32, s *SetField) uint32 {
	v := binary.BigEndian.Uint32(s.Val[:])
	m := binary.BigEndian.Uint32(s.Mask[:])
	return old&^m | v&m
}

func mergeBytes(dst, v, m []byte) {
	for i := range dst {
		dst[i] = dst[i]&^m[i] | v[i]&m[i]
	}
}

// mergeWords merges v under m into dst (even length, 16-bit aligned with
// respect to the checksummed data) and folds every changed word into the
// checksums c1 and c2 (either may be nil), as RFC 1624.
func mergeWords(dst, v, m []byte, c1, c2 *uint16) {
	for i := 0; i+1 < len(dst); i += 2 {
		mw := binary.BigEndian.Uint16(m[i:])
		if mw == 0 {
			continue
		}
		old := binary.BigEndian.Uint16(dst[i:])
		nw := old&^mw | binary.BigEndian.Uint16(v[i:])&mw
		if nw == old {
			continue
		}
		binary.BigEndian.PutUint16(dst[i:], nw)
		if c1 != nil {
			*c1 = packet.UpdateChecksum16(*c1, old, nw)
		}
		if c2 != nil {
			*c2 = packet.UpdateChecksum16(*c2, old, nw)
		}
	}
}

func putUDPCsum(l4 []byte, c uint16) {
	if c == 0 { // 0 means "none" in UDP; a computed zero is sent as all ones
		c = 0xffff
	}
	binary.BigEndian.PutUint16(l4[6:], c)
}

// l4Csum returns where the checksum that covers the IP pseudo-header sits
// in an L4 header of protocol proto, or -1 when there is none (or the
// header is too short). UDP with a zero checksum has none.
func l4Csum(proto uint8, l4 []byte) int {
	switch {
	case proto == protoTCP && len(l4) >= 20:
		return 16
	case proto == protoUDP && len(l4) >= 8 && (l4[6] != 0 || l4[7] != 0):
		return 6
	case proto == protoICMPv6 && len(l4) >= 4:
		return 2
	}
	return -1
}

func setIPv4(p *packet.Packet, s *SetField) {
	l3 := p.L3Data()
	if len(l3) < 20 || l3[0]>>4 != 4 {
		return
	}
	ipc := binary.BigEndian.Uint16(l3[10:])
	// TOS (byte 1) and TTL (byte 8); proto and frag are never written.
	if m := s.Mask[1]; m != 0 {
		old := binary.BigEndian.Uint16(l3[0:])
		l3[1] = l3[1]&^m | s.Val[1]&m
		ipc = packet.UpdateChecksum16(ipc, old, binary.BigEndian.Uint16(l3[0:]))
	}
	if m := s.Mask[8]; m != 0 {
		old := binary.BigEndian.Uint16(l3[8:])
		l3[8] = l3[8]&^m | s.Val[8]&m
		ipc = packet.UpdateChecksum16(ipc, old, binary.BigEndian.Uint16(l3[8:]))
	}
	srcM, dstM := binary.BigEndian.Uint32(s.Mask[12:]), binary.BigEndian.Uint32(s.Mask[16:])
	if srcM|dstM != 0 {
		oldSrc, oldDst := binary.BigEndian.Uint32(l3[12:]), binary.BigEndian.Uint32(l3[16:])
		newSrc := oldSrc&^srcM | binary.BigEndian.Uint32(s.Val[12:])&srcM
		newDst := oldDst&^dstM | binary.BigEndian.Uint32(s.Val[16:])&dstM
		binary.BigEndian.PutUint32(l3[12:], newSrc)
		binary.BigEndian.PutUint32(l3[16:], newDst)
		ipc = adjust64(ipc, oldSrc, oldDst, newSrc, newDst)
		if binary.BigEndian.Uint16(l3[6:])&0x1fff == 0 { // not a later fragment
			l4 := p.L4Data()
			if at := l4Csum(l3[9], l4); at >= 0 {
				c := adjust64(binary.BigEndian.Uint16(l4[at:]), oldSrc, oldDst, newSrc, newDst)
				if l3[9] == protoUDP {
					putUDPCsum(l4, c)
				} else {
					binary.BigEndian.PutUint16(l4[at:], c)
				}
			}
		}
	}
	binary.BigEndian.PutUint16(l3[10:], ipc)
}

// adjust64 updates checksum csum for two 32-bit words changing from
// (o1, o2) to (n1, n2), folding once (RFC 1624, eqn. 3).
func adjust64(csum uint16, o1, o2, n1, n2 uint32) uint16 {
	o1, o2 = ^o1, ^o2
	sum := uint64(^csum) + uint64(o1>>16) + uint64(o1&0xffff) + uint64(o2>>16) + uint64(o2&0xffff) +
		uint64(n1>>16) + uint64(n1&0xffff) + uint64(n2>>16) + uint64(n2&0xffff)
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// ipv6Proto walks the IPv6 extension headers to the upper-layer protocol.
// It reports whether a routing header with segments left is present (the
// pseudo-header then uses the final destination, which a dst rewrite does
// not change) and ok=false for non-first fragments or truncated chains.
func ipv6Proto(l3 []byte) (proto uint8, routing, ok bool) {
	nh, off := l3[6], 40
	for range 8 {
		switch nh {
		case 0, 43, 60, 44, 51:
		default:
			return nh, routing, true
		}
		if off+8 > len(l3) {
			return 0, routing, false
		}
		h := l3[off:]
		next := h[0]
		switch nh {
		case 44:
			if binary.BigEndian.Uint16(h[2:])&0xfff8 != 0 {
				return 0, routing, false
			}
			off += 8
		case 51:
			off += (int(h[1]) + 2) * 4
		default:
			if nh == 43 && h[3] != 0 {
				routing = true
			}
			off += (int(h[1]) + 1) * 8
		}
		nh = next
	}
	return 0, routing, false
}

func setIPv6(p *packet.Packet, s *SetField) {
	l3 := p.L3Data()
	if len(l3) < 40 || l3[0]>>4 != 6 {
		return
	}
	// Traffic class and flow label share the first word with the
	// version, whose mask bits are always zero.
	mergeBytes(l3[0:4], s.Val[0:4], s.Mask[0:4])
	mergeBytes(l3[7:8], s.Val[7:8], s.Mask[7:8])
	if allZero(s.Mask[8:40]) {
		return
	}
	proto, routing, ok := ipv6Proto(l3)
	l4 := p.L4Data()
	at := -1
	if ok {
		at = l4Csum(proto, l4)
	}
	if at < 0 {
		mergeBytes(l3[8:40], s.Val[8:40], s.Mask[8:40])
		return
	}
	c := binary.BigEndian.Uint16(l4[at:])
	mergeWords(l3[8:24], s.Val[8:24], s.Mask[8:24], &c, nil)
	if routing {
		mergeBytes(l3[24:40], s.Val[24:40], s.Mask[24:40])
	} else {
		mergeWords(l3[24:40], s.Val[24:40], s.Mask[24:40], &c, nil)
	}
	if proto == protoUDP {
		putUDPCsum(l4, c)
	} else {
		binary.BigEndian.PutUint16(l4[at:], c)
	}
}

// l4End returns the end of the IP payload (excluding Ethernet padding)
// relative to the frame, bounded by the frame length.
func l4End(p *packet.Packet) int {
	n := p.Len()
	l3 := p.L3Data()
	if len(l3) >= 20 && l3[0]>>4 == 4 {
		if e := int(p.L3) + int(binary.BigEndian.Uint16(l3[2:])); e < n {
			return e
		}
	} else if len(l3) >= 40 && l3[0]>>4 == 6 {
		if e := int(p.L3) + 40 + int(binary.BigEndian.Uint16(l3[4:])); e < n {
			return e
		}
	}
	return n
}

func setSCTP(p *packet.Packet, s *SetField) {
	l4 := p.L4Data()
	if len(l4) < 12 {
		return
	}
	if e := l4End(p) - int(p.L4); e >= 12 && e < len(l4) {
		l4 = l4[:e]
	}
	// Keep a wrong checksum wrong: new = old ^ crc(before) ^ crc(after),
	// so a corrupt packet is not laundered into a valid one.
	old := binary.LittleEndian.Uint32(l4[8:])
	binary.LittleEndian.PutUint32(l4[8:], 0)
	before := crc32.Checksum(l4, castagnoli)
	mergeBytes(l4[:4], s.Val[:4], s.Mask[:4])
	after := crc32.Checksum(l4, castagnoli)
	binary.LittleEndian.PutUint32(l4[8:], old^before^after)
}

// ND option types carrying link-layer addresses.
const (
	ndOptSLL = 1
	ndOptTLL = 2
)

func setND(p *packet.Packet, s *SetField) {
	l4 := p.L4Data()
	if len(l4) < 24 || (l4[0] != 135 && l4[0] != 136) {
		return
	}
	c := binary.BigEndian.Uint16(l4[2:])
	mergeWords(l4[8:24], s.Val[0:16], s.Mask[0:16], &c, nil)
	opts := l4[24:]
	for len(opts) >= 8 {
		n := int(opts[1]) * 8
		if n == 0 || n > len(opts) {
			break
		}
		if n == 8 {
			switch opts[0] {
			case ndOptSLL:
				mergeWords(opts[2:8], s.Val[16:22], s.Mask[16:22], &c, nil)
			case ndOptTLL:
				mergeWords(opts[2:8], s.Val[22:28], s.Mask[22:28], &c, nil)
			}
		}
		opts = opts[n:]
	}
	binary.BigEndian.PutUint16(l4[2:], c)
}
