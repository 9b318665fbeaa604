package conntrack

import (
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

// fakeClock is a settable clock in nanoseconds.
type fakeClock struct{ ns int64 }

func (c *fakeClock) now() int64            { return c.ns }
func (c *fakeClock) advance(seconds int64) { c.ns += seconds * 1e9 }

func newTracker(t testing.TB) (*Tracker, *fakeClock) {
	t.Helper()
	clk := &fakeClock{ns: 1e9}
	return New(Config{Now: clk.now}), clk
}

var (
	macA = net.HardwareAddr{0, 0, 0, 0, 0, 1}
	macB = net.HardwareAddr{0, 0, 0, 0, 0, 2}
)

func serialize(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatalf("serialize: %v", err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

func ip4(src, dst string, proto layers.IPProtocol) *layers.IPv4 {
	return &layers.IPv4{Version: 4, TTL: 64, Protocol: proto, SrcIP: net.ParseIP(src).To4(), DstIP: net.ParseIP(dst).To4()}
}

func eth(t layers.EthernetType) *layers.Ethernet {
	return &layers.Ethernet{SrcMAC: macA, DstMAC: macB, EthernetType: t}
}

// tcpFlags for tcp4.
const (
	fSYN = 1 << iota
	fACK
	fFIN
	fRST
)

func tcpLayer(sport, dport uint16, flags int, seq, ack uint32) *layers.TCP {
	return &layers.TCP{SrcPort: layers.TCPPort(sport), DstPort: layers.TCPPort(dport), Seq: seq, Ack: ack, Window: 65535,
		SYN: flags&fSYN != 0, ACK: flags&fACK != 0, FIN: flags&fFIN != 0, RST: flags&fRST != 0}
}

func tcp4(t testing.TB, src, dst string, sport, dport uint16, flags int, seq, ack uint32, payload []byte) []byte {
	ip := ip4(src, dst, layers.IPProtocolTCP)
	tc := tcpLayer(sport, dport, flags, seq, ack)
	tc.SetNetworkLayerForChecksum(ip)
	return serialize(t, eth(layers.EthernetTypeIPv4), ip, tc, gopacket.Payload(payload))
}

func tcp6(t testing.TB, src, dst string, sport, dport uint16, flags int, seq, ack uint32) []byte {
	ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP, SrcIP: net.ParseIP(src), DstIP: net.ParseIP(dst)}
	tc := tcpLayer(sport, dport, flags, seq, ack)
	tc.SetNetworkLayerForChecksum(ip)
	return serialize(t, eth(layers.EthernetTypeIPv6), ip, tc)
}

func udp4(t testing.TB, src, dst string, sport, dport uint16) []byte {
	ip := ip4(src, dst, layers.IPProtocolUDP)
	u := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: layers.UDPPort(dport)}
	u.SetNetworkLayerForChecksum(ip)
	return serialize(t, eth(layers.EthernetTypeIPv4), ip, u, gopacket.Payload([]byte("hello")))
}

func icmp4Echo(t testing.TB, src, dst string, typ uint8, id uint16) []byte {
	ip := ip4(src, dst, layers.IPProtocolICMPv4)
	ic := &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(typ, 0), Id: id, Seq: 1}
	return serialize(t, eth(layers.EthernetTypeIPv4), ip, ic, gopacket.Payload([]byte("ping")))
}

func icmp6Echo(t testing.TB, src, dst string, typ uint8, id uint16) []byte {
	ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolICMPv6, SrcIP: net.ParseIP(src), DstIP: net.ParseIP(dst)}
	ic := &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(typ, 0)}
	ic.SetNetworkLayerForChecksum(ip)
	echo := &layers.ICMPv6Echo{Identifier: id, SeqNumber: 1}
	return serialize(t, eth(layers.EthernetTypeIPv6), ip, ic, echo)
}

// icmp4Error builds an ICMP destination-unreachable from src to dst
// quoting the IP packet of frame inner (an Ethernet frame).
func icmp4Error(t testing.TB, src, dst string, inner []byte) []byte {
	ip := ip4(src, dst, layers.IPProtocolICMPv4)
	ic := &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(3, 3)}
	q := inner[14:]
	if len(q) > 28 {
		q = q[:28] // IP header + 8 bytes, as routers quote at least
	}
	return serialize(t, eth(layers.EthernetTypeIPv4), ip, ic, gopacket.Payload(q))
}

// run executes ct with the given action text on one frame and returns
// the packet.
func run(t testing.TB, tr *Tracker, act string, frame []byte) *packet.Packet {
	t.Helper()
	p := packet.FromBytes(frame)
	runPkt(t, tr, act, p)
	return p
}

func runPkt(t testing.TB, tr *Tracker, act string, p *packet.Packet) {
	t.Helper()
	acts, err := odp.ParseActions(act)
	if err != nil || len(acts) != 1 || acts[0].Kind != odp.KindCt {
		t.Fatalf("parse %q: %v", act, err)
	}
	var b packet.Batch
	b.Add(p)
	tr.Execute(&b, acts[0].Ct)
}

// stateString formats ct_state as ovs-ofctl does (+trk+new...).
func stateString(s uint8) string {
	names := []struct {
		bit  uint8
		name string
	}{{CsTracked, "trk"}, {CsNew, "new"}, {CsEstablished, "est"}, {CsRelated, "rel"}, {CsReplyDir, "rpl"}, {CsInvalid, "inv"}, {CsSrcNAT, "snat"}, {CsDstNAT, "dnat"}}
	out := ""
	for _, n := range names {
		if s&n.bit != 0 {
			out += "+" + n.name
		}
	}
	if out == "" {
		return "-"
	}
	return out
}

func wantState(t testing.TB, p *packet.Packet, want string) {
	t.Helper()
	if got := stateString(p.Md.CtState); got != want {
		t.Fatalf("ct_state = %s, want %s", got, want)
	}
}

// checkChecksums decodes the frame with gopacket and verifies the IPv4
// header and L4 checksums by recomputing them.
func checkChecksums(t testing.TB, frame []byte) gopacket.Packet {
	t.Helper()
	pk := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.Default)
	if el := pk.ErrorLayer(); el != nil {
		t.Fatalf("decode: %v", el.Error())
	}
	if ip, ok := pk.NetworkLayer().(*layers.IPv4); ok {
		if packet.Checksum(frame[14:14+int(ip.IHL)*4]) != 0 {
			t.Fatalf("bad IPv4 header checksum")
		}
		l4 := frame[14+int(ip.IHL)*4 : 14+int(ip.Length)]
		var sum uint32
		switch ip.Protocol {
		case layers.IPProtocolICMPv4:
		default:
			sum = packet.PseudoHeaderIPv4(ipU32(ip.SrcIP), ipU32(ip.DstIP), uint8(ip.Protocol), len(l4))
		}
		if packet.Fold(packet.ChecksumPartial(l4, sum)) != 0 {
			t.Fatalf("bad L4 checksum")
		}
	}
	return pk
}

func ipU32(b net.IP) uint32 {
	b = b.To4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}
