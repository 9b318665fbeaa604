package flow

import (
	"encoding/binary"
	"fmt"
	"net"
	"reflect"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/gvs-project/gvs/datapath/packet"
)

const offUnset = packet.OffsetUnset

var (
	macSrc = net.HardwareAddr{0x00, 0x11, 0x22, 0x33, 0x44, 0x55}
	macDst = net.HardwareAddr{0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb}
	macSha = net.HardwareAddr{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}
	macTha = net.HardwareAddr{0x02, 0x00, 0x00, 0x00, 0x00, 0x02}
	ip4Src = net.IP{10, 0, 0, 1}
	ip4Dst = net.IP{10, 0, 0, 2}
	ip6Src = net.ParseIP("2001:db8::1")
	ip6Dst = net.ParseIP("2001:db8::2")
	ip6Tgt = net.ParseIP("fe80::1234")
)

func macArr(m net.HardwareAddr) (a [6]byte) { copy(a[:], m); return }
func ip6Arr(ip net.IP) (a [16]byte)         { copy(a[:], ip.To16()); return }
func ip4Word(ip net.IP) uint32              { return binary.BigEndian.Uint32(ip.To4()) }

// build serializes layers with lengths and checksums fixed, as a sender
// would. Transport layers get the preceding IP layer for checksums.
func buildFrame(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	var nl gopacket.NetworkLayer
	for _, l := range ls {
		switch l := l.(type) {
		case *layers.IPv4:
			nl = l
		case *layers.IPv6:
			nl = l
		case *layers.TCP:
			_ = l.SetNetworkLayerForChecksum(nl)
		case *layers.UDP:
			_ = l.SetNetworkLayerForChecksum(nl)
		case *layers.ICMPv6:
			_ = l.SetNetworkLayerForChecksum(nl)
		}
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: nl != nil}
	if err := gopacket.SerializeLayers(buf, opts, ls...); err != nil {
		t.Fatalf("serialize: %v", err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

func ethLayer(typ layers.EthernetType) *layers.Ethernet {
	return &layers.Ethernet{SrcMAC: macSrc, DstMAC: macDst, EthernetType: typ}
}

func ipv4Layer(proto layers.IPProtocol) *layers.IPv4 {
	return &layers.IPv4{Version: 4, TOS: 0xb9, TTL: 64, Id: 7, Protocol: proto, SrcIP: ip4Src, DstIP: ip4Dst}
}

func ipv6Layer(next layers.IPProtocol) *layers.IPv6 {
	return &layers.IPv6{Version: 6, TrafficClass: 0xb8, FlowLabel: 0x12345, NextHeader: next, HopLimit: 63, SrcIP: ip6Src, DstIP: ip6Dst}
}

func rawPayload(b ...byte) *gopacket.Payload { p := gopacket.Payload(b); return &p }

// udpHeaderBytes is an 8-byte UDP header 1234 -> 53 for hand-built payloads.
func udpHeaderBytes() []byte { return []byte{0x04, 0xd2, 0x00, 0x35, 0x00, 0x08, 0x00, 0x00} }

// ndMsg builds an ICMPv6 NS/NA message by hand (gopacket writes options
// in reverse order).
func ndMsg(typ, code uint8, reserved uint32, target net.IP, opts ...[]byte) []byte {
	b := []byte{typ, code, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[4:], reserved)
	b = append(b, target.To16()...)
	for _, o := range opts {
		b = append(b, o...)
	}
	return b
}

func ndLLA(typ uint8, m net.HardwareAddr) []byte { return append([]byte{typ, 1}, m...) }

// Key templates.
func l2Key(typ uint16) Key {
	return Key{EthDst: macArr(macDst), EthSrc: macArr(macSrc), EthType: typ}
}

func ip4Key(proto uint8) Key {
	k := l2Key(EthTypeIPv4)
	k.NwSrc, k.NwDst = ip4Word(ip4Src), ip4Word(ip4Dst)
	k.NwTos, k.NwTTL, k.NwProto = 0xb9, 64, proto
	return k
}

func ip6Key(proto uint8) Key {
	k := l2Key(EthTypeIPv6)
	k.IPv6Src, k.IPv6Dst = ip6Arr(ip6Src), ip6Arr(ip6Dst)
	k.IPv6Label, k.NwTos, k.NwTTL, k.NwProto = 0x12345, 0xb8, 63, proto
	return k
}

type extractOffsets struct{ L2_5, L3, L4, L7 uint16 }

func extractOffsetsOf(p *packet.Packet) extractOffsets {
	return extractOffsets{p.L2_5, p.L3, p.L4, p.L7}
}

func offL3(l3 uint16) extractOffsets         { return extractOffsets{offUnset, l3, offUnset, offUnset} }
func offL4(l3, l4 uint16) extractOffsets     { return extractOffsets{offUnset, l3, l4, offUnset} }
func offL7(l3, l4, l7 uint16) extractOffsets { return extractOffsets{offUnset, l3, l4, l7} }

type extractTestCase struct {
	name  string
	frame []byte
	want  Key
	off   extractOffsets
}

// with returns k after f changed it (for compact table rows).
func withKey(k Key, f func(*Key)) Key { f(&k); return k }

// patch returns b after f changed it.
func patched(b []byte, f func([]byte)) []byte { f(b); return b }

func extractCases(t testing.TB) []extractTestCase {
	t.Helper()
	tcp := func() *layers.TCP {
		return &layers.TCP{SrcPort: 40000, DstPort: 80, Seq: 1, SYN: true, ACK: true, ECE: true, CWR: true, NS: true, Window: 1024,
			Options: []layers.TCPOption{{OptionType: layers.TCPOptionKindMSS, OptionLength: 4, OptionData: []byte{0x05, 0xb4}}}}
	}
	udp := func() *layers.UDP { return &layers.UDP{SrcPort: 1234, DstPort: 53} }
	ipUDP := withKey(ip4Key(IPProtoUDP), func(k *Key) { k.TpSrc, k.TpDst = 1234, 53 })
	ip6UDP := withKey(ip6Key(IPProtoUDP), func(k *Key) { k.TpSrc, k.TpDst = 1234, 53 })
	icmp6 := func(typ, code uint8) *layers.ICMPv6 {
		return &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(typ, code)}
	}
	ndKey := func(typ uint8, f func(*Key)) Key {
		return withKey(ip6Key(IPProtoICMPv6), func(k *Key) {
			k.TpSrc = uint16(typ)
			f(k)
		})
	}
	arp := func(hw layers.LinkType, op uint16) *layers.ARP {
		return &layers.ARP{AddrType: hw, Protocol: layers.EthernetTypeIPv4, HwAddressSize: 6, ProtAddressSize: 4,
			Operation: op, SourceHwAddress: macSha, SourceProtAddress: ip4Src, DstHwAddress: macTha, DstProtAddress: ip4Dst}
	}
	arpKey := func(typ uint16, op uint8) Key {
		return withKey(l2Key(typ), func(k *Key) {
			k.NwSrc, k.NwDst, k.NwProto = ip4Word(ip4Src), ip4Word(ip4Dst), op
			k.ArpSha, k.ArpTha = macArr(macSha), macArr(macTha)
		})
	}
	fragIPv4 := func(flags layers.IPv4Flag, off uint16) *layers.IPv4 {
		ip := ipv4Layer(layers.IPProtocolUDP)
		ip.Flags, ip.FragOffset = flags, off
		return ip
	}
	// IPv6 fragment header: next header, reserved, offset<<3|res|M, id.
	frag6 := func(next uint8, offlg uint16) []byte {
		return []byte{next, 0, byte(offlg >> 8), byte(offlg), 0, 0, 0, 9}
	}

	return []extractTestCase{
		{
			name:  "ipv4/udp",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolUDP), udp(), rawPayload([]byte("hello")...)),
			want:  ipUDP,
			off:   offL7(14, 34, 42),
		},
		{
			name: "ipv4 with options/tcp with options: flags are the low 12 bits",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv4),
				withIPv4(ipv4Layer(layers.IPProtocolTCP), func(ip *layers.IPv4) {
					ip.Options = []layers.IPv4Option{{OptionType: 148, OptionLength: 4, OptionData: []byte{0, 0}}} // router alert
				}), tcp()),
			want: withKey(ip4Key(IPProtoTCP), func(k *Key) { k.TpSrc, k.TpDst, k.TCPFlags = 40000, 80, 0x1d2 }),
			off:  offL7(14, 38, 62),
		},
		{
			name: "tcp reserved flag bits are kept",
			frame: patched(buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolTCP), tcp()),
				func(b []byte) { b[34+12] |= 0x0e }),
			want: withKey(ip4Key(IPProtoTCP), func(k *Key) { k.TpSrc, k.TpDst, k.TCPFlags = 40000, 80, 0xfd2 }),
			off:  offL7(14, 34, 58),
		},
		{
			name: "tcp data offset below 5 leaves ports zero",
			frame: patched(buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolTCP), tcp()),
				func(b []byte) { b[34+12] = 0x40 | b[34+12]&0x0f }),
			want: ip4Key(IPProtoTCP),
			off:  offL4(14, 34),
		},
		{
			name: "tcp header reaching into ethernet padding is not parsed",
			// 20-byte TCP header claiming 24 bytes; the frame has them
			// only as padding beyond the IPv4 total length.
			frame: patched(buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolTCP),
				&layers.TCP{SrcPort: 1, DstPort: 2, ACK: true}),
				func(b []byte) { b[34+12] = 0x60 }),
			want: ip4Key(IPProtoTCP),
			off:  offL4(14, 34),
		},
		{
			name: "udp header in ethernet padding is not parsed",
			frame: patched(buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolUDP)),
				func(b []byte) { copy(b[34:], udpHeaderBytes()) }),
			want: ip4Key(IPProtoUDP),
			off:  offL4(14, 34),
		},
		{
			name: "ipv4 total length beyond frame gives no L3 fields",
			frame: patched(buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolUDP), udp()),
				func(b []byte) { binary.BigEndian.PutUint16(b[16:], 1000) }),
			want: l2Key(EthTypeIPv4),
			off:  offL3(14),
		},
		{
			name: "ipv4 total length below header length gives no L3 fields",
			frame: patched(buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolUDP), udp()),
				func(b []byte) { binary.BigEndian.PutUint16(b[16:], 19) }),
			want: l2Key(EthTypeIPv4),
			off:  offL3(14),
		},
		{
			name: "ipv4 ihl below 5 gives no L3 fields",
			frame: patched(buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolUDP), udp()),
				func(b []byte) { b[14] = 0x44 }),
			want: l2Key(EthTypeIPv4),
			off:  offL3(14),
		},
		{
			name: "ipv4 version nibble is not checked",
			frame: patched(buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolUDP), udp()),
				func(b []byte) { b[14] = 0x65 }),
			want: ipUDP,
			off:  offL7(14, 34, 42),
		},
		{
			name:  "ipv4 dont-fragment is not a fragment",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv4), fragIPv4(layers.IPv4DontFragment, 0), udp()),
			want:  ipUDP,
			off:   offL7(14, 34, 42),
		},
		{
			name:  "ipv4 first fragment keeps ports",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv4), fragIPv4(layers.IPv4MoreFragments, 0), udp()),
			want:  withKey(ipUDP, func(k *Key) { k.NwFrag = FragAny }),
			off:   offL7(14, 34, 42),
		},
		{
			name:  "ipv4 later fragment has no L4 fields",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv4), fragIPv4(0, 185), rawPayload(udpHeaderBytes()...)),
			want:  withKey(ip4Key(IPProtoUDP), func(k *Key) { k.NwFrag = FragAny | FragLater }),
			off:   offL4(14, 34),
		},
		{
			name:  "icmpv4 type and code",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolICMPv4), &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(3, 3)}),
			want:  withKey(ip4Key(IPProtoICMP), func(k *Key) { k.TpSrc, k.TpDst = 3, 3 }),
			off:   offL7(14, 34, 42),
		},
		{
			name: "igmpv2 report: type, code and group",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolIGMP),
				rawPayload(0x16, 0x00, 0xfa, 0x04, 224, 1, 2, 3)),
			want: withKey(ip4Key(IPProtoIGMP), func(k *Key) { k.TpSrc, k.IGMPGroup = 0x16, ip4Word(net.IP{224, 1, 2, 3}) }),
			off:  offL7(14, 34, 42),
		},
		{
			name: "igmpv3 query: max response code as code",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolIGMP),
				rawPayload(0x11, 0x64, 0xee, 0x9b, 0, 0, 0, 0, 0x02, 0x7d, 0, 0)),
			want: withKey(ip4Key(IPProtoIGMP), func(k *Key) { k.TpSrc, k.TpDst = 0x11, 0x64 }),
			off:  offL7(14, 34, 42),
		},
		{
			name:  "sctp ports",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolSCTP), &layers.SCTP{SrcPort: 5000, DstPort: 6000, VerificationTag: 42}),
			want:  withKey(ip4Key(IPProtoSCTP), func(k *Key) { k.TpSrc, k.TpDst = 5000, 6000 }),
			off:   offL7(14, 34, 46),
		},
		{
			name:  "ipv6/tcp: label, traffic class, hop limit",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolTCP), tcp()),
			want:  withKey(ip6Key(IPProtoTCP), func(k *Key) { k.TpSrc, k.TpDst, k.TCPFlags = 40000, 80, 0x1d2 }),
			off:   offL7(14, 54, 78),
		},
		{
			name: "ipv6 extension chain hop-by-hop, routing, dstopts, first fragment, AH",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolIPv6HopByHop), rawPayload(concat(
				[]byte{43, 0, 1, 4, 0, 0, 0, 0},                          // hop-by-hop, PadN
				[]byte{60, 0, 0, 0, 0, 0, 0, 0},                          // routing type 0, no segments
				[]byte{44, 1, 1, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, // dstopts, 16 bytes
				frag6(51, 0x0001),                                        // offset 0, M
				[]byte{17, 4, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, // AH, 24 bytes
				udpHeaderBytes())...)),
			want: withKey(ip6UDP, func(k *Key) { k.NwFrag = FragAny }),
			off:  offL7(14, 54+8+8+16+8+24, 54+8+8+16+8+24+8),
		},
		{
			name:  "ipv6 later fragment stops with proto 44",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolIPv6Fragment), rawPayload(concat(frag6(17, 10<<3), udpHeaderBytes())...)),
			want:  withKey(ip6Key(ipProtoFragment), func(k *Key) { k.NwFrag = FragAny | FragLater }),
			off:   offL4(14, 62),
		},
		{
			name:  "ipv6 atomic fragment header is not a fragment",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolIPv6Fragment), rawPayload(concat(frag6(17, 0), udpHeaderBytes())...)),
			want:  ip6UDP,
			off:   offL7(14, 62, 70),
		},
		{
			name:  "ipv6 fragment header with only reserved bits is a first fragment",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolIPv6Fragment), rawPayload(concat(frag6(17, 0x0006), udpHeaderBytes())...)),
			want:  withKey(ip6UDP, func(k *Key) { k.NwFrag = FragAny }),
			off:   offL7(14, 62, 70),
		},
		{
			name:  "ipv6 truncated extension header keeps only addresses",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolIPv6HopByHop), rawPayload(17, 2, 1, 4, 0, 0, 0, 0)),
			want: withKey(l2Key(EthTypeIPv6), func(k *Key) {
				k.IPv6Src, k.IPv6Dst = ip6Arr(ip6Src), ip6Arr(ip6Dst)
			}),
			off: offL3(14),
		},
		{
			name:  "ipv6 extension header shorter than 8 bytes keeps only addresses",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolIPv6Destination), rawPayload(17, 0, 1, 2)),
			want: withKey(l2Key(EthTypeIPv6), func(k *Key) {
				k.IPv6Src, k.IPv6Dst = ip6Arr(ip6Src), ip6Arr(ip6Dst)
			}),
			off: offL3(14),
		},
		{
			name: "ipv6 payload length beyond frame gives no L3 fields",
			frame: patched(buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolUDP), udp()),
				func(b []byte) { binary.BigEndian.PutUint16(b[18:], 9) }),
			want: l2Key(EthTypeIPv6),
			off:  offL3(14),
		},
		{
			name:  "icmpv6 echo request",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolICMPv6), icmp6(128, 0), &layers.ICMPv6Echo{Identifier: 1, SeqNumber: 2}),
			want:  withKey(ip6Key(IPProtoICMPv6), func(k *Key) { k.TpSrc = 128 }),
			off:   offL7(14, 54, 62),
		},
		{
			name: "nd neighbor solicitation with source link-layer address",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolICMPv6), icmp6(135, 0),
				&layers.ICMPv6NeighborSolicitation{TargetAddress: ip6Tgt,
					Options: layers.ICMPv6Options{{Type: layers.ICMPv6OptSourceAddress, Data: macSha}}}),
			want: ndKey(135, func(k *Key) {
				k.NDTarget, k.ArpSha, k.NDOptType = ip6Arr(ip6Tgt), macArr(macSha), ndOptSourceLLA
			}),
			off: offL7(14, 54, 62),
		},
		{
			name: "nd neighbor advertisement: flags in reserved, target link-layer address",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolICMPv6), icmp6(136, 0),
				&layers.ICMPv6NeighborAdvertisement{Flags: 0xe0, TargetAddress: ip6Tgt,
					Options: layers.ICMPv6Options{{Type: layers.ICMPv6OptTargetAddress, Data: macTha}}}),
			want: ndKey(136, func(k *Key) {
				k.NDTarget, k.ArpTha, k.NDOptType, k.NDReserved = ip6Arr(ip6Tgt), macArr(macTha), ndOptTargetLLA, 0xe0000000
			}),
			off: offL7(14, 54, 62),
		},
		{
			name: "nd both addresses: option type is the first one",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolICMPv6),
				rawPayload(ndMsg(135, 0, 0, ip6Tgt, ndLLA(2, macTha), ndLLA(1, macSha))...)),
			want: ndKey(135, func(k *Key) {
				k.NDTarget, k.ArpSha, k.ArpTha, k.NDOptType = ip6Arr(ip6Tgt), macArr(macSha), macArr(macTha), ndOptTargetLLA
			}),
			off: offL7(14, 54, 62),
		},
		{
			name: "nd duplicate source address clears target and addresses",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolICMPv6),
				rawPayload(ndMsg(135, 0, 0, ip6Tgt, ndLLA(1, macSha), ndLLA(1, macTha))...)),
			want: ndKey(135, func(k *Key) { k.NDOptType = ndOptSourceLLA }),
			off:  offL7(14, 54, 62),
		},
		{
			name: "nd zero-length option ends the walk keeping what was found",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolICMPv6),
				rawPayload(ndMsg(135, 0, 0, ip6Tgt, ndLLA(1, macSha), []byte{2, 0, 1, 2, 3, 4, 5, 6}, ndLLA(2, macTha))...)),
			want: ndKey(135, func(k *Key) {
				k.NDTarget, k.ArpSha, k.NDOptType = ip6Arr(ip6Tgt), macArr(macSha), ndOptSourceLLA
			}),
			off: offL7(14, 54, 62),
		},
		{
			name: "nd unknown and oversized options are skipped",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolICMPv6),
				rawPayload(ndMsg(135, 0, 0, ip6Tgt,
					[]byte{14, 1, 1, 2, 3, 4, 5, 6},                                  // nonce
					concat(ndLLA(2, macTha)[:1], []byte{2}, macTha, make([]byte, 8)), // 16-byte TLL: ignored
					ndLLA(1, macSha))...)),
			want: ndKey(135, func(k *Key) {
				k.NDTarget, k.ArpSha, k.NDOptType = ip6Arr(ip6Tgt), macArr(macSha), ndOptSourceLLA
			}),
			off: offL7(14, 54, 62),
		},
		{
			name: "nd without room for the target has only type and reserved",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolICMPv6),
				rawPayload(ndMsg(136, 0, 0x40000000, ip6Tgt)[:20]...)),
			want: ndKey(136, func(k *Key) { k.NDReserved = 0x40000000 }),
			off:  offL7(14, 54, 62),
		},
		{
			name: "neighbor solicitation with non-zero code is not ND",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolICMPv6),
				rawPayload(ndMsg(135, 1, 0x20000000, ip6Tgt, ndLLA(1, macSha))...)),
			want: withKey(ip6Key(IPProtoICMPv6), func(k *Key) { k.TpSrc, k.TpDst = 135, 1 }),
			off:  offL7(14, 54, 62),
		},
		{
			name:  "arp request",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeARP), arp(layers.LinkTypeEthernet, 1)),
			want:  arpKey(EthTypeARP, 1),
			off:   offL3(14),
		},
		{
			name:  "arp opcode above 0xff keeps addresses but not the opcode",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeARP), arp(layers.LinkTypeEthernet, 0x0101)),
			want:  arpKey(EthTypeARP, 0),
			off:   offL3(14),
		},
		{
			name:  "arp with non-ethernet hardware type has no ARP fields",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeARP), arp(layers.LinkType(6), 1)),
			want:  l2Key(EthTypeARP),
			off:   offL3(14),
		},
		{
			name:  "rarp reply",
			frame: buildFrame(t, ethLayer(layers.EthernetType(EthTypeRARP)), arp(layers.LinkTypeEthernet, 4)),
			want:  arpKey(EthTypeRARP, 4),
			off:   offL3(14),
		},
		{
			name: "802.1q tag: TCI stored with CFI as present",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeDot1Q),
				&layers.Dot1Q{Priority: 5, VLANIdentifier: 100, Type: layers.EthernetTypeIPv4},
				ipv4Layer(layers.IPProtocolUDP), udp()),
			want: withKey(ipUDP, func(k *Key) { k.VLANs[0] = VLAN{TPID: EthTypeVLAN, TCI: 5<<13 | VLANCFI | 100} }),
			off:  offL7(18, 38, 46),
		},
		{
			name: "802.1ad over 802.1q: wire DEI bit is absorbed by CFI",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeQinQ),
				&layers.Dot1Q{Priority: 1, DropEligible: true, VLANIdentifier: 10, Type: layers.EthernetTypeDot1Q},
				&layers.Dot1Q{Priority: 2, VLANIdentifier: 20, Type: layers.EthernetTypeIPv4},
				ipv4Layer(layers.IPProtocolUDP), udp()),
			want: withKey(ipUDP, func(k *Key) {
				k.VLANs[0] = VLAN{TPID: EthTypeQinQ, TCI: 1<<13 | VLANCFI | 10}
				k.VLANs[1] = VLAN{TPID: EthTypeVLAN, TCI: 2<<13 | VLANCFI | 20}
			}),
			off: offL7(22, 42, 50),
		},
		{
			name: "third tag stays in place as the ethertype",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeQinQ),
				&layers.Dot1Q{VLANIdentifier: 10, Type: layers.EthernetTypeDot1Q},
				&layers.Dot1Q{VLANIdentifier: 20, Type: layers.EthernetTypeDot1Q},
				&layers.Dot1Q{VLANIdentifier: 30, Type: layers.EthernetTypeIPv4},
				ipv4Layer(layers.IPProtocolUDP), udp()),
			want: withKey(l2Key(EthTypeVLAN), func(k *Key) {
				k.VLANs[0] = VLAN{TPID: EthTypeQinQ, TCI: VLANCFI | 10}
				k.VLANs[1] = VLAN{TPID: EthTypeVLAN, TCI: VLANCFI | 20}
			}),
			off: offL3(22),
		},
		{
			name: "802.3 LLC without SNAP is EthTypeNone",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeLLC), &layers.LLC{DSAP: 0x42, SSAP: 0x42, Control: 3},
				rawPayload(0, 0, 0, 0, 0, 0x80, 0, 1, 2, 3, 4, 5, 6)),
			want: l2Key(EthTypeNone),
			off:  offL3(14),
		},
		{
			name: "802.3 SNAP with OUI 0 carries the ethertype",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeLLC), &layers.LLC{DSAP: 0xaa, SSAP: 0xaa, Control: 3},
				&layers.SNAP{OrganizationalCode: []byte{0, 0, 0}, Type: layers.EthernetTypeIPv4},
				ipv4Layer(layers.IPProtocolUDP), udp()),
			want: ipUDP,
			off:  offL7(22, 42, 50),
		},
		{
			name: "802.3 SNAP with another OUI is EthTypeNone",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeLLC), &layers.LLC{DSAP: 0xaa, SSAP: 0xaa, Control: 3},
				&layers.SNAP{OrganizationalCode: []byte{0, 0, 0x0c}, Type: 0x2000}, rawPayload(1, 2, 3, 4)),
			want: l2Key(EthTypeNone),
			off:  offL3(14),
		},
		{
			name: "802.3 SNAP with OUI 0 and a length-range type is EthTypeNone after SNAP",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeLLC), &layers.LLC{DSAP: 0xaa, SSAP: 0xaa, Control: 3},
				&layers.SNAP{OrganizationalCode: []byte{0, 0, 0}, Type: 0x0100}, rawPayload(1, 2, 3, 4)),
			want: l2Key(EthTypeNone),
			off:  offL3(22),
		},
		{
			name: "mpls: first label kept, L3 after the bottom of stack",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeMPLSUnicast),
				&layers.MPLS{Label: 100, TrafficClass: 3, TTL: 64},
				&layers.MPLS{Label: 200, StackBottom: true, TTL: 63},
				ipv4Layer(layers.IPProtocolUDP), udp()),
			want: withKey(l2Key(EthTypeMPLS), func(k *Key) { k.MPLSLSE = 100<<12 | 3<<9 | 64 }),
			off:  extractOffsets{14, 22, offUnset, offUnset},
		},
		{
			name: "mpls multicast without bottom of stack consumes the frame",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeMPLSMulticast),
				&layers.MPLS{Label: 0xfffff, TrafficClass: 7, TTL: 1}, rawPayload(make([]byte, 43)...)),
			want: withKey(l2Key(EthTypeMPLSMcst), func(k *Key) { k.MPLSLSE = 0xfffff<<12 | 7<<9 | 1 }),
			off:  extractOffsets{14, 58, offUnset, offUnset},
		},
		{
			name:  "frame shorter than an ethernet header has only metadata",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv4))[:13],
			want:  Key{},
			off:   extractOffsets{offUnset, offUnset, offUnset, offUnset},
		},
		{
			name:  "bare ethernet header",
			frame: buildFrame(t, ethLayer(layers.EthernetTypeIPv4))[:14],
			want:  l2Key(EthTypeIPv4),
			off:   offL3(14),
		},
	}
}

