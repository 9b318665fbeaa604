package sflow

import (
	"bytes"
	"github.com/gvs-project/gvs/ofproto/flowexport/internal/exporttest"
	"net/netip"
	"sync"
	"testing"
	"time"

	gfsflow "github.com/netsampler/goflow2/v2/decoders/sflow"
)

func decode(t *testing.T, b []byte) *gfsflow.Packet {
	t.Helper()
	var p gfsflow.Packet
	if err := gfsflow.DecodeMessageVersion(bytes.NewBuffer(b), &p); err != nil {
		t.Fatalf("goflow2: %v", err)
	}
	if int(p.SamplesCount) != len(p.Samples) {
		t.Fatalf("%d samples announced, %d decoded", p.SamplesCount, len(p.Samples))
	}
	return &p
}

type portList struct {
	mu    sync.Mutex
	ports []PortCounters
}

func (l *portList) get() []PortCounters {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]PortCounters(nil), l.ports...)
}

func newTest(t *testing.T, cfg Config, ports *portList) (*Exporter, *exporttest.Collector, *exporttest.FakeClock) {
	t.Helper()
	c := exporttest.NewCollector(t)
	clk := exporttest.NewFakeClock()
	cfg.Targets = append(cfg.Targets, c.Addr())
	var cb func() []PortCounters
	if ports != nil {
		cb = ports.get
	}
	e, err := New(cfg, clk.Now, cb)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e, c, clk
}

func testFrame(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	if n >= 14 {
		b[12], b[13] = 0x08, 0x00
	}
	return b
}

func TestFlowSampleDecodesWithHeaderAndSwitchRecords(t *testing.T) {
	e, c, clk := newTest(t, Config{Sampling: 100, Header: 64, Agent: netip.MustParseAddr("192.0.2.1"), SubID: 3}, nil)
	clk.Advance(2 * time.Second)
	pkt := testFrame(150)
	e.Sample(&Sample{Packet: pkt, InIfindex: 11, OutIfindex: 12, InVLAN: 10, InPriority: 3, OutVLAN: 20, OutPriority: 5})
	e.Sample(&Sample{Packet: pkt[:61], FrameLen: 1500, InIfindex: 11, OutIfindex: OutputMultiple(3), SamplePool: 7777, Drops: 2})
	e.Run()
	p := decode(t, c.Wait(t, 1)[0])
	if p.Version != 5 || p.IPVersion != 1 || netip.AddrFrom4([4]byte(p.AgentIP)).String() != "192.0.2.1" ||
		p.SubAgentId != 3 || p.SequenceNumber != 1 || p.Uptime != 2000 || p.SamplesCount != 2 {
		t.Fatalf("datagram header %+v", p)
	}
	for i, s := range p.Samples {
		fs, ok := s.(gfsflow.FlowSample)
		if !ok {
			t.Fatalf("sample %d is %T", i, s)
		}
		if fs.Header.SampleSequenceNumber != uint32(i+1) || fs.Header.SourceIdType != 2 || fs.Header.SourceIdValue != 1003 ||
			fs.SamplingRate != 100 || fs.Input != 11 || len(fs.Records) != 2 {
			t.Fatalf("sample %d: %+v", i, fs)
		}
		sw, ok := fs.Records[0].Data.(gfsflow.ExtendedSwitch)
		hdr, ok2 := fs.Records[1].Data.(gfsflow.SampledHeader)
		if !ok || !ok2 {
			t.Fatalf("records %T %T", fs.Records[0].Data, fs.Records[1].Data)
		}
		switch i {
		case 0:
			if fs.SamplePool != 100 || fs.Output != 12 || fs.Drops != 0 {
				t.Errorf("pool %d output %d drops %d", fs.SamplePool, fs.Output, fs.Drops)
			}
			if sw != (gfsflow.ExtendedSwitch{SrcVlan: 10, SrcPriority: 3, DstVlan: 20, DstPriority: 5}) {
				t.Errorf("switch %+v", sw)
			}
			if hdr.Protocol != 1 || hdr.FrameLength != 154 || hdr.Stripped != 4 || hdr.OriginalLength != 64 ||
				!bytes.Equal(hdr.HeaderData, pkt[:64]) {
				t.Errorf("header %+v", hdr)
			}
		case 1:
			if fs.SamplePool != 7777 || fs.Output != 0x80000003 || fs.Drops != 2 {
				t.Errorf("pool %d output %#x drops %d", fs.SamplePool, fs.Output, fs.Drops)
			}
			if hdr.FrameLength != 1504 || hdr.OriginalLength != 61 || len(hdr.HeaderData) != 64 || !bytes.Equal(hdr.HeaderData[:61], pkt[:61]) {
				t.Errorf("header %+v", hdr)
			}
		}
	}
	// The next datagram goes on with both sequences.
	e.Sample(&Sample{Packet: pkt, OutIfindex: OutputDropped})
	e.Flush()
	p = decode(t, c.Wait(t, 2)[1])
	fs := p.Samples[0].(gfsflow.FlowSample)
	if p.SequenceNumber != 2 || fs.Header.SampleSequenceNumber != 3 || fs.SamplePool != 200 || fs.Output != 0x40000100 {
		t.Errorf("seq %d sample seq %d pool %d output %#x", p.SequenceNumber, fs.Header.SampleSequenceNumber, fs.SamplePool, fs.Output)
	}
}

