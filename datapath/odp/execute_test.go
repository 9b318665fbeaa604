package odp_test

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/odp/odptest"
	"github.com/gvs-project/gvs/datapath/packet"
)

// harness runs action lists over batches built from frames and checks
// that no packet leaks: after Execute every pool packet is back.
type harness struct {
	t    testing.TB
	pool *packet.Pool
	rec  *odptest.Recorder
	ctx  *odp.Context
}

const poolSize = 256

func newHarness(t testing.TB) *harness {
	h := &harness{t: t, pool: packet.NewPool(poolSize), rec: &odptest.Recorder{}}
	h.ctx = odp.NewContext(h.pool, h.rec, 42)
	return h
}

// batch builds a batch of pool packets holding frames, with offsets set
// by flow extraction.
func (h *harness) batch(frames ...[]byte) *packet.Batch {
	var b packet.Batch
	var k flow.Key
	for _, f := range frames {
		p := h.pool.Get()
		p.SetData(f)
		flow.Extract(p, &k)
		b.Add(p)
	}
	return &b
}

func (h *harness) run(acts string, b *packet.Batch) {
	h.t.Helper()
	a, err := odp.ParseActions(acts)
	if err != nil {
		h.t.Fatalf("ParseActions(%q): %v", acts, err)
	}
	odp.Execute(h.ctx, b, a)
	if b.N != 0 {
		h.t.Fatalf("%s: batch not empty after Execute (%d)", acts, b.N)
	}
	if h.pool.Free() != poolSize || h.pool.Allocated != poolSize {
		h.t.Fatalf("%s: pool has %d free, %d allocated; want %d, %d (a packet leaked or was double-freed)",
			acts, h.pool.Free(), h.pool.Allocated, poolSize, poolSize)
	}
}

func (h *harness) ops(want ...string) {
	h.t.Helper()
	if got := h.rec.Ops(); !slices.Equal(got, want) {
		h.t.Fatalf("calls %v, want %v", got, want)
	}
}

func ttl(frame []byte) uint8 { return frame[14+8] }

func TestOutputNotLastSendsCopies(t *testing.T) {
	h := newHarness(t)
	b := h.batch(tcpv4(t), tcpv4(t))
	orig := slices.Clone(b.Slice())
	h.run("set(ipv4(ttl=5)),1,set(ipv4(ttl=6)),2", b)
	h.ops("output:1x2", "output:2x2")
	c1, c2 := h.rec.Calls[0], h.rec.Calls[1]
	if ttl(c1.Frames[0]) != 5 || ttl(c2.Frames[0]) != 6 {
		t.Fatalf("ttl seen by output 1: %d, output 2: %d; want 5, 6", ttl(c1.Frames[0]), ttl(c2.Frames[0]))
	}
	for i := range orig {
		if c1.Ptrs[i] == orig[i] {
			t.Error("a non-final output got the original packet")
		}
		if c2.Ptrs[i] != orig[i] {
			t.Error("the final output did not steal the original packet")
		}
	}
}

func TestPacketsLeftAtEndAreDropped(t *testing.T) {
	h := newHarness(t)
	h.run("set(ipv4(ttl=5))", h.batch(tcpv4(t), tcpv4(t), tcpv4(t)))
	h.ops()
	if h.ctx.Dropped != 3 {
		t.Fatalf("Dropped = %d, want 3", h.ctx.Dropped)
	}
	h.run("", h.batch(tcpv4(t)))
	if h.ctx.Dropped != 4 {
		t.Fatalf("empty list: Dropped = %d, want 4", h.ctx.Dropped)
	}
}

func TestExplicitDropStopsTheList(t *testing.T) {
	h := newHarness(t)
	h.run("1,drop,2", h.batch(tcpv4(t)))
	h.ops("output:1x1")
}

