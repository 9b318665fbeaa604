package conntrack

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/datapath/packet"
)

// pktInfo is what conntrack learns from one packet's bytes. It lives on
// the stack of Execute; parsing never allocates.
type pktInfo struct {
	key     Key
	l3, l4  int // offsets of the IP and L4 headers in the frame
	l4end   int // end of the IP payload (without Ethernet padding)
	related bool
	// inner headers of an ICMP error (related), offsets in the frame.
	innerL3, innerL4 int
	// TCP fields.
	tcpFlags uint16
	seq, ack uint32
	win      uint16
	dataLen  uint32 // TCP payload length
	wscale   int8   // window scale option on SYN, -1 if absent
	// l7 is the UDP/TCP payload offset (helpers).
	l7 int
}

const (
	ethTypeIPv4 = 0x0800
	ethTypeIPv6 = 0x86dd
	ethTypeVLAN = 0x8100
	ethTypeQinQ = 0x88a8
)

// TCP flag bits.
const (
	tcpFIN = 0x01
	tcpSYN = 0x02
	tcpRST = 0x04
	tcpPSH = 0x08
	tcpACK = 0x10
	tcpURG = 0x20
)

// parseResult classifies a packet before any lookup.
type parseResult uint8

const (
	parseOK       parseResult = iota
	parseInvalid              // malformed or bad checksum: +trk+inv
	parseNotIP                // not IP: conntrack leaves it untracked (+trk+inv as OVS)
	parseFragment             // an IP fragment that was not reassembled
)

// l3Offset finds the IP header, using flow extraction's offset when set.
func l3Offset(p *packet.Packet, d []byte) (int, uint16) {
	if p.L3 != packet.OffsetUnset && int(p.L3) >= 2 && int(p.L3) <= len(d) {
		return int(p.L3), binary.BigEndian.Uint16(d[p.L3-2:])
	}
	off := 12
	for off+2 <= len(d) {
		t := binary.BigEndian.Uint16(d[off:])
		if t == ethTypeVLAN || t == ethTypeQinQ {
			off += 4
			continue
		}
		return off + 2, t
	}
	return -1, 0
}

// parsePacket fills pi from frame d. checksums says whether L3/L4
// checksums are verified (OVS verifies them unless offloaded).
func parsePacket(pi *pktInfo, p *packet.Packet, checksums bool) parseResult {
	d := p.Data()
	l3, et := l3Offset(p, d)
	if l3 < 0 {
		return parseNotIP
	}
	pi.wscale = -1
	pi.l3 = l3
	var r parseResult
	switch et {
	case ethTypeIPv4:
		r = parseIPv4(pi, d, l3, checksums, false)
	case ethTypeIPv6:
		r = parseIPv6(pi, d, l3, false)
	default:
		return parseNotIP
	}
	if r != parseOK {
		return r
	}
	return parseL4(pi, d, checksums)
}

func parseIPv4(pi *pktInfo, d []byte, l3 int, checksums, inner bool) parseResult {
	if len(d)-l3 < 20 {
		return parseInvalid
	}
	h := d[l3:]
	ihl := int(h[0]&0xf) * 4
	total := int(binary.BigEndian.Uint16(h[2:]))
	if h[0]>>4 != 4 || ihl < 20 || len(h) < ihl {
		return parseInvalid
	}
	if inner {
		// An ICMP error quotes the header and at least 8 bytes; the
		// total length is that of the original packet.
		total = len(h)
	} else if total < ihl || total > len(h) {
		return parseInvalid
	}
	if checksums && !inner && packet.Checksum(h[:ihl]) != 0 {
		return parseInvalid
	}
	if fo := binary.BigEndian.Uint16(h[6:]); fo&0x3fff != 0 {
		return parseFragment
	}
	k := &pi.key
	k.Family = 4
	k.Proto = h[9]
	copy(k.Src[:4], h[12:16])
	copy(k.Dst[:4], h[16:20])
	pi.l4 = l3 + ihl
	pi.l4end = l3 + total
	return parseOK
}