func withIPv4(ip *layers.IPv4, f func(*layers.IPv4)) *layers.IPv4 { f(ip); return ip }

func concat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

// extractKeyDiff lists the fields where got differs from want.
func extractKeyDiff(got, want *Key) string {
	var sb strings.Builder
	gv, wv := reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem()
	for i := 0; i < gv.NumField(); i++ {
		f := gv.Type().Field(i)
		if f.Name == "_" {
			continue
		}
		g, w := gv.Field(i).Interface(), wv.Field(i).Interface()
		if !reflect.DeepEqual(g, w) {
			fmt.Fprintf(&sb, "\n\t%s: got %#x, want %#x", f.Name, g, w)
		}
	}
	return sb.String()
}

func extractFrame(b []byte) (*packet.Packet, Key) {
	p := packet.FromBytes(b)
	var k Key
	Extract(p, &k)
	return p, k
}

func TestExtractSetsExactKeyAndOffsets(t *testing.T) {
	for _, c := range extractCases(t) {
		t.Run(c.name, func(t *testing.T) {
			p, k := extractFrame(c.frame)
			if d := extractKeyDiff(&k, &c.want); d != "" || k != c.want {
				t.Errorf("key differs (frame % x):%s", c.frame, d)
			}
			if got := extractOffsetsOf(p); got != c.off {
				t.Errorf("extractOffsets = %+v, want %+v", got, c.off)
			}
		})
	}
}