func TestCloneRunsOnCopies(t *testing.T) {
	h := newHarness(t)
	h.run("clone(set(ipv4(ttl=1)),1),2,clone(set(ipv4(ttl=3)),3)", h.batch(tcpv4(t)))
	h.ops("output:1x1", "output:2x1", "output:3x1")
	if a, b, c := ttl(h.rec.Calls[0].Frames[0]), ttl(h.rec.Calls[1].Frames[0]), ttl(h.rec.Calls[2].Frames[0]); a != 1 || b != 64 || c != 3 {
		t.Fatalf("ttls %d %d %d, want 1 64 3", a, b, c)
	}
}

func TestCloneAsLastActionDropsLeftovers(t *testing.T) {
	h := newHarness(t)
	h.run("clone(set(ipv4(ttl=1)))", h.batch(tcpv4(t)))
	h.ops()
}

func TestSampleZeroAndHundredPercent(t *testing.T) {
	h := newHarness(t)
	h.run("sample(sample=0%,actions(1)),2", h.batch(tcpv4(t), tcpv4(t)))
	h.ops("output:2x2")
	h.rec.Calls = nil
	h.run("sample(sample=100%,actions(1)),2", h.batch(tcpv4(t), tcpv4(t)))
	h.ops("output:1x2", "output:2x2")
	h.rec.Calls = nil
	h.run("2,sample(sample=100%,actions(1))", h.batch(tcpv4(t)))
	h.ops("output:2x1", "output:1x1")
}

func TestSampleFiftyPercentIsRoughlyHalf(t *testing.T) {
	h := newHarness(t)
	sampled := 0
	for range 100 {
		frames := make([][]byte, packet.BatchSize)
		for i := range frames {
			frames[i] = tcpv4(t)
		}
		h.rec.Calls = nil
		h.run("sample(sample=50%,actions(1))", h.batch(frames...))
		for _, c := range h.rec.Calls {
			sampled += len(c.Frames)
		}
	}
	if total := 100 * packet.BatchSize; sampled < total*45/100 || sampled > total*55/100 {
		t.Fatalf("sampled %d of %d at 50%%", sampled, total)
	}
}

func TestCheckPktLenSplitsByLength(t *testing.T) {
	h := newHarness(t)
	small, big := tcpv4(t), append(tcpv4(t), make([]byte, 100)...)
	h.run("check_pkt_len(size=100,gt(1),le(2)),3", h.batch(small, big, small))
	h.ops("output:1x1", "output:2x2", "output:3x3")
	h.rec.Calls = nil
	h.run("check_pkt_len(size=100,gt(set(ipv4(ttl=9)),1),le(2))", h.batch(big, small))
	h.ops("output:1x1", "output:2x1")
	if ttl(h.rec.Calls[0].Frames[0]) != 9 {
		t.Fatal("gt branch actions did not run")
	}
}

func TestTruncAppliesToNextOutputOnly(t *testing.T) {
	h := newHarness(t)
	n := len(tcpv4(t))
	h.run("trunc(20),1,2,trunc(30),3", h.batch(tcpv4(t)))
	h.ops("output:1x1", "output:2x1", "output:3x1")
	if a, b, c := len(h.rec.Calls[0].Frames[0]), len(h.rec.Calls[1].Frames[0]), len(h.rec.Calls[2].Frames[0]); a != 20 || b != n || c != 30 {
		t.Fatalf("lengths %d %d %d, want 20 %d 30", a, b, c, n)
	}
}

func TestRecircSetsIDAndCopiesUnlessLast(t *testing.T) {
	h := newHarness(t)
	h.run("recirc(0x7),ct(zone=3),recirc(0x8)", h.batch(tcpv4(t)))
	h.ops("recirc:7x1", "ct:3x1", "recirc:8x1")
	if h.rec.Calls[0].Md[0].RecircID != 7 || h.rec.Calls[2].Md[0].RecircID != 8 {
		t.Fatal("recirc id not set in metadata")
	}
}

