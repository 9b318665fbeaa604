package ipfix

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/gvs-project/gvs/ofproto/flowexport/internal/exporttest"
	"net/netip"
	"slices"
	"testing"
	"time"

	gfnetflow "github.com/netsampler/goflow2/v2/decoders/netflow"
)

// decoded is what the test collector made of the export stream.
type decoded struct {
	msgs      []gfnetflow.IPFIXPacket
	templates map[uint16][]gfnetflow.Field // by template ID (any domain)
	records   []record                     // data records in order
	options   []gfnetflow.OptionsDataRecord
}

// record is one data record: the message header fields, its template and
// its values by element (PEN<<16 | ID); repeated elements keep order.
type record struct {
	seq, domain, exportTime uint32
	template                uint16
	vals                    map[uint32][][]byte
}

func (r record) u(id uint32) uint64 { return r.ui(id, 0) }

func (r record) ui(id uint32, i int) uint64 {
	v := r.vals[id]
	if len(v) <= i {
		panic(fmt.Sprintf("no element %d #%d in template %d", id, i, r.template))
	}
	var x uint64
	for _, c := range v[i] {
		x = x<<8 | uint64(c)
	}
	return x
}

func (r record) s(id uint32, i int) string { return string(r.vals[id][i]) }

// decodeAll decodes every message with goflow2 and fails on any error,
// then checks each data set against its template strictly (exactly one
// record that uses every byte).
func decodeAll(t *testing.T, msgs [][]byte) *decoded {
	t.Helper()
	ts := gfnetflow.CreateTemplateSystem()
	d := &decoded{templates: map[uint16][]gfnetflow.Field{}}
	for i, m := range msgs {
		var nf9 gfnetflow.NFv9Packet
		var p gfnetflow.IPFIXPacket
		if err := gfnetflow.DecodeMessageVersion(bytes.NewBuffer(m), ts, &nf9, &p); err != nil {
			t.Fatalf("message %d: goflow2: %v", i, err)
		}
		if int(p.Length) != len(m) {
			t.Fatalf("message %d: length %d, datagram %d", i, p.Length, len(m))
		}
		d.msgs = append(d.msgs, p)
		for _, fs := range p.FlowSets {
			switch fs := fs.(type) {
			case gfnetflow.TemplateFlowSet:
				for _, tr := range fs.Records {
					d.templates[tr.TemplateId] = tr.Fields
				}
			case gfnetflow.IPFIXOptionsTemplateFlowSet:
			case gfnetflow.OptionsDataFlowSet:
				d.options = append(d.options, fs.Records...)
			case gfnetflow.DataFlowSet:
				if len(fs.Records) != 1 {
					t.Fatalf("message %d: %d records in set %d", i, len(fs.Records), fs.Id)
				}
				strictLen(t, d.templates[fs.Id], m[16+4:], int(fs.Length)-4)
				r := record{seq: p.SequenceNumber, domain: p.ObservationDomainId, exportTime: p.ExportTime,
					template: fs.Id, vals: map[uint32][][]byte{}}
				for _, v := range fs.Records[0].Values {
					id := uint32(v.Type&0x7fff) | v.Pen<<16
					r.vals[id] = append(r.vals[id], v.Value.([]byte))
				}
				d.records = append(d.records, r)
			default:
				t.Fatalf("message %d: undecoded set %T", i, fs)
			}
		}
	}
	return d
}

// strictLen walks fields over b and checks they use exactly n bytes.
func strictLen(t *testing.T, fields []gfnetflow.Field, b []byte, n int) {
	t.Helper()
	off := 0
	for _, f := range fields {
		l := int(f.Length)
		if l == 0xffff {
			l = int(b[off]) + 1
		}
		off += l
	}
	if off != n {
		t.Fatalf("record uses %d bytes, set holds %d", off, n)
	}
}

func newTest(t *testing.T, cfg Config) (*Exporter, *exporttest.Collector, *exporttest.FakeClock) {
	t.Helper()
	c := exporttest.NewCollector(t)
	clk := exporttest.NewFakeClock()
	cfg.Targets = append(cfg.Targets, c.Addr())
	e, err := New(cfg, clk.Now)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e, c, clk
}