// TestExtractOverwritesKey checks that nothing of a previous key or of
// previous extractOffsets survives, even for a frame with no headers.
func TestExtractOverwritesKey(t *testing.T) {
	var k Key
	for i := range k.W() {
		k.W()[i] = ^uint64(0)
	}
	p := packet.FromBytes([]byte{1, 2, 3})
	p.L2_5, p.L3, p.L4, p.L7 = 1, 2, 3, 4
	Extract(p, &k)
	if k != (Key{}) {
		t.Errorf("key not cleared:%s", extractKeyDiff(&k, &Key{}))
	}
	if got := extractOffsetsOf(p); got != (extractOffsets{offUnset, offUnset, offUnset, offUnset}) {
		t.Errorf("extractOffsets = %+v, want all offUnset", got)
	}
}

// TestExtractPrefixesArePrefixConsistent parses every prefix of every
// crafted frame: no panic, extractOffsets inside the prefix and ordered, and
// every key field either zero or equal to the full frame's value (except
// what a cut can legitimately change: an Ethertype that becomes a VLAN
// TPID or EthTypeNone, and an L3 offset that moves earlier).
func TestExtractPrefixesArePrefixConsistent(t *testing.T) {
	for _, c := range extractCases(t) {
		t.Run(c.name, func(t *testing.T) {
			full, fk := extractFrame(c.frame)
			fo := extractOffsetsOf(full)
			p := packet.New(len(c.frame))
			for n := 0; n <= len(c.frame); n++ {
				p.SetData(c.frame[:n])
				var k Key
				Extract(p, &k)
				o := extractOffsetsOf(p)
				checkExtractOffsets(t, n, o)
				if o.L2_5 != offUnset && o.L2_5 != fo.L2_5 {
					t.Errorf("len %d: L2_5 %d, full frame %d", n, o.L2_5, fo.L2_5)
				}
				if o.L3 != offUnset && o.L3 > fo.L3 {
					t.Errorf("len %d: L3 %d after full frame's %d", n, o.L3, fo.L3)
				}
				if o.L4 != offUnset && o.L4 != fo.L4 || o.L7 != offUnset && o.L7 != fo.L7 {
					t.Errorf("len %d: L4/L7 %d/%d, full frame %d/%d", n, o.L4, o.L7, fo.L4, fo.L7)
				}
				kv, fv := reflect.ValueOf(k), reflect.ValueOf(fk)
				for i := 0; i < kv.NumField(); i++ {
					name := kv.Type().Field(i).Name
					if name == "_" || isPrefixConsistent(kv.Field(i), fv.Field(i)) {
						continue
					}
					if name == "EthType" {
						switch k.EthType {
						case EthTypeNone, EthTypeVLAN, EthTypeQinQ:
							continue
						}
					}
					t.Errorf("len %d: %s = %#x, full frame has %#x", n, name, kv.Field(i).Interface(), fv.Field(i).Interface())
				}
			}
		})
	}
}

