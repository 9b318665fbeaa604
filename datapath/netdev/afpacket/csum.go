package afpacket

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/datapath/packet"
)

// Ethernet types and IP protocols completeChecksum understands.
const (
	etherTypeIPv4  = 0x0800
	etherTypeIPv6  = 0x86dd
	etherTypeVLAN  = 0x8100
	etherTypeQinQ  = 0x88a8
	ipProtoTCP     = 6
	ipProtoUDP     = 17
	tcpCsumOffset  = 16
	udpCsumOffset  = 6
	maxVLANHeaders = 2
)

// l4CsumOffset gives, per IP protocol, where the checksum sits in the L4
// header and how long that header is at least.
var l4CsumOffset = [256]struct{ off, minLen int }{
	ipProtoTCP: {tcpCsumOffset, 20},
	ipProtoUDP: {udpCsumOffset, 8},
}

// completeChecksum computes the TCP or UDP checksum of an Ethernet frame
// whose checksum a local stack left for offload. It reports whether it
// wrote one; frames it does not understand (other protocols, IPv6
// extension headers, fragments, truncation) are left as they are.
func completeChecksum(f []byte) bool {
	be := binary.BigEndian
	if len(f) < 14 {
		return false
	}
	off := 12
	et := be.Uint16(f[off:])
	for i := 0; i < maxVLANHeaders && (et == etherTypeVLAN || et == etherTypeQinQ); i++ {
		off += 4
		if len(f) < off+2 {
			return false
		}
		et = be.Uint16(f[off:])
	}
	l3 := f[off+2:]
	var sum uint32
	var proto uint8
	var l4 []byte
	switch et {
	case etherTypeIPv4:
		if len(l3) < 20 || l3[0]>>4 != 4 {
			return false
		}
		ihl := int(l3[0]&0x0f) * 4
		total := int(be.Uint16(l3[2:]))
		if ihl < 20 || total < ihl || total > len(l3) || be.Uint16(l3[6:])&0x3fff != 0 {
			return false
		}
		proto = l3[9]
		l4 = l3[ihl:total]
		sum = packet.PseudoHeaderIPv4(be.Uint32(l3[12:]), be.Uint32(l3[16:]), proto, len(l4))
	case etherTypeIPv6:
		if len(l3) < 40 || l3[0]>>4 != 6 {
			return false
		}
		plen := int(be.Uint16(l3[4:]))
		if 40+plen > len(l3) {
			return false
		}
		proto = l3[6]
		l4 = l3[40 : 40+plen]
		sum = packet.PseudoHeaderIPv6(l3[8:24], l3[24:40], proto, len(l4))
	default:
		return false
	}
	loc := l4CsumOffset[proto]
	if loc.minLen == 0 || len(l4) < loc.minLen {
		return false
	}
	l4[loc.off], l4[loc.off+1] = 0, 0
	c := packet.Fold(packet.ChecksumPartial(l4, sum))
	if c == 0 && proto == ipProtoUDP {
		c = 0xffff // zero means "no checksum" in UDP
	}
	be.PutUint16(l4[loc.off:], c)
	return true
}