// Information element IDs used in assertions.
const (
	idOctetDelta    = 1
	idPacketDelta   = 2
	idProto         = 4
	idSrcPort       = 7
	idSrcIPv4       = 8
	idIngressIf     = 10
	idDstPort       = 11
	idDstIPv4       = 12
	idEgressIf      = 14
	idSrcIPv6       = 27
	idDstIPv6       = 28
	idFlowLabel     = 31
	idSrcMAC        = 56
	idVLANID        = 58
	idIPVersion     = 60
	idDirection     = 61
	idDstMAC        = 80
	idIfName        = 82
	idPacketTotal   = 86
	idDroppedPkts   = 133
	idFlowEndReason = 136
	idObsPoint      = 138
	idStartDelta    = 158
	idEndDelta      = 159
	idICMPv6Type    = 178
	idICMPv6Code    = 179
	idIPTTL         = 192
	idDSCP          = 195
	idTCPSynTotal   = 218
	idDot1qPrio     = 244
	idEthType       = 256
	idL2OctetDelta  = 352
	idMinIPLen      = 25
	idMaxIPLen      = 26
)

func TestUncachedTCPSampleDecodesWithTemplatesAndStats(t *testing.T) {
	e, c, _ := newTest(t, Config{ObsDomainID: 7, ObsPointID: 9})
	pkt := frame{src: macA, dst: macB, ip: netip.MustParseAddr("10.0.0.1"), ipDst: netip.MustParseAddr("10.0.0.2"),
		proto: 6, tos: 0xb9, ttl: 64, sport: 40000, dport: 80, tcpFlags: 0x02, payload: 10}.bytes()
	e.Sample(&Sample{Packet: pkt, InPort: 3, InName: "p1", PacketDeltaCount: 4})

	// Templates for domain 7, the options template, the statistics
	// record, then the data record.
	nTmpl := len(templateSets(false))
	msgs := c.Wait(t, nTmpl+3)
	c.Quiet(t, nTmpl+3)
	d := decodeAll(t, msgs)
	if len(d.templates) != 88 {
		t.Fatalf("%d data templates, want 88", len(d.templates))
	}
	if len(d.options) != 1 || d.msgs[nTmpl+1].ObservationDomainId != 0 {
		t.Fatalf("statistics records %d", len(d.options))
	}
	for i, m := range d.msgs[:nTmpl] {
		if m.ObservationDomainId != 7 || m.SequenceNumber != 1 {
			t.Errorf("template message %d: domain %d seq %d", i, m.ObservationDomainId, m.SequenceNumber)
		}
	}
	if len(d.records) != 1 {
		t.Fatalf("%d records", len(d.records))
	}
	r := d.records[0]
	if r.template != 280 || r.domain != 7 || r.seq != 2 {
		t.Fatalf("template %d domain %d seq %d, want 280 7 2", r.template, r.domain, r.seq)
	}
	ipLen := uint64(len(pkt) - 14)
	checks := []struct {
		id   uint32
		want uint64
	}{
		{idObsPoint, 9}, {idDirection, 0}, {idEthType, 0x0800}, {idIngressIf, 3},
		{idIPVersion, 4}, {idIPTTL, 64}, {idProto, 6}, {idDSCP, 0xb9 >> 2},
		{idSrcPort, 40000}, {idDstPort, 80},
		{idPacketDelta, 4}, {idPacketTotal, 4}, {idDroppedPkts, 0},
		{idL2OctetDelta, 4 * uint64(len(pkt))}, {idOctetDelta, 4 * ipLen},
		{idMinIPLen, ipLen}, {idMaxIPLen, ipLen}, {idTCPSynTotal, 4},
		{idFlowEndReason, EndActiveTimeout}, {idStartDelta, 500000}, {idEndDelta, 500000},
	}
	for _, ck := range checks {
		if got := r.u(ck.id); got != ck.want {
			t.Errorf("element %d = %d, want %d", ck.id, got, ck.want)
		}
	}
	if a := netip.AddrFrom4([4]byte(r.vals[idSrcIPv4][0])); a.String() != "10.0.0.1" {
		t.Errorf("source %v", a)
	}
	if a := netip.AddrFrom4([4]byte(r.vals[idDstIPv4][0])); a.String() != "10.0.0.2" {
		t.Errorf("destination %v", a)
	}
	if !bytes.Equal(r.vals[idSrcMAC][0], macA[:]) || !bytes.Equal(r.vals[idDstMAC][0], macB[:]) || r.s(idIfName, 0) != "p1" {
		t.Errorf("MACs %x %x name %q", r.vals[idSrcMAC][0], r.vals[idDstMAC][0], r.s(idIfName, 0))
	}
	st := e.Stats()
	want := Stats{SampledPackets: 1, IPv4OK: 1, TxPackets: uint64(nTmpl + 3), Flows: 1}
	if st != want {
		t.Errorf("stats %+v, want %+v", st, want)
	}
}

