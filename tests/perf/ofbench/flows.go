package main

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
)

// tuple is the 5-tuple of the i'th setup-test packet: distinct source
// addresses, a few destinations and ports.
func tuple(i int) (src, dst [4]byte, sport, dport uint16) {
	src = [4]byte{10, byte(1 + i>>16), byte(i >> 8), byte(i)}
	dst = [4]byte{192, 168, byte(i % 4), 1}
	return src, dst, uint16(1024 + i%50000), uint16(80 + i%7)
}

func ip(a [4]byte) string { return fmt.Sprintf("%d.%d.%d.%d", a[0], a[1], a[2], a[3]) }

// tupleFlows returns one exact 5-tuple rule per setup-test packet, all
// sending to p2, and a table-miss drop: every packet then needs a megaflow
// of its own (exact addresses and ports) in either switch.
func tupleFlows(n int) []byte {
	var b strings.Builder
	for i := range n {
		src, dst, sp, dp := tuple(i)
		fmt.Fprintf(&b, "priority=100,tcp,in_port=1,nw_src=%s,nw_dst=%s,tp_src=%d,tp_dst=%d,actions=output:2\n",
			ip(src), ip(dst), sp, dp)
	}
	b.WriteString("priority=0,actions=drop\n")
	return []byte(b.String())
}

// tupleFrames returns the setup-test packets in hex, as
// netdev-dummy/receive takes them: 60-byte Ethernet/IPv4/TCP SYN frames
// with valid checksums.
func tupleFrames(n int) []string {
	out := make([]string, n)
	for i := range n {
		src, dst, sp, dp := tuple(i)
		out[i] = hex.EncodeToString(tcpFrame(src, dst, sp, dp))
	}
	return out
}

func tcpFrame(src, dst [4]byte, sport, dport uint16) []byte {
	f := make([]byte, 60)
	copy(f[0:6], []byte{0x50, 0x54, 0x00, 0x00, 0x00, 0x02})
	copy(f[6:12], []byte{0x50, 0x54, 0x00, 0x00, 0x00, 0x01})
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	h := f[14:34]
	h[0] = 0x45
	binary.BigEndian.PutUint16(h[2:], 40)
	h[8] = 64
	h[9] = 6
	copy(h[12:16], src[:])
	copy(h[16:20], dst[:])
	binary.BigEndian.PutUint16(h[10:], ^fold(sum(h)))
	t := f[34:54]
	binary.BigEndian.PutUint16(t[0:], sport)
	binary.BigEndian.PutUint16(t[2:], dport)
	binary.BigEndian.PutUint32(t[4:], 1)
	t[12] = 5 << 4
	t[13] = 0x02 // SYN
	binary.BigEndian.PutUint16(t[14:], 65535)
	ps := sum(src[:]) + sum(dst[:]) + 6 + 20
	binary.BigEndian.PutUint16(t[16:], ^fold(ps+sum(t)))
	return f
}

func sum(b []byte) uint32 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	return s
}

func fold(s uint32) uint16 {
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}