func parseIPv6(pi *pktInfo, d []byte, l3 int, inner bool) parseResult {
	if len(d)-l3 < 40 {
		return parseInvalid
	}
	h := d[l3:]
	if h[0]>>4 != 6 {
		return parseInvalid
	}
	end := l3 + 40 + int(binary.BigEndian.Uint16(h[4:]))
	if inner {
		end = len(d)
	} else if end > len(d) {
		return parseInvalid
	}
	k := &pi.key
	k.Family = 6
	copy(k.Src[:], h[8:24])
	copy(k.Dst[:], h[24:40])
	next := h[6]
	off := l3 + 40
	// Skip extension headers (bounded: each moves off forward).
	for range 8 {
		switch next {
		case 0, 43, 60: // hop-by-hop, routing, destination options
			if end-off < 8 {
				return parseInvalid
			}
			next = d[off]
			off += (int(d[off+1]) + 1) * 8
		case 51: // AH
			if end-off < 8 {
				return parseInvalid
			}
			next = d[off]
			off += (int(d[off+1]) + 2) * 4
		case 44: // fragment
			if end-off < 8 {
				return parseInvalid
			}
			if binary.BigEndian.Uint16(d[off+2:])&0xfff9 != 0 {
				return parseFragment
			}
			// An atomic fragment (offset 0, no more fragments).
			next = d[off]
			off += 8
		default:
			if off > end {
				return parseInvalid
			}
			k.Proto = next
			pi.l4 = off
			pi.l4end = end
			return parseOK
		}
	}
	return parseInvalid
}

// icmpReply maps an ICMP query type to its reply type; valid marks query
// and reply types, isRequest those that may open a connection.
type icmpInfo struct {
	reverse   uint8
	query     bool
	isRequest bool
	err       bool
}

var icmp4Types = [256]icmpInfo{
	0:  {reverse: 8, query: true},
	8:  {reverse: 0, query: true, isRequest: true},
	13: {reverse: 14, query: true, isRequest: true},
	14: {reverse: 13, query: true},
	15: {reverse: 16, query: true, isRequest: true},
	16: {reverse: 15, query: true},
	3:  {err: true},
	4:  {err: true},
	5:  {err: true},
	11: {err: true},
	12: {err: true},
}

var icmp6Types = [256]icmpInfo{
	128: {reverse: 129, query: true, isRequest: true},
	129: {reverse: 128, query: true},
	1:   {err: true},
	2:   {err: true},
	3:   {err: true},
	4:   {err: true},
}

func icmpTable(family uint8) *[256]icmpInfo {
	if family == 6 {
		return &icmp6Types
	}
	return &icmp4Types
}

// l4Checksum verifies the L4 checksum of the outer packet.
func l4ChecksumOK(pi *pktInfo, d []byte) bool {
	l4 := d[pi.l4:pi.l4end]
	k := &pi.key
	var sum uint32
	switch {
	case k.Proto == protoICMP:
		return packet.Checksum(l4) == 0
	case k.Family == 4:
		if k.Proto == protoUDP && binary.BigEndian.Uint16(l4[6:]) == 0 {
			return true
		}
		sum = packet.PseudoHeaderIPv4(binary.BigEndian.Uint32(k.Src[:]), binary.BigEndian.Uint32(k.Dst[:]), k.Proto, len(l4))
	default:
		sum = packet.PseudoHeaderIPv6(k.Src[:], k.Dst[:], k.Proto, len(l4))
	}
	return packet.Fold(packet.ChecksumPartial(l4, sum)) == 0
}

