package odp_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/odp/odptest"
	"github.com/gvs-project/gvs/datapath/packet"
)

var (
	macA = net.HardwareAddr{0x00, 0x11, 0x22, 0x33, 0x44, 0x55}
	macB = net.HardwareAddr{0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb}
	ip4A = net.IP{10, 0, 0, 1}
	ip4B = net.IP{10, 0, 0, 2}
	ip6A = net.ParseIP("2001:db8::1")
	ip6B = net.ParseIP("2001:db8::2")
)

// build serialises layers with correct lengths and checksums.
func build(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	for _, l := range ls {
		var nl gopacket.NetworkLayer
		for _, m := range ls {
			if n, ok := m.(gopacket.NetworkLayer); ok {
				nl = n
			}
		}
		switch v := l.(type) {
		case *layers.TCP:
			v.SetNetworkLayerForChecksum(nl)
		case *layers.UDP:
			v.SetNetworkLayerForChecksum(nl)
		case *layers.ICMPv6:
			v.SetNetworkLayerForChecksum(nl)
		}
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatalf("serialize: %v", err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

func eth(t layers.EthernetType) *layers.Ethernet {
	return &layers.Ethernet{SrcMAC: macA, DstMAC: macB, EthernetType: t}
}

func ipv4(proto layers.IPProtocol) *layers.IPv4 {
	return &layers.IPv4{Version: 4, IHL: 5, TTL: 64, TOS: 0x01, Protocol: proto, SrcIP: ip4A, DstIP: ip4B, Flags: layers.IPv4DontFragment}
}

func ipv6(next layers.IPProtocol) *layers.IPv6 {
	return &layers.IPv6{Version: 6, HopLimit: 64, TrafficClass: 0x12, FlowLabel: 0xabcde, NextHeader: next, SrcIP: ip6A, DstIP: ip6B}
}

var payload = gopacket.Payload([]byte("hello, datapath!"))

func tcpv4(t testing.TB) []byte {
	return build(t, eth(layers.EthernetTypeIPv4), ipv4(layers.IPProtocolTCP),
		&layers.TCP{SrcPort: 1234, DstPort: 80, Seq: 1, SYN: true, Window: 1000}, payload)
}

func udpv4(t testing.TB) []byte {
	return build(t, eth(layers.EthernetTypeIPv4), ipv4(layers.IPProtocolUDP),
		&layers.UDP{SrcPort: 4000, DstPort: 4001}, payload)
}

// exec runs "acts,1" over one copy of frame and returns what port 1 got.
func exec(t testing.TB, frame []byte, acts string) ([]byte, packet.Metadata) {
	t.Helper()
	a, err := odp.ParseActions(acts + ",1")
	if err != nil {
		t.Fatalf("ParseActions(%q): %v", acts, err)
	}
	rec := &odptest.Recorder{}
	ctx := odp.NewContext(packet.NewPool(8), rec, 1)
	p := packet.FromBytes(frame)
	var k flow.Key
	flow.Extract(p, &k)
	var b packet.Batch
	b.Add(p)
	odp.Execute(ctx, &b, a)
	if len(rec.Calls) != 1 || rec.Calls[0].Op != "output" || len(rec.Calls[0].Frames) != 1 {
		t.Fatalf("%s: calls %v", acts, rec.Ops())
	}
	return rec.Calls[0].Frames[0], rec.Calls[0].Md[0]
}

type verifier interface {
	VerifyChecksum() (error, gopacket.ChecksumVerificationResult)
}

// verify decodes frame with gopacket and checks every checksum gopacket
// knows how to verify; it returns the decoded packet.
func verify(t testing.TB, frame []byte) gopacket.Packet {
	t.Helper()
	pkt := gopacket.NewPacket(append([]byte(nil), frame...), layers.LayerTypeEthernet, gopacket.Default)
	if el := pkt.ErrorLayer(); el != nil {
		t.Fatalf("decode: %v", el.Error())
	}
	var nl gopacket.NetworkLayer
	for _, l := range pkt.Layers() {
		switch v := l.(type) {
		case gopacket.NetworkLayer:
			nl = v
		}
		switch v := l.(type) {
		case *layers.TCP:
			v.SetNetworkLayerForChecksum(nl)
		case *layers.UDP:
			v.SetNetworkLayerForChecksum(nl)
		case *layers.ICMPv6:
			v.SetNetworkLayerForChecksum(nl)
		}
		if v, ok := l.(verifier); ok {
			err, res := v.VerifyChecksum()
			if err != nil || !res.Valid {
				t.Errorf("%v checksum: err %v, actual %#x, correct %#x", l.LayerType(), err, res.Actual, res.Correct)
			}
		}
	}
	return pkt
}

func TestSetEthernetAddresses(t *testing.T) {
	in := tcpv4(t)
	out, _ := exec(t, in, "set(eth(src=02:00:00:00:00:01,dst=02:00:00:00:00:02))")
	if want := []byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1}; !bytes.Equal(out[:12], want) {
		t.Fatalf("eth = % x, want % x", out[:12], want)
	}
	if !bytes.Equal(out[12:], in[12:]) {
		t.Fatal("bytes after the addresses changed")
	}
	out, _ = exec(t, in, "set(eth(src=aa:bb:cc:00:00:00/ff:ff:ff:00:00:00))")
	if want := []byte{0xaa, 0xbb, 0xcc, 0x33, 0x44, 0x55}; !bytes.Equal(out[6:12], want) {
		t.Fatalf("masked src = % x, want % x", out[6:12], want)
	}
}

func TestSetIPv4AddressUpdatesIPAndTCPChecksums(t *testing.T) {
	out, _ := exec(t, tcpv4(t), "set(ipv4(src=192.168.7.9,dst=172.16.0.200))")
	pkt := verify(t, out)
	ip := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	if !ip.SrcIP.Equal(net.IP{192, 168, 7, 9}) || !ip.DstIP.Equal(net.IP{172, 16, 0, 200}) {
		t.Fatalf("addresses %v -> %v", ip.SrcIP, ip.DstIP)
	}
	if ip.TTL != 64 || ip.TOS != 0x01 {
		t.Fatalf("unmasked fields changed: ttl %d tos %#x", ip.TTL, ip.TOS)
	}
}

func TestSetIPv4MaskedAddress(t *testing.T) {
	out, _ := exec(t, udpv4(t), "set(ipv4(dst=192.168.0.0/255.255.0.0))")
	pkt := verify(t, out)
	if ip := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4); !ip.DstIP.Equal(net.IP{192, 168, 0, 2}) {
		t.Fatalf("dst %v, want 192.168.0.2", ip.DstIP)
	}
}

func TestSetIPv4DSCPKeepsECNAndTTL(t *testing.T) {
	out, _ := exec(t, tcpv4(t), "set(ipv4(tos=0xb8/0xfc,ttl=3))")
	pkt := verify(t, out)
	ip := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	if ip.TOS != 0xb9 || ip.TTL != 3 {
		t.Fatalf("tos %#x ttl %d, want 0xb9 3", ip.TOS, ip.TTL)
	}
	out, _ = exec(t, tcpv4(t), "set(ipv4(tos=0x3/0x3))")
	if ip := verify(t, out).Layer(layers.LayerTypeIPv4).(*layers.IPv4); ip.TOS != 0x03 {
		t.Fatalf("ECN set: tos %#x, want 0x3", ip.TOS)
	}
}

func TestSetIPv4NeverWritesProtoOrFrag(t *testing.T) {
	in := tcpv4(t)
	out, _ := exec(t, in, "set(ipv4(src=10.0.0.1,dst=10.0.0.2,proto=17,tos=0x1,ttl=64,frag=later))")
	if !bytes.Equal(out, in) {
		t.Fatal("a set to the current values with proto/frag changed the packet")
	}
}

func TestSetUDPChecksumFollowsAddressAndPorts(t *testing.T) {
	out, _ := exec(t, udpv4(t), "set(ipv4(src=1.2.3.4)),set(udp(src=1,dst=2))")
	pkt := verify(t, out)
	u := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
	if u.SrcPort != 1 || u.DstPort != 2 || u.Checksum == 0 {
		t.Fatalf("udp %d->%d csum %#x", u.SrcPort, u.DstPort, u.Checksum)
	}
}

func TestSetUDPZeroChecksumStaysZero(t *testing.T) {
	in := udpv4(t)
	in[14+20+6], in[14+20+7] = 0, 0
	out, _ := exec(t, in, "set(ipv4(dst=9.9.9.9)),set(udp(dst=99))")
	if c := binary.BigEndian.Uint16(out[14+20+6:]); c != 0 {
		t.Fatalf("udp checksum %#x, want 0", c)
	}
	verify(t, out)
}

func TestSetTCPPorts(t *testing.T) {
	out, _ := exec(t, tcpv4(t), "set(tcp(src=4321,dst=0x1f00/0xff00))")
	pkt := verify(t, out)
	tcp := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
	if tcp.SrcPort != 4321 || tcp.DstPort != 0x1f50 {
		t.Fatalf("tcp %d->%#x, want 4321->0x1f50", tcp.SrcPort, tcp.DstPort)
	}
}

func sctpFrame(t testing.TB) []byte {
	f := build(t, eth(layers.EthernetTypeIPv4), ipv4(layers.IPProtocolSCTP),
		&layers.SCTP{SrcPort: 1000, DstPort: 2000, VerificationTag: 7},
		gopacket.Payload([]byte{0, 0, 0, 8, 1, 2, 3, 4}))
	return f
}

// sctpL4 returns the SCTP packet in an IPv4 frame, without the Ethernet
// padding that the 60-byte minimum adds.
func sctpL4(frame []byte) []byte {
	return frame[34 : 14+int(binary.BigEndian.Uint16(frame[16:]))]
}

func sctpCRC(l4 []byte) uint32 {
	c := append([]byte(nil), l4...)
	binary.LittleEndian.PutUint32(c[8:], 0)
	return crc32.Checksum(c, crc32.MakeTable(crc32.Castagnoli))
}

func TestSetSCTPRecomputesCRC32c(t *testing.T) {
	in := sctpFrame(t)
	if len(in) != 60 {
		t.Fatalf("test frame is %d bytes, want 60 (padded)", len(in))
	}
	if got, want := binary.LittleEndian.Uint32(in[34+8:]), sctpCRC(sctpL4(in)); got != want {
		t.Fatalf("test frame crc %#x, want %#x", got, want)
	}
	out, _ := exec(t, in, "set(sctp(src=5,dst=6))")
	l4 := sctpL4(out)
	if binary.BigEndian.Uint16(l4) != 5 || binary.BigEndian.Uint16(l4[2:]) != 6 {
		t.Fatalf("ports % x", l4[:4])
	}
	if got, want := binary.LittleEndian.Uint32(l4[8:]), sctpCRC(l4); got != want {
		t.Fatalf("crc %#x, want %#x", got, want)
	}
}

func TestSetSCTPKeepsWrongCRCWrong(t *testing.T) {
	in := sctpFrame(t)
	in[34+8] ^= 0xff
	out, _ := exec(t, in, "set(sctp(src=5))")
	l4 := sctpL4(out)
	if got, want := binary.LittleEndian.Uint32(l4[8:]), sctpCRC(l4)^0xff; got != want {
		t.Fatalf("crc %#x, want the same error carried over %#x", got, want)
	}
}

func TestSetICMPTypeCode(t *testing.T) {
	in := build(t, eth(layers.EthernetTypeIPv4), ipv4(layers.IPProtocolICMPv4),
		&layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(8, 0), Id: 1, Seq: 2}, payload)
	out, _ := exec(t, in, "set(icmp(type=0,code=0)),set(ipv4(dst=8.8.8.8))")
	pkt := verify(t, out)
	if ic := pkt.Layer(layers.LayerTypeICMPv4).(*layers.ICMPv4); ic.TypeCode.Type() != 0 {
		t.Fatalf("icmp type %d", ic.TypeCode.Type())
	}
}

