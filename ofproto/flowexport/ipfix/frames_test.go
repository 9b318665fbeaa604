package ipfix

import (
	"encoding/binary"
	"net/netip"
)

// frame describes a test packet.
type frame struct {
	src, dst  [6]byte
	vlan      uint16 // TCI; 0 = untagged
	ip        netip.Addr
	ipDst     netip.Addr
	proto     uint8
	tos, ttl  uint8
	sport     uint16 // or ICMP type
	dport     uint16 // or ICMP code
	tcpFlags  uint8
	payload   int
	ethType   uint16 // for non-IP frames
	flowLabel uint32
}

var (
	macA = [6]byte{0x02, 0, 0, 0, 0, 0xaa}
	macB = [6]byte{0x02, 0, 0, 0, 0, 0xbb}
)

func (f frame) bytes() []byte {
	b := append([]byte{}, f.dst[:]...)
	b = append(b, f.src[:]...)
	if f.vlan != 0 {
		b = binary.BigEndian.AppendUint16(b, 0x8100)
		b = binary.BigEndian.AppendUint16(b, f.vlan)
	}
	var l4 []byte
	switch f.proto {
	case 6:
		l4 = make([]byte, 20)
		binary.BigEndian.PutUint16(l4[0:], f.sport)
		binary.BigEndian.PutUint16(l4[2:], f.dport)
		l4[12] = 5 << 4
		l4[13] = f.tcpFlags
	case 17, 132:
		l4 = make([]byte, 8)
		binary.BigEndian.PutUint16(l4[0:], f.sport)
		binary.BigEndian.PutUint16(l4[2:], f.dport)
		if f.proto == 17 {
			binary.BigEndian.PutUint16(l4[4:], uint16(8+f.payload))
		} else {
			l4 = make([]byte, 12)
			binary.BigEndian.PutUint16(l4[0:], f.sport)
			binary.BigEndian.PutUint16(l4[2:], f.dport)
		}
	case 1, 58:
		l4 = make([]byte, 8)
		l4[0], l4[1] = byte(f.sport), byte(f.dport)
	}
	l4 = append(l4, make([]byte, f.payload)...)
	switch {
	case f.ip.Is4():
		b = binary.BigEndian.AppendUint16(b, 0x0800)
		h := make([]byte, 20)
		h[0] = 0x45
		h[1] = f.tos
		binary.BigEndian.PutUint16(h[2:], uint16(20+len(l4)))
		h[8] = f.ttl
		h[9] = f.proto
		s, d := f.ip.As4(), f.ipDst.As4()
		copy(h[12:], s[:])
		copy(h[16:], d[:])
		b = append(b, h...)
	case f.ip.Is6():
		b = binary.BigEndian.AppendUint16(b, 0x86dd)
		h := make([]byte, 40)
		binary.BigEndian.PutUint32(h[0:], 6<<28|uint32(f.tos)<<20|f.flowLabel)
		binary.BigEndian.PutUint16(h[4:], uint16(len(l4)))
		h[6] = f.proto
		h[7] = f.ttl
		s, d := f.ip.As16(), f.ipDst.As16()
		copy(h[8:], s[:])
		copy(h[24:], d[:])
		b = append(b, h...)
	default:
		b = binary.BigEndian.AppendUint16(b, f.ethType)
		return append(b, make([]byte, 46)...)
	}
	return append(b, l4...)
}