func TestUserspaceBorrowsAndMeterDrops(t *testing.T) {
	h := newHarness(t)
	h.rec.MeterDrop = func(id uint32, p *packet.Packet) bool { return p.Len() > 100 }
	small, big := tcpv4(t), append(tcpv4(t), make([]byte, 100)...)
	h.run("userspace(pid=9,userdata(0102030405060708)),meter(4),1", h.batch(small, big))
	h.ops("userspace:9x2", "meter:4x1", "output:1x1")
}

func TestMeterDroppingEverythingSkipsLaterActions(t *testing.T) {
	h := newHarness(t)
	h.rec.MeterDrop = func(uint32, *packet.Packet) bool { return true }
	h.run("meter(1),1", h.batch(tcpv4(t)))
	h.ops("meter:1x0")
}

func TestDatapathHooksSeeTunnelAndMACLearnActions(t *testing.T) {
	h := newHarness(t)
	h.run("mac_learn(table=2),tnl_push(tnl_port(4789),header(size=50,type=4,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=4789,csum=0x0),vxlan(flags=0x8000000,vni=0x7b)),out_port(100)),tnl_pop(5),9", h.batch(tcpv4(t)))
	h.ops("mac_learn:2x1", "tnl_push:0x1", "tnl_pop:5x1", "output:9x1")
}

func TestCtClearForgetsConntrackState(t *testing.T) {
	h := newHarness(t)
	b := h.batch(tcpv4(t))
	b.Pkts[0].Md.CtState, b.Pkts[0].Md.CtZone, b.Pkts[0].Md.CtMark, b.Pkts[0].Md.CtLabel[3] = 0x21, 5, 9, 1
	b.Pkts[0].Md.PktMark = 3
	h.run("ct_clear,1", b)
	md := h.rec.Calls[0].Md[0]
	if md.CtState != 0 || md.CtZone != 0 || md.CtMark != 0 || md.CtLabel != [16]byte{} || md.PktMark != 3 {
		t.Fatalf("metadata after ct_clear: %+v", md)
	}
}

func TestPushPopVLANByteExact(t *testing.T) {
	untagged := tcpv4(t)
	tagged := build(t, eth(layers.EthernetTypeDot1Q),
		&layers.Dot1Q{VLANIdentifier: 10, Priority: 5, Type: layers.EthernetTypeIPv4},
		ipv4(layers.IPProtocolTCP), &layers.TCP{SrcPort: 1234, DstPort: 80, Seq: 1, SYN: true, Window: 1000}, payload)
	h := newHarness(t)
	h.run("push_vlan(vid=10,pcp=5),1", h.batch(untagged))
	if got := h.rec.Calls[0].Frames[0]; !bytes.Equal(got, tagged) {
		t.Fatalf("push_vlan:\n got % x\nwant % x", got, tagged)
	}
	h.rec.Calls = nil
	h.run("pop_vlan,1", h.batch(tagged))
	if got := h.rec.Calls[0].Frames[0]; !bytes.Equal(got, untagged) {
		t.Fatalf("pop_vlan:\n got % x\nwant % x", got, untagged)
	}
	h.rec.Calls = nil
	h.run("pop_vlan,1", h.batch(untagged))
	if got := h.rec.Calls[0].Frames[0]; !bytes.Equal(got, untagged) {
		t.Fatal("pop_vlan changed an untagged frame")
	}
}

func TestPushVLANQinQAndOffsetsFollow(t *testing.T) {
	h := newHarness(t)
	h.run("push_vlan(vid=100,pcp=0),push_vlan(tpid=0x88a8,vid=200,pcp=1,cfi=0),set(ipv4(ttl=9)),1", h.batch(tcpv4(t)))
	got := h.rec.Calls[0].Frames[0]
	want := []byte{0x88, 0xa8, 0x20, 0xc8, 0x81, 0x00, 0x00, 0x64, 0x08, 0x00}
	if !bytes.Equal(got[12:22], want) {
		t.Fatalf("tags % x, want % x", got[12:22], want)
	}
	if got[22+8] != 9 {
		t.Fatalf("set(ipv4) after push_vlan wrote ttl %d at the shifted offset, want 9", got[22+8])
	}
	verify(t, got)
}

