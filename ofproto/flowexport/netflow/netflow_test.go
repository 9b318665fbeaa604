package netflow

import (
	"bytes"
	"github.com/gvs-project/gvs/ofproto/flowexport/internal/exporttest"
	"net/netip"
	"testing"
	"time"

	"github.com/netsampler/goflow2/v2/decoders/netflowlegacy"
)

func decodeV5(t *testing.T, b []byte) *netflowlegacy.PacketNetFlowV5 {
	t.Helper()
	var p netflowlegacy.PacketNetFlowV5
	if err := netflowlegacy.DecodeMessageVersion(bytes.NewBuffer(b), &p); err != nil {
		t.Fatalf("goflow2 decode: %v", err)
	}
	if int(p.Count) != len(p.Records) || len(b) != headerLen+recordLen*int(p.Count) {
		t.Fatalf("count %d, %d records, %d bytes", p.Count, len(p.Records), len(b))
	}
	return &p
}

func ip4(s string) [4]byte { return netip.MustParseAddr(s).As4() }

func addrString(a netflowlegacy.IPAddress) string {
	return netip.AddrFrom4([4]byte{byte(a >> 24), byte(a >> 16), byte(a >> 8), byte(a)}).String()
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

func TestExpireSendsOneRecordWithExactFields(t *testing.T) {
	e, c, clk := newTest(t, Config{EngineType: 3, EngineID: 9})
	k := FlowKey{InPort: 5, Src: ip4("10.0.0.1"), Dst: ip4("10.0.0.2"), Proto: 6, TOS: 0x2b, SrcPort: 1234, DstPort: 80}
	clk.Advance(1500 * time.Millisecond)
	e.Account(k, 7, 3, 180, 0x12, clk.Now())
	clk.Advance(2 * time.Second)
	e.Account(k, 7, 2, 120, 0x01, clk.Now())
	e.Expire(k)
	e.Run()
	p := decodeV5(t, c.Wait(t, 1)[0])
	if p.Version != 5 || p.Count != 1 || p.EngineType != 3 || p.EngineId != 9 || p.SamplingInterval != 0 {
		t.Fatalf("header %+v", p)
	}
	if p.SysUptime != 3500 || p.FlowSequence != 0 {
		t.Errorf("uptime %d seq %d, want 3500 0", p.SysUptime, p.FlowSequence)
	}
	if want := clk.Now(); p.UnixSecs != uint32(want.Unix()) || p.UnixNSecs != uint32(want.Nanosecond()) {
		t.Errorf("unix time %d.%09d, want %v", p.UnixSecs, p.UnixNSecs, want)
	}
	r := p.Records[0]
	if addrString(r.SrcAddr) != "10.0.0.1" || addrString(r.DstAddr) != "10.0.0.2" || r.NextHop != 0 {
		t.Errorf("addresses %s %s %d", addrString(r.SrcAddr), addrString(r.DstAddr), r.NextHop)
	}
	if r.Input != 5 || r.Output != 7 || r.DPkts != 5 || r.DOctets != 300 {
		t.Errorf("in %d out %d pkts %d bytes %d", r.Input, r.Output, r.DPkts, r.DOctets)
	}
	if r.First != 1500 || r.Last != 3500 {
		t.Errorf("first %d last %d, want 1500 3500", r.First, r.Last)
	}
	if r.SrcPort != 1234 || r.DstPort != 80 || r.Proto != 6 || r.Tos != 0x28 || r.TCPFlags != 0x13 {
		t.Errorf("ports %d %d proto %d tos %#x flags %#x", r.SrcPort, r.DstPort, r.Proto, r.Tos, r.TCPFlags)
	}
	// The flow is forgotten: another Expire sends nothing.
	e.Expire(k)
	e.Run()
	c.Quiet(t, 1)
}

func TestICMPTypeAndCodeGoInDstPort(t *testing.T) {
	e, c, clk := newTest(t, Config{})
	k := FlowKey{Src: ip4("1.1.1.1"), Dst: ip4("2.2.2.2"), Proto: 1, SrcPort: 8, DstPort: 3}
	e.Account(k, OutputDrop, 1, 84, 0, clk.Now())
	e.Flush()
	r := decodeV5(t, c.Wait(t, 1)[0]).Records[0]
	if r.SrcPort != 0 || r.DstPort != 8<<8|3 || r.Output != OutputDrop {
		t.Fatalf("src %d dst %#x out %#x", r.SrcPort, r.DstPort, r.Output)
	}
}

func TestAddIDToInterfacePutsEngineIDInTopBits(t *testing.T) {
	e, c, clk := newTest(t, Config{EngineID: 0x85, AddIDToInterface: true})
	k := FlowKey{InPort: 0x3ff, Src: ip4("1.1.1.1"), Dst: ip4("2.2.2.2"), Proto: 17}
	e.Account(k, 0x201, 1, 100, 0, clk.Now())
	e.Flush()
	r := decodeV5(t, c.Wait(t, 1)[0]).Records[0]
	if r.Input != 0x05<<9|0x1ff || r.Output != 0x05<<9|0x001 {
		t.Fatalf("input %#x output %#x", r.Input, r.Output)
	}
}

func TestThirtyRecordsPerMessageAndFlowSequence(t *testing.T) {
	e, c, clk := newTest(t, Config{})
	for i := range 75 {
		k := FlowKey{InPort: uint16(i + 1), Src: ip4("10.0.0.1"), Dst: ip4("10.0.0.2"), Proto: 17, SrcPort: uint16(i)}
		e.Account(k, 1, 1, 100, 0, clk.Now())
	}
	e.Flush()
	msgs := c.Wait(t, 3)
	c.Quiet(t, 3)
	var total int
	seen := map[uint16]bool{}
	var counts []uint16
	for _, m := range msgs {
		p := decodeV5(t, m)
		total += int(p.Count)
		counts = append(counts, p.Count)
		// Open vSwitch's flow_sequence: number of the message's last
		// record, counted from 0.
		if want := uint32(total - 1); p.FlowSequence != want {
			t.Errorf("flow_sequence %d, want %d", p.FlowSequence, want)
		}
		for _, r := range p.Records {
			seen[r.Input] = true
		}
	}
	if total != 75 || len(seen) != 75 || counts[0] != 30 || counts[1] != 30 || counts[2] != 15 {
		t.Fatalf("counts %v, %d distinct flows", counts, len(seen))
	}
}

func TestActiveTimeoutExportsRunningFlows(t *testing.T) {
	e, c, clk := newTest(t, Config{ActiveTimeout: 10 * time.Second})
	k := FlowKey{Src: ip4("1.1.1.1"), Dst: ip4("2.2.2.2"), Proto: 17}
	e.Account(k, 1, 10, 1000, 0, clk.Now())
	clk.Advance(5 * time.Second)
	e.Run()
	c.Quiet(t, 0)
	clk.Advance(6 * time.Second)
	e.Account(k, 1, 1, 100, 0, clk.Now())
	e.Run() // expires into the pending message
	e.Run() // sends it
	r := decodeV5(t, c.Wait(t, 1)[0]).Records[0]
	if r.DPkts != 11 || r.DOctets != 1100 {
		t.Fatalf("pkts %d bytes %d", r.DPkts, r.DOctets)
	}
	// Counters restart after an export; no packets, no record.
	clk.Advance(11 * time.Second)
	e.Run()
	e.Run()
	c.Quiet(t, 1)
}

func TestOutputChangeExportsOldOutputFirst(t *testing.T) {
	e, c, clk := newTest(t, Config{})
	k := FlowKey{Src: ip4("1.1.1.1"), Dst: ip4("2.2.2.2"), Proto: 17}
	e.Account(k, 1, 2, 200, 0, clk.Now())
	e.Account(k, 2, 3, 300, 0, clk.Now())
	e.Flush()
	p := decodeV5(t, c.Wait(t, 1)[0])
	if len(p.Records) != 2 || p.Records[0].Output != 1 || p.Records[0].DPkts != 2 ||
		p.Records[1].Output != 2 || p.Records[1].DPkts != 3 {
		t.Fatalf("records %+v", p.Records)
	}
}

func TestCountersOver32BitsAreSplit(t *testing.T) {
	e, c, clk := newTest(t, Config{})
	k := FlowKey{Src: ip4("1.1.1.1"), Dst: ip4("2.2.2.2"), Proto: 17}
	const bytes = 3*(1<<32) + 12345
	e.Account(k, 1, 3000000, bytes, 0, clk.Now())
	e.Flush()
	p := decodeV5(t, c.Wait(t, 1)[0])
	var pk, by uint64
	for _, r := range p.Records {
		pk += uint64(r.DPkts)
		by += uint64(r.DOctets)
	}
	if len(p.Records) != 4 || pk != 3000000 || by != bytes {
		t.Fatalf("%d records, %d packets, %d bytes", len(p.Records), pk, by)
	}
}

func TestPortIsMandatory(t *testing.T) {
	if _, err := New(Config{Targets: []string{"127.0.0.1"}}, nil); err == nil {
		t.Fatal("New accepted a target without port")
	}
	c := exporttest.NewCollector(t)
	e, err := New(Config{Targets: []string{"127.0.0.1", c.Addr()}}, nil)
	if err == nil || e == nil {
		t.Fatalf("New with one bad target: %v, %v", e, err)
	}
	e.Close()
}

func TestConcurrentAccountAndRun(t *testing.T) {
	e, c, clk := newTest(t, Config{ActiveTimeout: time.Second})
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 500 {
				k := FlowKey{InPort: uint16(g), Src: ip4("1.1.1.1"), Dst: ip4("2.2.2.2"), Proto: 17, SrcPort: uint16(i % 50)}
				e.Account(k, 1, 1, 64, 0, clk.Now())
			}
		}()
	}
	for range 20 {
		clk.Advance(300 * time.Millisecond)
		e.Run()
	}
	for range 4 {
		<-done
	}
	e.Flush()
	var pkts uint64
	deadline := time.Now().Add(5 * time.Second)
	for pkts < 2000 && time.Now().Before(deadline) {
		pkts = 0
		for _, m := range c.Msgs() {
			p := decodeV5(t, m)
			for _, r := range p.Records {
				pkts += uint64(r.DPkts)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if pkts != 2000 {
		t.Fatalf("exported %d packets, want 2000", pkts)
	}
}

func TestAccountDoesNotAllocateForKnownFlow(t *testing.T) {
	e, _, clk := newTest(t, Config{})
	k := FlowKey{Src: ip4("1.1.1.1"), Dst: ip4("2.2.2.2"), Proto: 17}
	now := clk.Now()
	e.Account(k, 1, 1, 64, 0, now)
	if n := testing.AllocsPerRun(1000, func() { e.Account(k, 1, 1, 64, 0x10, now) }); n != 0 {
		t.Fatalf("Account allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { e.Expire(k); e.Account(k, 1, 1, 64, 0, now); e.Run() }); n != 0 {
		t.Fatalf("Expire/Account/Run allocates %v times", n)
	}
}

func BenchmarkAccount(b *testing.B) {
	c := exporttest.NewSinkCollector(b)
	e, err := New(Config{Targets: []string{c.Addr()}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	keys := make([]FlowKey, 1024)
	for i := range keys {
		keys[i] = FlowKey{InPort: 1, Src: ip4("10.0.0.1"), Dst: ip4("10.0.0.2"), Proto: 6, SrcPort: uint16(i), DstPort: 80}
	}
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		e.Account(keys[i&1023], 2, 1, 1500, 0x10, now)
	}
}

func TestOddStatisticsSendNothingAndDoNotPanic(t *testing.T) {
	e, c, _ := newTest(t, Config{})
	var zero FlowKey
	e.Account(zero, 0, 0, 0, 0, time.Time{})                  // no packets
	e.Account(FlowKey{Proto: 1}, 1, 1, 1<<40, 0, time.Time{}) // impossible byte count
	e.Expire(FlowKey{Proto: 99})                              // unknown flow
	e.Flush()
	e.Run()
	c.Quiet(t, 0)
}

func TestReconfigureKeepsFlowsAndSequence(t *testing.T) {
	e, c, clk := newTest(t, Config{})
	k := FlowKey{Src: ip4("1.1.1.1"), Dst: ip4("2.2.2.2"), Proto: 17}
	e.Account(k, 1, 1, 64, 0, clk.Now())
	e.Flush()
	c.Wait(t, 1)
	c2 := exporttest.NewCollector(t)
	if err := e.Reconfigure(Config{Targets: []string{c2.Addr()}, EngineID: 4}); err != nil {
		t.Fatal(err)
	}
	e.Account(k, 1, 2, 128, 0, clk.Now())
	e.Flush()
	p := decodeV5(t, c2.Wait(t, 1)[0])
	if p.FlowSequence != 1 || p.EngineId != 4 || p.Records[0].DPkts != 2 {
		t.Fatalf("after reconfigure: %+v", p)
	}
	c.Quiet(t, 1)
}