func TestSetIPv6AddressesUpdateTCPChecksum(t *testing.T) {
	in := build(t, eth(layers.EthernetTypeIPv6), ipv6(layers.IPProtocolTCP),
		&layers.TCP{SrcPort: 1, DstPort: 2, ACK: true, Window: 5}, payload)
	out, _ := exec(t, in, "set(ipv6(src=fe80::1234,dst=2001:db8:ffff::9,label=0x54321,tclass=0x80/0xf0,hlimit=7))")
	pkt := verify(t, out)
	ip := pkt.Layer(layers.LayerTypeIPv6).(*layers.IPv6)
	if !ip.SrcIP.Equal(net.ParseIP("fe80::1234")) || !ip.DstIP.Equal(net.ParseIP("2001:db8:ffff::9")) {
		t.Fatalf("addresses %v -> %v", ip.SrcIP, ip.DstIP)
	}
	if ip.FlowLabel != 0x54321 || ip.TrafficClass != 0x82 || ip.HopLimit != 7 || ip.Version != 6 {
		t.Fatalf("label %#x tclass %#x hlimit %d version %d", ip.FlowLabel, ip.TrafficClass, ip.HopLimit, ip.Version)
	}
}

func TestSetIPv6UDPAndICMPv6Checksums(t *testing.T) {
	udp := build(t, eth(layers.EthernetTypeIPv6), ipv6(layers.IPProtocolUDP), &layers.UDP{SrcPort: 1, DstPort: 2}, payload)
	out, _ := exec(t, udp, "set(ipv6(dst=::1)),set(udp(src=7))")
	verify(t, out)
	icmp := build(t, eth(layers.EthernetTypeIPv6), ipv6(layers.IPProtocolICMPv6),
		&layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(128, 0)}, &layers.ICMPv6Echo{Identifier: 1, SeqNumber: 1}, payload)
	out, _ = exec(t, icmp, "set(ipv6(src=2001:db8::77)),set(icmpv6(type=129))")
	pkt := verify(t, out)
	if ic := pkt.Layer(layers.LayerTypeICMPv6).(*layers.ICMPv6); ic.TypeCode.Type() != 129 {
		t.Fatalf("icmpv6 type %d", ic.TypeCode.Type())
	}
}

