package flow

import (
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/gvs-project/gvs/datapath/packet"
)

// BenchmarkExtract measures extraction of minimum-size frames, the
// per-packet cost on both the fast path and the miss path.
func BenchmarkExtract(b *testing.B) {
	tcp := func() *layers.TCP { return &layers.TCP{SrcPort: 40000, DstPort: 80, ACK: true, PSH: true, Window: 512} }
	udp := func() *layers.UDP { return &layers.UDP{SrcPort: 1234, DstPort: 4789} }
	for _, c := range []struct {
		name  string
		frame []byte
	}{
		{"ipv4-udp-64B", buildFrame(b, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolUDP), udp(), rawPayload(make([]byte, 18)...))},
		{"ipv4-tcp-64B", buildFrame(b, ethLayer(layers.EthernetTypeIPv4), ipv4Layer(layers.IPProtocolTCP), tcp(), rawPayload(make([]byte, 6)...))},
		{"ipv6-tcp-78B", buildFrame(b, ethLayer(layers.EthernetTypeIPv6), ipv6Layer(layers.IPProtocolTCP), tcp(), rawPayload(make([]byte, 4)...))},
		{"vlan-ipv4-udp-64B", buildFrame(b, ethLayer(layers.EthernetTypeDot1Q),
			&layers.Dot1Q{Priority: 3, VLANIdentifier: 100, Type: layers.EthernetTypeIPv4},
			ipv4Layer(layers.IPProtocolUDP), udp(), rawPayload(make([]byte, 14)...))},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := packet.FromBytes(c.frame)
			p.Md.InPort = 1
			var k Key
			b.ReportAllocs()
			b.SetBytes(int64(len(c.frame)))
			for b.Loop() {
				Extract(p, &k)
			}
			if k.EthType == 0 || p.L4 == packet.OffsetUnset {
				b.Fatalf("frame not parsed: %+v", k)
			}
		})
	}
}