func TestDatagramsStayUnder1400Bytes(t *testing.T) {
	e, c, _ := newTest(t, Config{Agent: netip.MustParseAddr("2001:db8::1")}, nil)
	for range 40 {
		e.Sample(&Sample{Packet: testFrame(1500)})
	}
	e.Flush()
	// 40-byte header (IPv6 agent) + 216-byte samples: 6 per datagram.
	msgs := c.Wait(t, 7)
	c.Quiet(t, 7)
	var n uint32
	for i, m := range msgs {
		if len(m) >= maxDatagram {
			t.Errorf("datagram %d: %d bytes", i, len(m))
		}
		p := decode(t, m)
		if p.IPVersion != 2 || p.SequenceNumber != uint32(i+1) {
			t.Errorf("datagram %d: ip version %d seq %d", i, p.IPVersion, p.SequenceNumber)
		}
		for _, s := range p.Samples {
			n++
			if got := s.(gfsflow.FlowSample).Header.SampleSequenceNumber; got != n {
				t.Errorf("sample sequence %d, want %d", got, n)
			}
		}
	}
	if n != 40 {
		t.Fatalf("%d samples", n)
	}
}

func TestCounterSamplesEveryPollingInterval(t *testing.T) {
	ports := &portList{ports: []PortCounters{
		{Ifindex: 4, Name: "eth-a", OFPort: 1, Speed: 10e9, Up: true,
			RxPackets: 10, RxBytes: 1000, RxDrops: 1, RxErrors: 2, TxPackets: 20, TxBytes: 2000, TxDrops: 3, TxErrors: 4,
			RxMulticast: 5, RxBroadcast: 6, TxMulticast: 7, TxBroadcast: 8},
		{Ifindex: 0, Name: "no-ifindex"},
		{Ifindex: 9, Name: "p9", OFPort: 2},
	}}
	e, c, clk := newTest(t, Config{Polling: 10 * time.Second, DatapathID: 0xabc}, ports)
	e.Run()
	c.Quiet(t, 0)
	clk.Advance(11 * time.Second)
	e.Run()
	p := decode(t, c.Wait(t, 1)[0])
	if len(p.Samples) != 2 {
		t.Fatalf("%d samples", len(p.Samples))
	}
	got := map[uint32]gfsflow.CounterSample{}
	for _, s := range p.Samples {
		cs := s.(gfsflow.CounterSample)
		got[cs.Header.SourceIdValue] = cs
	}
	cs := got[4]
	if cs.Header.SourceIdType != 0 || cs.Header.SampleSequenceNumber != 1 || len(cs.Records) != 4 {
		t.Fatalf("counter sample %+v", cs)
	}
	var formats []uint32
	for _, r := range cs.Records {
		formats = append(formats, r.Header.DataFormat)
	}
	if formats[0] != 2 || formats[1] != 1004 || formats[2] != 1005 || formats[3] != 1 {
		t.Errorf("record formats %v, want [2 1004 1005 1]", formats)
	}
	ifc := cs.Records[3].Data.(gfsflow.IfCounters)
	want := gfsflow.IfCounters{IfIndex: 4, IfType: 6, IfSpeed: 10e9, IfStatus: 3, IfInOctets: 1000, IfInUcastPkts: 10,
		IfInMulticastPkts: 5, IfInBroadcastPkts: 6, IfInDiscards: 1, IfInErrors: 2, IfInUnknownProtos: 0xffffffff,
		IfOutOctets: 2000, IfOutUcastPkts: 20, IfOutMulticastPkts: 7, IfOutBroadcastPkts: 8, IfOutDiscards: 3, IfOutErrors: 4}
	if ifc != want {
		t.Errorf("if counters %+v\nwant %+v", ifc, want)
	}
	eth := cs.Records[0].Data.(gfsflow.EthernetCounters)
	if eth.Dot3StatsFCSErrors != 0xffffffff || eth.Dot3StatsSingleCollisionFrames != 0xffffffff {
		t.Errorf("ethernet counters %+v", eth)
	}
	raw := cs.Records[2].Data.(gfsflow.RawRecord)
	if !bytes.Equal(raw.Data, []byte{0, 0, 0, 5, 'e', 't', 'h', '-', 'a', 0, 0, 0}) {
		t.Errorf("port name record % x", raw.Data)
	}
	of := cs.Records[1].Data.(gfsflow.RawRecord)
	if !bytes.Equal(of.Data, []byte{0, 0, 0, 0, 0, 0, 0xa, 0xbc, 0, 0, 0, 1}) {
		t.Errorf("openflow port record % x", of.Data)
	}
	if ifc := got[9].Records[3].Data.(gfsflow.IfCounters); ifc.IfSpeed != 100000000 || ifc.IfStatus != 0 {
		t.Errorf("defaults: %+v", ifc)
	}
	// Not before the next interval; then the per-port sequence goes on.
	clk.Advance(5 * time.Second)
	e.Run()
	c.Quiet(t, 1)
	clk.Advance(6 * time.Second)
	e.Run()
	p = decode(t, c.Wait(t, 2)[1])
	if len(p.Samples) != 2 || p.Samples[0].(gfsflow.CounterSample).Header.SampleSequenceNumber != 2 || p.SequenceNumber != 2 {
		t.Errorf("second poll: %+v", p)
	}
}