func ndFrame(t testing.TB, typ uint8, opt layers.ICMPv6Opt) []byte {
	ip := ipv6(layers.IPProtocolICMPv6)
	ip.HopLimit = 255
	var body gopacket.SerializableLayer
	opts := layers.ICMPv6Options{{Type: opt, Data: macA}}
	if typ == 135 {
		body = &layers.ICMPv6NeighborSolicitation{TargetAddress: ip6B, Options: opts}
	} else {
		body = &layers.ICMPv6NeighborAdvertisement{TargetAddress: ip6B, Options: opts, Flags: 0x60}
	}
	return build(t, eth(layers.EthernetTypeIPv6), ip, &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(typ, 0)}, body)
}

func TestSetNDTargetAndLinkLayerAddresses(t *testing.T) {
	out, _ := exec(t, ndFrame(t, 135, layers.ICMPv6OptSourceAddress), "set(nd(target=2001:db8::99,sll=02:02:02:02:02:02))")
	pkt := verify(t, out)
	ns := pkt.Layer(layers.LayerTypeICMPv6NeighborSolicitation).(*layers.ICMPv6NeighborSolicitation)
	if !ns.TargetAddress.Equal(net.ParseIP("2001:db8::99")) || !bytes.Equal(ns.Options[0].Data, []byte{2, 2, 2, 2, 2, 2}) {
		t.Fatalf("NS target %v sll % x", ns.TargetAddress, ns.Options[0].Data)
	}
	out, _ = exec(t, ndFrame(t, 136, layers.ICMPv6OptTargetAddress), "set(nd(tll=04:04:04:04:04:04))")
	pkt = verify(t, out)
	na := pkt.Layer(layers.LayerTypeICMPv6NeighborAdvertisement).(*layers.ICMPv6NeighborAdvertisement)
	if !bytes.Equal(na.Options[0].Data, []byte{4, 4, 4, 4, 4, 4}) || !na.TargetAddress.Equal(ip6B) {
		t.Fatalf("NA target %v tll % x", na.TargetAddress, na.Options[0].Data)
	}
}