// isPrefixConsistent reports whether v is zero or equal to full; arrays of
// structs (VLAN tags) are judged element by element.
func isPrefixConsistent(v, full reflect.Value) bool {
	if v.IsZero() || v.Equal(full) {
		return true
	}
	if v.Kind() != reflect.Array || v.Type().Elem().Kind() != reflect.Struct {
		return false
	}
	for i := 0; i < v.Len(); i++ {
		if !isPrefixConsistent(v.Index(i), full.Index(i)) {
			return false
		}
	}
	return true
}

func checkExtractOffsets(t testing.TB, n int, o extractOffsets) {
	t.Helper()
	prev := 0
	for _, x := range []uint16{o.L2_5, o.L3, o.L4, o.L7} {
		if x == offUnset {
			continue
		}
		if int(x) > n || int(x) < prev {
			t.Fatalf("len %d: extractOffsets %+v out of bounds or order", n, o)
		}
		prev = int(x)
	}
	if o.L7 != offUnset && o.L4 == offUnset || o.L4 != offUnset && o.L3 == offUnset {
		t.Fatalf("len %d: extractOffsets %+v set without the layer below", n, o)
	}
}

// TestExtractLengthBoundaries pins the exact frame lengths at which
// layers appear.
func TestExtractLengthBoundaries(t *testing.T) {
	udp := buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolUDP), &layers.UDP{SrcPort: 1234, DstPort: 53}, rawPayload([]byte("hello")...))
	vlan := buildFrame(t, ethLayer(layers.EthernetTypeDot1Q), &layers.Dot1Q{VLANIdentifier: 7, Type: layers.EthernetTypeIPv4},
		ipv4Layer(layers.IPProtocolUDP), &layers.UDP{SrcPort: 1234, DstPort: 53})
	snap := buildFrame(t, ethLayer(layers.EthernetTypeLLC), &layers.LLC{DSAP: 0xaa, SSAP: 0xaa, Control: 3},
		&layers.SNAP{OrganizationalCode: []byte{0, 0, 0}, Type: layers.EthernetTypeARP}, rawPayload(make([]byte, 28)...))
	for _, c := range []struct {
		name    string
		frame   []byte
		n       int
		ethType uint16
		l3      uint16
		hasL3   bool
	}{
		{"ipv4 runt", udp, 13, 0, offUnset, false},
		{"ipv4 L2 only", udp, 14, EthTypeIPv4, 14, false},
		{"ipv4 one byte short of total length", udp, 46, EthTypeIPv4, 14, false},
		{"ipv4 at total length", udp, 47, EthTypeIPv4, 14, true},
		{"vlan tag without the ethertype after it", vlan, 17, EthTypeVLAN, 14, false},
		{"vlan tag with the ethertype after it", vlan, 18, EthTypeIPv4, 18, false},
		{"vlan frame complete", vlan, 46, EthTypeIPv4, 18, true},
		{"llc/snap one byte short", snap, 21, EthTypeNone, 14, false},
		{"llc/snap complete", snap, 22, EthTypeARP, 22, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, k := extractFrame(c.frame[:c.n])
			if k.EthType != c.ethType || p.L3 != c.l3 || (k.NwSrc != 0) != c.hasL3 {
				t.Errorf("len %d: EthType %#x L3 %d NwSrc %#x; want %#x %d hasL3=%v", c.n, k.EthType, p.L3, k.NwSrc, c.ethType, c.l3, c.hasL3)
			}
		})
	}
}