func TestHashSymmetricAndValid(t *testing.T) {
	h := newHarness(t)
	fwd := tcpv4(t)
	rev := build(t, eth(layers.EthernetTypeIPv4), &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: ip4B, DstIP: ip4A},
		&layers.TCP{SrcPort: 80, DstPort: 1234, Seq: 1, SYN: true, Window: 1000}, payload)
	h.run("hash(sym_l4(0)),1,hash(l4(0)),2,hash(l4(1)),3", h.batch(fwd, rev))
	s, l, l1 := h.rec.Calls[0].Md, h.rec.Calls[1].Md, h.rec.Calls[2].Md
	if s[0].DPHash != s[1].DPHash {
		t.Errorf("sym_l4: %#x != %#x", s[0].DPHash, s[1].DPHash)
	}
	if l[0].DPHash == l[1].DPHash {
		t.Errorf("l4 hashed both directions to %#x", l[0].DPHash)
	}
	if l[0].DPHash == l1[0].DPHash {
		t.Errorf("basis did not change the hash")
	}
}

func TestEmptyBatchCallsNothing(t *testing.T) {
	h := newHarness(t)
	h.run("1", &packet.Batch{})
	h.ops()
}

func TestDeepProgrammaticNestingDoesNotPanic(t *testing.T) {
	acts := odp.Actions{odp.Output(1)}
	for range odp.MaxDepth + 3 {
		acts = odp.Actions{odp.Clone(acts), odp.Output(2)}
	}
	h := newHarness(t)
	odp.Execute(h.ctx, h.batch(tcpv4(t)), acts)
	if h.pool.Free() != poolSize {
		t.Fatalf("pool has %d free, want %d", h.pool.Free(), poolSize)
	}
}

func TestExecuteAllocatesNothing(t *testing.T) {
	for _, acts := range []string{
		"set(ipv4(dst=10.1.1.1)),1",
		"set(eth(src=00:00:00:00:00:01)),set(tcp(dst=8080)),1,push_vlan(vid=10,pcp=0),2",
		"clone(set(ipv4(ttl=1)),1),sample(sample=50%,actions(2)),check_pkt_len(size=60,gt(3),le(4)),hash(l4(0)),trunc(40),5,recirc(0x1)",
	} {
		h := newHarness(t)
		h.rec.Discard = true
		a, err := odp.ParseActions(acts)
		if err != nil {
			t.Fatal(err)
		}
		frame := tcpv4(t)
		var b packet.Batch
		allocs := testing.AllocsPerRun(100, func() {
			refill(h.pool, &b, frame)
			odp.Execute(h.ctx, &b, a)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocs per run", acts, allocs)
		}
	}
}

// refill fills b with BatchSize pool packets holding frame, with the
// offsets an Ethernet/IPv4/TCP extraction would set.
func refill(pool *packet.Pool, b *packet.Batch, frame []byte) {
	for b.N < packet.BatchSize {
		p := pool.Get()
		p.SetData(frame)
		p.L3, p.L4 = 14, 34
		b.Add(p)
	}
}

func benchExecute(b *testing.B, acts string) {
	a, err := odp.ParseActions(acts)
	if err != nil {
		b.Fatal(err)
	}
	pool := packet.NewPool(poolSize)
	ctx := odp.NewContext(pool, &odptest.Recorder{Discard: true}, 1)
	frame := tcpv4(b)
	var batch packet.Batch
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		refill(pool, &batch, frame)
		odp.Execute(ctx, &batch, a)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*packet.BatchSize), "ns/packet")
}