func TestSetARPFields(t *testing.T) {
	in := build(t, eth(layers.EthernetTypeARP), &layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4,
		HwAddressSize: 6, ProtAddressSize: 4, Operation: 1, SourceHwAddress: macA, SourceProtAddress: ip4A,
		DstHwAddress: make([]byte, 6), DstProtAddress: ip4B})
	out, _ := exec(t, in, "set(arp(sip=1.1.1.1,tip=2.2.2.2,op=2,sha=00:00:00:00:00:0a,tha=00:00:00:00:00:0b))")
	arp := verify(t, out).Layer(layers.LayerTypeARP).(*layers.ARP)
	if arp.Operation != 2 || !bytes.Equal(arp.SourceProtAddress, []byte{1, 1, 1, 1}) || !bytes.Equal(arp.DstProtAddress, []byte{2, 2, 2, 2}) ||
		!bytes.Equal(arp.SourceHwAddress, []byte{0, 0, 0, 0, 0, 0xa}) || !bytes.Equal(arp.DstHwAddress, []byte{0, 0, 0, 0, 0, 0xb}) {
		t.Fatalf("arp %+v", arp)
	}
}

func TestSetMetadataFields(t *testing.T) {
	_, md := exec(t, tcpv4(t), "set(skb_mark(0x1234)),set(skb_mark(0xff0000/0xff0000)),set(skb_priority(0x7))")
	if md.PktMark != 0xff1234 || md.SkbPriority != 7 {
		t.Fatalf("mark %#x priority %#x", md.PktMark, md.SkbPriority)
	}
	_, md = exec(t, tcpv4(t), "set(tunnel(tun_id=0x2a,src=1.1.1.1,dst=2.2.2.2,tos=0x4,ttl=64,tp_dst=4789,flags(df|key)))")
	want := packet.Tunnel{ID: 42, Src: 0x01010101, Dst: 0x02020202, Tos: 4, TTL: 64, TpDst: 4789,
		Flags: packet.TunFlagDontFragment | packet.TunFlagKey}
	if md.Tunnel != want {
		t.Fatalf("tunnel %+v, want %+v", md.Tunnel, want)
	}
}

func TestSetOnMissingHeaderLeavesPacketAlone(t *testing.T) {
	arp := build(t, eth(layers.EthernetTypeARP), &layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4,
		HwAddressSize: 6, ProtAddressSize: 4, Operation: 1, SourceHwAddress: macA, SourceProtAddress: ip4A,
		DstHwAddress: make([]byte, 6), DstProtAddress: ip4B})
	for _, acts := range []string{"set(ipv4(dst=1.1.1.1))", "set(ipv6(dst=::1))", "set(tcp(dst=1))", "set(udp(dst=1))",
		"set(sctp(dst=1))", "set(icmp(type=1))", "set(nd(target=::1))"} {
		if out, _ := exec(t, arp, acts); !bytes.Equal(out, arp) {
			t.Errorf("%s changed an ARP packet", acts)
		}
	}
	short := tcpv4(t)[:14+20+10] // TCP header cut short
	if out, _ := exec(t, short, "set(tcp(dst=1))"); !bytes.Equal(out, short) {
		t.Error("set(tcp) changed a truncated TCP header")
	}
}