// TestExtractL4NeedsItsFullHeader cuts the IP payload (rewriting the IP
// length, so the packet stays well-formed) at every length and checks
// that L4 fields appear exactly when the protocol's header is complete.
func TestExtractL4NeedsItsFullHeader(t *testing.T) {
	tcp := &layers.TCP{SrcPort: 1, DstPort: 2, SYN: true,
		Options: []layers.TCPOption{{OptionType: layers.TCPOptionKindMSS, OptionLength: 4, OptionData: []byte{0x05, 0xb4}}}}
	for _, c := range []struct {
		name  string
		frame []byte
		need  int
		ip6   bool
	}{
		{"tcp with options", buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolTCP), tcp), 24, false},
		{"udp", buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolUDP), &layers.UDP{SrcPort: 1, DstPort: 2}), 8, false},
		{"sctp", buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolSCTP), &layers.SCTP{SrcPort: 1, DstPort: 2}), 12, false},
		{"icmp", buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolICMPv4), &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(1, 2)}), 8, false},
		{"igmp", buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolIGMP), rawPayload(1, 2, 0, 0, 224, 0, 0, 1)), 8, false},
		{"icmpv6", buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolICMPv6), rawPayload(1, 2, 0, 0, 0, 0, 0, 0)), 8, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for m := 0; m <= c.need; m++ {
				var f []byte
				if c.ip6 {
					f = append([]byte(nil), c.frame[:54+m]...)
					binary.BigEndian.PutUint16(f[18:], uint16(m))
				} else {
					f = append([]byte(nil), c.frame[:34+m]...)
					binary.BigEndian.PutUint16(f[16:], uint16(20+m))
				}
				p, k := extractFrame(f)
				if got := k.TpSrc != 0; got != (m >= c.need) {
					t.Errorf("payload %d: TpSrc %d, want present=%v", m, k.TpSrc, m >= c.need)
				}
				if got := p.L7 != offUnset; got != (m >= c.need) {
					t.Errorf("payload %d: L7 %d, want set=%v", m, p.L7, m >= c.need)
				}
				if p.L4 == offUnset {
					t.Errorf("payload %d: L4 offUnset", m)
				}
			}
		})
	}
}