func TestTemplateSetMatchesOpenVSwitchLayout(t *testing.T) {
	ids := map[uint16]int{}
	for _, set := range templateSets(true) {
		if binary.BigEndian.Uint16(set) != setIDTemplate || int(binary.BigEndian.Uint16(set[2:])) != len(set) {
			t.Fatalf("bad set header % x", set[:4])
		}
		if len(set)+headerLen >= maxMessageLen+400 {
			t.Errorf("template message of %d bytes", len(set)+headerLen)
		}
		for b := set[4:]; len(b) > 0; {
			id, n := binary.BigEndian.Uint16(b), int(binary.BigEndian.Uint16(b[2:]))
			ids[id] = n
			b = b[4:]
			for range n {
				if binary.BigEndian.Uint16(b)&0x8000 != 0 {
					b = b[8:]
				} else {
					b = b[4:]
				}
			}
		}
	}
	if len(ids) != 88 {
		t.Fatalf("%d templates", len(ids))
	}
	// Spot checks: Ethernet/IPv4/TCP ingress and VLAN/IPv6/ICMP tunnel egress.
	if ids[280] != len(templateFields(0, 1, 1, 0, 0, true)) || ids[375] != len(templateFields(1, 2, 4, 1, 1, true)) {
		t.Errorf("template 280 has %d fields, 375 has %d", ids[280], ids[375])
	}
	if optionsTemplateID != 462 {
		t.Errorf("options template %d, want 462", optionsTemplateID)
	}
	f := templateFields(0, 1, 1, 0, 1, false)
	if n := slices.Index(f, ieInterfaceName); n != 8 || f[12] != ieInterfaceName {
		t.Errorf("egress template: interfaceName at %d and %v", n, f[12])
	}
}