func parseL4(pi *pktInfo, d []byte, checksums bool) parseResult {
	k := &pi.key
	l4 := d[pi.l4:pi.l4end]
	switch k.Proto {
	case protoTCP:
		if len(l4) < 20 {
			return parseInvalid
		}
		hl := int(l4[12]>>4) * 4
		if hl < 20 || hl > len(l4) {
			return parseInvalid
		}
		if checksums && !l4ChecksumOK(pi, d) {
			return parseInvalid
		}
		k.SrcPort = binary.BigEndian.Uint16(l4)
		k.DstPort = binary.BigEndian.Uint16(l4[2:])
		pi.seq = binary.BigEndian.Uint32(l4[4:])
		pi.ack = binary.BigEndian.Uint32(l4[8:])
		pi.tcpFlags = binary.BigEndian.Uint16(l4[12:]) & 0xfff
		pi.win = binary.BigEndian.Uint16(l4[14:])
		pi.dataLen = uint32(len(l4) - hl)
		pi.l7 = pi.l4 + hl
		if pi.tcpFlags&tcpSYN != 0 {
			pi.wscale = tcpWScale(l4[20:hl])
		}
	case protoUDP, protoUDPLite, protoSCTP, protoDCCP:
		min := 4
		if k.Proto == protoUDP {
			min = 8
		}
		if len(l4) < min {
			return parseInvalid
		}
		if k.Proto == protoUDP {
			if int(binary.BigEndian.Uint16(l4[4:])) > len(l4) || checksums && !l4ChecksumOK(pi, d) {
				return parseInvalid
			}
		}
		k.SrcPort = binary.BigEndian.Uint16(l4)
		k.DstPort = binary.BigEndian.Uint16(l4[2:])
		pi.l7 = pi.l4 + min
	case protoICMP, protoICMPv6:
		if (k.Proto == protoICMP) != (k.Family == 4) || len(l4) < 8 {
			return parseInvalid
		}
		if checksums && !l4ChecksumOK(pi, d) {
			return parseInvalid
		}
		t := &icmpTable(k.Family)[l4[0]]
		switch {
		case t.query:
			k.SrcType, k.DstType, k.ICMPCode = l4[0], t.reverse, l4[1]
			id := binary.BigEndian.Uint16(l4[4:])
			k.SrcPort, k.DstPort = id, id
		case t.err:
			return parseRelated(pi, d)
		default:
			return parseInvalid
		}
	}
	return parseOK
}

// parseRelated parses the packet quoted in an ICMP error and leaves in
// pi.key the key of the direction the error travels in: the reverse of the
// quoted packet's key.
func parseRelated(pi *pktInfo, d []byte) parseResult {
	outer := pi.key
	inL3 := pi.l4 + 8
	var in pktInfo
	in.wscale = -1
	var r parseResult
	if outer.Family == 4 {
		r = parseIPv4(&in, d[:pi.l4end], inL3, false, true)
	} else {
		r = parseIPv6(&in, d[:pi.l4end], inL3, true)
	}
	if r != parseOK {
		return parseInvalid
	}
	il4 := d[in.l4:pi.l4end]
	k := &in.key
	switch {
	case hasPorts(k.Proto):
		if len(il4) < 4 {
			return parseInvalid
		}
		k.SrcPort = binary.BigEndian.Uint16(il4)
		k.DstPort = binary.BigEndian.Uint16(il4[2:])
	case k.Proto == protoICMP || k.Proto == protoICMPv6:
		if len(il4) < 8 {
			return parseInvalid
		}
		t := &icmpTable(k.Family)[il4[0]]
		if !t.query {
			return parseInvalid // no error about an error
		}
		k.SrcType, k.DstType, k.ICMPCode = il4[0], t.reverse, il4[1]
		id := binary.BigEndian.Uint16(il4[4:])
		k.SrcPort, k.DstPort = id, id
	}
	pi.key = k.reverse()
	pi.related = true
	pi.innerL3, pi.innerL4 = inL3, in.l4
	return parseOK
}

// tcpWScale returns the window scale option's shift, or -1.
func tcpWScale(opts []byte) int8 {
	for len(opts) > 0 {
		switch opts[0] {
		case 0:
			return -1
		case 1:
			opts = opts[1:]
			continue
		}
		if len(opts) < 2 || opts[1] < 2 || int(opts[1]) > len(opts) {
			return -1
		}
		if opts[0] == 3 && opts[1] == 3 {
			return int8(min(opts[2], 14))
		}
		opts = opts[opts[1]:]
	}
	return -1
}