// TestExtractNDOptionsCut cuts an NS message inside its options (with a
// consistent IPv6 payload length): a partial option is ignored, a
// complete one counts.
func TestExtractNDOptionsCut(t *testing.T) {
	msg := ndMsg(135, 0, 0, ip6Tgt, ndLLA(1, macSha), ndLLA(2, macTha))
	frame := buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolICMPv6), rawPayload(msg...))
	for m := 8; m <= len(msg); m++ {
		f := append([]byte(nil), frame[:54+m]...)
		binary.BigEndian.PutUint16(f[18:], uint16(m))
		_, k := extractFrame(f)
		wantTarget, wantSha, wantTha, wantOpt := [16]byte{}, [6]byte{}, [6]byte{}, uint8(0)
		if m >= 24 {
			wantTarget = ip6Arr(ip6Tgt)
		}
		if m >= 32 {
			wantSha, wantOpt = macArr(macSha), 1
		}
		if m >= 40 {
			wantTha = macArr(macTha)
		}
		if k.NDTarget != wantTarget || k.ArpSha != wantSha || k.ArpTha != wantTha || k.NDOptType != wantOpt || k.TpSrc != 135 {
			t.Errorf("icmpv6 length %d: target %x sha %x tha %x opt %d type %d", m, k.NDTarget, k.ArpSha, k.ArpTha, k.NDOptType, k.TpSrc)
		}
	}
}