func TestOddSamplesDoNotPanic(t *testing.T) {
	e, c, clk := newTest(t, Config{Header: 1000}, &portList{ports: []PortCounters{{Ifindex: 1, Name: string(make([]byte, 400))}}})
	for _, b := range [][]byte{nil, {1}, testFrame(3), testFrame(60), testFrame(9000)} {
		e.Sample(&Sample{Packet: b, FrameLen: -5})
	}
	e.Flush()
	msgs := c.Wait(t, 1)
	c.Quiet(t, 1)
	if p := decode(t, msgs[0]); len(p.Samples) != 4 { // the 9000-byte header does not fit a datagram
		t.Fatalf("%d samples", len(p.Samples))
	}
	e.Run() // first sight of the port: its first poll is scheduled
	clk.Advance(31 * time.Second)
	e.Run()
	p := decode(t, c.Wait(t, 2)[1])
	name := p.Samples[0].(gfsflow.CounterSample).Records[2].Data.(gfsflow.RawRecord).Data
	if len(name) != 4+256 || name[3] != 255 {
		t.Errorf("port name record of %d bytes, length %d", len(name), name[3])
	}
}

func TestSampleDoesNotAllocate(t *testing.T) {
	e, _, _ := newTest(t, Config{}, nil)
	s := &Sample{Packet: testFrame(1500), InIfindex: 1}
	if n := testing.AllocsPerRun(1000, func() { e.Sample(s) }); n != 0 {
		t.Fatalf("Sample allocates %v times", n)
	}
}

func BenchmarkSample(b *testing.B) {
	c := exporttest.NewSinkCollector(b)
	e, err := New(Config{Targets: []string{c.Addr()}}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	s := &Sample{Packet: testFrame(1500), InIfindex: 1, OutIfindex: 2}
	b.ReportAllocs()
	for b.Loop() {
		e.Sample(s)
	}
}