func TestVLANIPv6ICMPEgressSample(t *testing.T) {
	e, c, _ := newTest(t, Config{ObsDomainID: 1})
	pkt := frame{src: macA, dst: [6]byte{0x33, 0x33, 0, 0, 0, 1}, vlan: 5<<13 | 100,
		ip: netip.MustParseAddr("2001:db8::1"), ipDst: netip.MustParseAddr("ff02::1"),
		proto: 58, ttl: 255, sport: 128, dport: 0, flowLabel: 0x12345, payload: 8}.bytes()
	e.Sample(&Sample{Packet: pkt, InPort: 1, InName: "in", OutPort: 2, OutName: "out", Egress: true, ObsDomainID: 5, ObsPointID: 6})
	nTmpl := len(templateSets(false))
	d := decodeAll(t, c.Wait(t, nTmpl+3))
	r := d.records[0]
	if want := templateID(1, 2, 4, 0, 1); r.template != want || r.domain != 5 {
		t.Fatalf("template %d domain %d, want %d 5", r.template, r.domain, want)
	}
	if r.u(idObsPoint) != 6 || r.u(idDirection) != 1 || r.u(idEgressIf) != 2 || r.s(idIfName, 0) != "in" || r.s(idIfName, 1) != "out" {
		t.Errorf("point %d dir %d egress %d names %q %q", r.u(idObsPoint), r.u(idDirection), r.u(idEgressIf), r.s(idIfName, 0), r.s(idIfName, 1))
	}
	if r.u(idVLANID) != 100 || r.u(idDot1qPrio) != 5 || r.u(idEthType) != 0x86dd || r.u(idIPVersion) != 6 {
		t.Errorf("vlan %d prio %d ethtype %#x version %d", r.u(idVLANID), r.u(idDot1qPrio), r.u(idEthType), r.u(idIPVersion))
	}
	if r.u(idFlowLabel) != 0x12345 || r.u(idICMPv6Type) != 128 || r.u(idICMPv6Code) != 0 || r.u(idIPTTL) != 255 {
		t.Errorf("label %#x icmp %d/%d ttl %d", r.u(idFlowLabel), r.u(idICMPv6Type), r.u(idICMPv6Code), r.u(idIPTTL))
	}
	if netip.AddrFrom16([16]byte(r.vals[idSrcIPv6][0])).String() != "2001:db8::1" || r.u(idOctetDelta) != uint64(len(pkt)-18) {
		t.Errorf("source %x octets %d", r.vals[idSrcIPv6][0], r.u(idOctetDelta))
	}
	if st := e.Stats(); st.IPv6OK != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestCacheAggregatesUntilActiveTimeout(t *testing.T) {
	e, c, clk := newTest(t, Config{CacheActiveTimeout: 5 * time.Second, CacheMaxFlows: 100})
	udp := frame{src: macA, dst: macB, ip: netip.MustParseAddr("10.0.0.1"), ipDst: netip.MustParseAddr("10.0.0.2"), proto: 17, sport: 1, dport: 2}
	small, big := udp.bytes(), func() []byte { u := udp; u.payload = 100; return u.bytes() }()
	e.Sample(&Sample{Packet: small, Dropped: true})
	clk.Advance(2 * time.Second)
	e.Sample(&Sample{Packet: big})
	other := udp
	other.dport = 3
	e.Sample(&Sample{Packet: other.bytes()})
	e.Run()
	c.Quiet(t, 0)
	if st := e.Stats(); st.CurrentFlows != 2 || st.Flows != 2 || st.SampledPackets != 3 {
		t.Fatalf("stats %+v", st)
	}
	clk.Advance(3 * time.Second)
	e.Run() // the first flow is 5 s old
	nTmpl := len(templateSets(false))
	d := decodeAll(t, c.Wait(t, nTmpl+3))
	c.Quiet(t, nTmpl+3)
	r := d.records[0]
	sLen, bLen := uint64(len(small)-14), uint64(len(big)-14)
	if r.u(idPacketDelta) != 2 || r.u(idDroppedPkts) != 1 || r.u(idMinIPLen) != sLen || r.u(idMaxIPLen) != bLen ||
		r.u(idOctetDelta) != sLen+bLen || r.u(idPacketTotal) != 2 || r.u(idFlowEndReason) != EndActiveTimeout {
		t.Errorf("record: pkts %d dropped %d len %d..%d octets %d total %d reason %d",
			r.u(idPacketDelta), r.u(idDroppedPkts), r.u(idMinIPLen), r.u(idMaxIPLen), r.u(idOctetDelta), r.u(idPacketTotal), r.u(idFlowEndReason))
	}
	// Start 5.5 s and end 3.5 s before the export second (rounded up).
	if r.u(idStartDelta) != 5500000 || r.u(idEndDelta) != 3500000 {
		t.Errorf("deltas %d %d", r.u(idStartDelta), r.u(idEndDelta))
	}
	e.Flush()
	d = decodeAll(t, c.Wait(t, nTmpl+4))
	if r := d.records[1]; r.u(idFlowEndReason) != EndForced || r.u(idSrcPort) != 1 || r.u(idDstPort) != 3 || r.seq != d.records[0].seq+1 {
		t.Errorf("flushed record: reason %d ports %d %d seq %d", r.u(idFlowEndReason), r.u(idSrcPort), r.u(idDstPort), r.seq)
	}
	if st := e.Stats(); st.CurrentFlows != 0 {
		t.Errorf("current flows %d", st.CurrentFlows)
	}
}

func TestCacheOverflowExportsOldestForLackOfResources(t *testing.T) {
	e, c, _ := newTest(t, Config{CacheActiveTimeout: time.Hour, CacheMaxFlows: 1})
	udp := frame{src: macA, dst: macB, ip: netip.MustParseAddr("10.0.0.1"), ipDst: netip.MustParseAddr("10.0.0.2"), proto: 17, sport: 1, dport: 2}
	e.Sample(&Sample{Packet: udp.bytes()})
	udp.dport = 9
	e.Sample(&Sample{Packet: udp.bytes()})
	nTmpl := len(templateSets(false))
	d := decodeAll(t, c.Wait(t, nTmpl+3))
	c.Quiet(t, nTmpl+3)
	if r := d.records[0]; r.u(idDstPort) != 2 || r.u(idFlowEndReason) != EndLackOfResources {
		t.Fatalf("port %d reason %d", r.u(idDstPort), r.u(idFlowEndReason))
	}
}

func TestSequenceCountsDataRecordsAndTemplatesAreRefreshed(t *testing.T) {
	e, c, clk := newTest(t, Config{TemplateInterval: 10 * time.Second, StatsInterval: time.Hour})
	udp := frame{src: macA, dst: macB, ip: netip.MustParseAddr("10.0.0.1"), ipDst: netip.MustParseAddr("10.0.0.2"), proto: 17, sport: 1, dport: 2}
	for range 5 {
		e.Sample(&Sample{Packet: udp.bytes()})
	}
	clk.Advance(11 * time.Second)
	e.Sample(&Sample{Packet: udp.bytes()})
	nTmpl := len(templateSets(false))
	want := 2*(nTmpl+1) + 1 + 6
	d := decodeAll(t, c.Wait(t, want))
	c.Quiet(t, want)
	var seqs []uint32
	for _, r := range d.records {
		seqs = append(seqs, r.seq)
	}
	// Sequence 1 went to the statistics record.
	if !slices.Equal(seqs, []uint32{2, 3, 4, 5, 6, 7}) {
		t.Fatalf("data sequence numbers %v", seqs)
	}
	// The refreshed templates carry the sequence number of the next record.
	if m := d.msgs[len(d.msgs)-2]; m.SequenceNumber != 7 {
		t.Errorf("refreshed options template message has sequence %d", m.SequenceNumber)
	}
}

func TestOddFramesDoNotPanicAndStayDecodable(t *testing.T) {
	e, c, _ := newTest(t, Config{VirtualObsID: "vobs"})
	tcp := frame{src: macA, dst: macB, ip: netip.MustParseAddr("10.0.0.1"), ipDst: netip.MustParseAddr("10.0.0.2"), proto: 6, sport: 1, dport: 2}.bytes()
	v6 := frame{src: macA, dst: macB, ip: netip.MustParseAddr("::1"), ipDst: netip.MustParseAddr("::2"), proto: 17}.bytes()
	inputs := [][]byte{
		nil, {0}, make([]byte, 13), make([]byte, 14),
		frame{src: macA, dst: [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, ethType: 0x0806}.bytes(),
		frame{src: macA, dst: macB, vlan: 7}.bytes()[:18],
		tcp[:20], tcp[:34], tcp[:40], v6[:60],
		frame{src: macA, dst: macB, ip: netip.MustParseAddr("10.0.0.1"), ipDst: netip.MustParseAddr("10.0.0.2"), proto: 47}.bytes(),
		frame{src: macA, dst: macB, ethType: 0x0100}.bytes(),
	}
	for _, in := range inputs {
		e.Sample(&Sample{Packet: in, InName: string(make([]byte, 300))})
	}
	nTmpl := len(templateSets(true))
	d := decodeAll(t, c.Wait(t, nTmpl+2+len(inputs)))
	if len(d.records) != len(inputs) {
		t.Fatalf("%d records", len(d.records))
	}
	for _, r := range d.records {
		if v := r.vals[penVMware<<16|898]; len(v) != 1 || string(v[0]) != "vobs" {
			t.Errorf("virtualObsID %q", r.vals[6876<<16|898])
		}
		if len(r.vals[idIfName][0]) != maxIfNameLen {
			t.Errorf("interface name of %d bytes", len(r.vals[idIfName][0]))
		}
	}
	if st := e.Stats(); st.IPv4Errors != 4 || st.IPv6Errors != 1 || st.Errors != 5 {
		t.Errorf("stats %+v", st)
	}
}

func TestConcurrentSamplesAreAllCounted(t *testing.T) {
	e, _, _ := newTest(t, Config{CacheActiveTimeout: time.Second, CacheMaxFlows: 1000})
	pkt := frame{src: macA, dst: macB, ip: netip.MustParseAddr("10.0.0.1"), ipDst: netip.MustParseAddr("10.0.0.2"), proto: 17}.bytes()
	done := make(chan struct{})
	for range 4 {
		go func() {
			for range 1000 {
				e.Sample(&Sample{Packet: pkt})
			}
			done <- struct{}{}
		}()
	}
	for range 10 {
		e.Run()
	}
	for range 4 {
		<-done
	}
	e.Flush()
	if st := e.Stats(); st.SampledPackets != 4000 || st.IPv4OK != 4000 || st.CurrentFlows != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestSampleDoesNotAllocate(t *testing.T) {
	pkt := frame{src: macA, dst: macB, ip: netip.MustParseAddr("10.0.0.1"), ipDst: netip.MustParseAddr("10.0.0.2"), proto: 6, sport: 1, dport: 2, payload: 1000}.bytes()
	for _, cfg := range []Config{{}, {CacheActiveTimeout: time.Hour, CacheMaxFlows: 10}} {
		e, _, _ := newTest(t, cfg)
		s := &Sample{Packet: pkt, InName: "eth0"}
		e.Sample(s)
		if n := testing.AllocsPerRun(1000, func() { e.Sample(s) }); n != 0 {
			t.Errorf("%+v: Sample allocates %v times", cfg, n)
		}
	}
}

func benchmarkSample(b *testing.B, cfg Config) {
	c := exporttest.NewSinkCollector(b)
	cfg.Targets = []string{c.Addr()}
	e, err := New(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	pkt := frame{src: macA, dst: macB, ip: netip.MustParseAddr("10.0.0.1"), ipDst: netip.MustParseAddr("10.0.0.2"), proto: 6, sport: 1, dport: 2, payload: 1400}.bytes()
	s := &Sample{Packet: pkt, InName: "eth0", InPort: 1}
	b.ReportAllocs()
	b.SetBytes(int64(len(pkt)))
	for b.Loop() {
		e.Sample(s)
	}
}

// BenchmarkSampleUncached exports every sample (one UDP send each).
func BenchmarkSampleUncached(b *testing.B) { benchmarkSample(b, Config{}) }

// BenchmarkSampleCached aggregates into a cached record.
func BenchmarkSampleCached(b *testing.B) {
	benchmarkSample(b, Config{CacheActiveTimeout: time.Hour, CacheMaxFlows: 10})
}

func TestTunnelSampleUsesTunnelTemplate(t *testing.T) {
	e, c, _ := newTest(t, Config{})
	pkt := frame{src: macA, dst: macB, ip: netip.MustParseAddr("10.0.0.1"), ipDst: netip.MustParseAddr("10.0.0.2"), proto: 17, sport: 1, dport: 2}.bytes()
	e.Sample(&Sample{Packet: pkt, Tunnel: &Tunnel{Type: TunnelVXLAN, Src: [4]byte{192, 0, 2, 1}, Dst: [4]byte{192, 0, 2, 2},
		SrcPort: 5555, DstPort: 4789, ID: 0xabcdef12}})
	e.Sample(&Sample{Packet: pkt, Tunnel: &Tunnel{Type: TunnelGRE, ID: 0xabcdef12}})
	d := decodeAll(t, c.Wait(t, len(templateSets(false))+4))
	v := func(r record, id uint32) []byte { return r.vals[penVMware<<16|id][0] }
	r := d.records[0]
	if want := templateID(0, 1, 2, 1, 0); r.template != want {
		t.Fatalf("template %d, want %d", r.template, want)
	}
	if !bytes.Equal(v(r, 893), []byte{192, 0, 2, 1}) || !bytes.Equal(v(r, 894), []byte{192, 0, 2, 2}) || v(r, 895)[0] != 17 ||
		binary.BigEndian.Uint16(v(r, 896)) != 5555 || binary.BigEndian.Uint16(v(r, 897)) != 4789 || v(r, 891)[0] != 1 ||
		!bytes.Equal(v(r, 892), []byte{0xcd, 0xef, 0x12}) {
		t.Errorf("VXLAN tunnel elements %x", r.vals)
	}
	if r := d.records[1]; v(r, 895)[0] != 47 || v(r, 891)[0] != 2 || !bytes.Equal(v(r, 892), []byte{0xab, 0xcd, 0xef, 0x12}) {
		t.Errorf("GRE tunnel elements %x", r.vals)
	}
}

func TestReconfigureAnnouncesTemplatesAgain(t *testing.T) {
	e, c, _ := newTest(t, Config{})
	pkt := frame{src: macA, dst: macB, ip: netip.MustParseAddr("10.0.0.1"), ipDst: netip.MustParseAddr("10.0.0.2"), proto: 17}.bytes()
	e.Sample(&Sample{Packet: pkt})
	nTmpl := len(templateSets(false))
	c.Wait(t, nTmpl+3)
	c2 := exporttest.NewCollector(t)
	if err := e.Reconfigure(Config{Targets: []string{c2.Addr()}, ObsDomainID: 3}); err != nil {
		t.Fatal(err)
	}
	e.Sample(&Sample{Packet: pkt})
	// Templates for domain 3 and the record; statistics are not due.
	d := decodeAll(t, c2.Wait(t, nTmpl+2))
	c2.Quiet(t, nTmpl+2)
	if len(d.records) != 1 || d.records[0].domain != 3 || d.records[0].seq != 3 {
		t.Fatalf("records %+v", d.records)
	}
	if err := e.Reconfigure(Config{Targets: []string{c2.Addr()}, ObsDomainID: 3}); err != nil {
		t.Fatal(err)
	}
	e.Sample(&Sample{Packet: pkt}) // unchanged configuration: no new templates
	c2.Wait(t, nTmpl+3)
	c2.Quiet(t, nTmpl+3)
}