func testMetadata() packet.Metadata {
	md := packet.Metadata{
		InPort: 3, RecircID: 0x11, DPHash: 0xdeadbeef, PktMark: 0x22, SkbPriority: 0x33,
		CtMark: 0x44, CtZone: 5, CtState: CsTracked | CsEstablished, CtNwProto: IPProtoTCP,
		CtNwSrc: 0x0a000009, CtNwDst: 0x0a00000a, CtTpSrc: 1111, CtTpDst: 2222,
		CtLabel: [16]byte{15: 1}, CtIPv6Src: [16]byte{0: 0xfd, 15: 1}, CtIPv6Dst: [16]byte{0: 0xfd, 15: 2},
		Tunnel: packet.Tunnel{ID: 99, Src: 0xc0a80001, Dst: 0xc0a80002, Flags: packet.TunFlagKey, Tos: 4, TTL: 5,
			TpSrc: 6, TpDst: 4789, GbpID: 7, GbpFlag: 8, MetaPresent: 1, Meta: [packet.TunMetaBytes]byte{0: 0xab}},
	}
	return md
}

// metadataKey is the metadata part of the key that extraction of md gives for
// any frame, before L3-dependent conntrack fields.
func metadataKey(md *packet.Metadata) Key {
	t := &md.Tunnel
	return Key{
		RecircID: md.RecircID, DPHash: md.DPHash, InPort: md.InPort, PktMark: md.PktMark, SkbPriority: md.SkbPriority,
		CtMark: md.CtMark, CtZone: md.CtZone, CtState: md.CtState, CtLabel: md.CtLabel,
		TunID: t.ID, TunSrc: t.Src, TunDst: t.Dst, TunIPv6Src: t.IPv6Src, TunIPv6Dst: t.IPv6Dst, TunFlags: t.Flags,
		TunTos: t.Tos, TunTTL: t.TTL, TunTpSrc: t.TpSrc, TunTpDst: t.TpDst, TunGbpID: t.GbpID, TunGbpFlags: t.GbpFlag,
		TunMetaPresent: t.MetaPresent, TunMeta: t.Meta,
	}
}