// BenchmarkExecute runs a 32-packet batch through an action list. The
// time includes refilling the batch from the pool (a 66-byte copy per
// packet), which a real receive path does too.
func BenchmarkExecute(b *testing.B) {
	b.Run("drop", func(b *testing.B) { benchExecute(b, "drop") }) // baseline: refill + free
	b.Run("output", func(b *testing.B) { benchExecute(b, "1") })
	b.Run("set_ipv4_dst+output", func(b *testing.B) { benchExecute(b, "set(ipv4(dst=10.1.1.1)),1") })
	b.Run("output+output", func(b *testing.B) { benchExecute(b, "1,2") })
	b.Run("push_vlan+output", func(b *testing.B) { benchExecute(b, "push_vlan(vid=10,pcp=0),1") })
	b.Run("push_mpls+output", func(b *testing.B) { benchExecute(b, "push_mpls(label=1,tc=0,ttl=64,bos=1,eth_type=0x8847),1") })
	b.Run("push_mpls+set_mpls+pop_mpls+output", func(b *testing.B) {
		benchExecute(b, "push_mpls(label=1,tc=0,ttl=64,bos=1,eth_type=0x8847),set(mpls(label=2,tc=0,ttl=63,bos=1)),pop_mpls(eth_type=0x800),1")
	})
}

func TestSampleProbabilityMatchesOVS(t *testing.T) {
	for _, tc := range []struct {
		pct  float64
		want uint32
	}{{0, 0}, {100, math.MaxUint32}, {50, 1 << 31}, {-1, 0}, {200, math.MaxUint32}} {
		if got := odp.SampleProbability(tc.pct); got != tc.want {
			t.Errorf("SampleProbability(%v) = %#x, want %#x", tc.pct, got, tc.want)
		}
	}
}

// recircDP re-enters Execute from Recirc, as a datapath that handles
// recirculation synchronously does.
type recircDP struct {
	*odptest.Recorder
	acts odp.Actions
}

func (d *recircDP) Recirc(ctx *odp.Context, id uint32, b *packet.Batch) {
	d.Recorder.Recirc(ctx, id, &packet.Batch{}) // record the call only
	odp.Execute(ctx, b, d.acts)
}

func TestExecuteReenteredFromRecirc(t *testing.T) {
	h := newHarness(t)
	inner, err := odp.ParseActions("clone(set(ipv4(ttl=3)),3),4")
	if err != nil {
		t.Fatal(err)
	}
	h.ctx.DP = &recircDP{Recorder: h.rec, acts: inner}
	h.run("clone(set(ipv4(ttl=1)),recirc(0x1)),2", h.batch(tcpv4(t), tcpv4(t)))
	h.ops("recirc:1x0", "output:3x2", "output:4x2", "output:2x2")
	if a, b, c := ttl(h.rec.Calls[1].Frames[0]), ttl(h.rec.Calls[2].Frames[0]), ttl(h.rec.Calls[3].Frames[0]); a != 3 || b != 1 || c != 64 {
		t.Fatalf("ttls %d %d %d, want 3 1 64", a, b, c)
	}
}

type countAdder struct{ n uint64 }

func (c *countAdder) Add(n uint64) { c.n += n }

func TestExplicitDropCountsItsPacketsByReason(t *testing.T) {
	h := newHarness(t)
	var pipeline, resubmits countAdder
	var counters [odp.NumDropReasons]odp.Counter
	counters[odp.DropPipeline], counters[odp.DropTooManyResubmits] = &pipeline, &resubmits
	h.ctx.DropCounters = &counters
	b := h.batch(tcpv4(t), tcpv4(t))
	odp.Execute(h.ctx, b, odp.Actions{odp.DropFor(odp.DropTooManyResubmits)})
	h.run("drop", h.batch(tcpv4(t)))
	h.run("", h.batch(tcpv4(t))) // an empty list drops without counting
	if pipeline.n != 1 || resubmits.n != 2 {
		t.Fatalf("pipeline %d resubmits %d, want 1 and 2", pipeline.n, resubmits.n)
	}
}