// overlayHeaders copies the non-metadata fields of frame into k.
func overlayHeaders(k Key, frame Key) Key {
	kw, fw := k.W(), frame.W()
	for i := SegTunnelEnd; i < KeyWords; i++ {
		kw[i] = fw[i]
	}
	return k
}

func TestExtractCopiesMetadata(t *testing.T) {
	tcp4 := buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolTCP), &layers.TCP{SrcPort: 1, DstPort: 2, ACK: true})
	tcp6 := buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolTCP), &layers.TCP{SrcPort: 1, DstPort: 2, ACK: true})
	frag4 := buildFrame(t, ethLayer(layers.EthernetTypeIPv4), withIPv4(ipv4Layer(layers.IPProtocolTCP), func(ip *layers.IPv4) { ip.FragOffset = 10 }), rawPayload(make([]byte, 16)...))
	igmp := buildFrame(t, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolIGMP), rawPayload(0x16, 0, 0, 0, 224, 1, 1, 1))
	ns := buildFrame(t, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolICMPv6), rawPayload(ndMsg(135, 0, 0, ip6Tgt)...))
	arp := buildFrame(t, ethLayer(layers.EthernetTypeARP), &layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4,
		HwAddressSize: 6, ProtAddressSize: 4, Operation: 1, SourceHwAddress: macSha, SourceProtAddress: ip4Src,
		DstHwAddress: macTha, DstProtAddress: ip4Dst})
	badIP := patched(append([]byte(nil), tcp4...), func(b []byte) { b[14] = 0x44 })

	full := testMetadata()
	noCt := full
	noCt.CtState = 0
	noTunnel := full
	noTunnel.Tunnel.Dst = 0
	tunnel6 := full
	tunnel6.Tunnel.Src, tunnel6.Tunnel.Dst = 0, 0
	tunnel6.Tunnel.IPv6Dst = [16]byte{0: 0x20, 15: 9}
	tunnel6.Tunnel.MetaPresent = 0
	noCtProto := full
	noCtProto.CtNwProto = 0

	ct4 := func(k *Key) {
		k.CtNwProto, k.CtNwSrc, k.CtNwDst = full.CtNwProto, full.CtNwSrc, full.CtNwDst
	}
	ctPorts := func(k *Key) { k.CtTpSrc, k.CtTpDst = full.CtTpSrc, full.CtTpDst }

	for _, c := range []struct {
		name  string
		md    packet.Metadata
		frame []byte
		meta  func(*Key) // changes to metadataKey(md) beyond the frame's own fields
	}{
		{"ipv4 tcp gets the conntrack tuple and ports", full, tcp4, func(k *Key) { ct4(k); ctPorts(k) }},
		{"ipv6 tcp gets the ipv6 conntrack tuple", full, tcp6, func(k *Key) {
			k.CtNwProto, k.CtIPv6Src, k.CtIPv6Dst = full.CtNwProto, full.CtIPv6Src, full.CtIPv6Dst
			ctPorts(k)
		}},
		{"later fragment keeps conntrack ports", full, frag4, func(k *Key) { ct4(k); ctPorts(k) }},
		{"igmp gets no conntrack ports", full, igmp, ct4},
		{"neighbor discovery gets no conntrack ports", full, ns, func(k *Key) {
			k.CtNwProto, k.CtIPv6Src, k.CtIPv6Dst = full.CtNwProto, full.CtIPv6Src, full.CtIPv6Dst
		}},
		{"arp gets no conntrack tuple", full, arp, func(*Key) {}},
		{"malformed ipv4 gets no conntrack tuple", full, badIP, func(*Key) {}},
		{"ct_nw_proto 0 gives no tuple", noCtProto, tcp4, func(*Key) {}},
		{"ct_state 0 drops zone, mark, label and tuple", noCt, tcp4, func(k *Key) {
			k.CtMark, k.CtZone, k.CtLabel = 0, 0, [16]byte{}
		}},
		{"tunnel without destination is not copied", noTunnel, tcp4, func(k *Key) {
			ct4(k)
			ctPorts(k)
			k.TunID, k.TunSrc, k.TunDst, k.TunFlags, k.TunTos, k.TunTTL = 0, 0, 0, 0, 0, 0
			k.TunTpSrc, k.TunTpDst, k.TunGbpID, k.TunGbpFlags, k.TunMetaPresent, k.TunMeta = 0, 0, 0, 0, 0, [packet.TunMetaBytes]byte{}
		}},
		{"ipv6 tunnel without options", tunnel6, tcp4, func(k *Key) {
			ct4(k)
			ctPorts(k)
			k.TunMeta = [packet.TunMetaBytes]byte{}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, plain := extractFrame(c.frame)
			p := packet.FromBytes(c.frame)
			p.Md = c.md
			var k Key
			Extract(p, &k)
			want := overlayHeaders(metadataKey(&c.md), plain)
			c.meta(&want)
			if k != want {
				t.Errorf("key differs:%s", extractKeyDiff(&k, &want))
			}
			if p.Md != c.md {
				t.Errorf("metadata changed by extraction")
			}
		})
	}
}

func TestExtractDoesNotAllocate(t *testing.T) {
	cases := extractCases(t)
	pkts := make([]*packet.Packet, len(cases))
	for i, c := range cases {
		pkts[i] = packet.FromBytes(c.frame)
		pkts[i].Md = testMetadata()
	}
	var k Key
	allocs := testing.AllocsPerRun(100, func() {
		for _, p := range pkts {
			Extract(p, &k)
		}
	})
	if allocs != 0 {
		t.Errorf("Extract allocates %.1f times per run of %d packets", allocs, len(pkts))
	}
}
