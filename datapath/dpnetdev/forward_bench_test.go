package dpnetdev

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/netdev/dummy"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

// udpFrame returns a 64-byte Ethernet/IPv4/UDP frame (60 bytes without
// FCS, as a NIC delivers it) for flow number i: distinct 5-tuples.
func udpFrame(i int) []byte {
	f := make([]byte, 60)
	copy(f[0:6], []byte{0x50, 0x54, 0, 0, 0, 2})
	copy(f[6:12], []byte{0x50, 0x54, 0, 0, 0, 1})
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], 46)
	ip[8] = 64
	ip[9] = 17
	binary.BigEndian.PutUint32(ip[12:], 0x0a000000|uint32(i>>16)) // 10.0.x.x
	binary.BigEndian.PutUint32(ip[16:], 0x0b000000|uint32(i&0xffff))
	binary.BigEndian.PutUint16(ip[10:], packet.Checksum(ip[:20]))
	udp := ip[20:]
	binary.BigEndian.PutUint16(udp[0:], uint16(1024+i%50000))
	binary.BigEndian.PutUint16(udp[2:], uint16(2000+i/50000))
	binary.BigEndian.PutUint16(udp[4:], 26)
	return f
}

// exactMask is the mask of a megaflow per 5-tuple (what an OpenFlow
// table matching on the 5-tuple un-wildcards).
func exactMask() flow.Mask {
	var m flow.Mask
	m.RecircID = ^uint32(0)
	m.InPort = ^uint32(0)
	m.EthType = 0xffff
	m.NwSrc, m.NwDst = ^uint32(0), ^uint32(0)
	m.NwProto = 0xff
	m.NwFrag = 0xff
	m.TpSrc, m.TpDst = 0xffff, 0xffff
	return m
}

// wildMask is the mask of one megaflow for all the traffic.
func wildMask() flow.Mask {
	var m flow.Mask
	m.RecircID = ^uint32(0)
	m.InPort = ^uint32(0)
	return m
}

type benchSetup struct {
	dp      *Datapath
	frames  [][]byte
	in, out *dummy.Device
}

func newBenchSetup(b *testing.B, nflows int, perFlow bool) *benchSetup {
	cfg := dpif.DefaultConfig()
	cfg.FlowLimit = nflows + 16
	dp := New("bench", cfg)
	in, err := dummy.New(dummy.Config{Name: "p1"})
	if err != nil {
		b.Fatal(err)
	}
	out, err := dummy.New(dummy.Config{Name: "p2"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := dp.AddPort(in, 1); err != nil {
		b.Fatal(err)
	}
	if _, err := dp.AddPort(out, 2); err != nil {
		b.Fatal(err)
	}
	s := &benchSetup{dp: dp, in: in, out: out, frames: make([][]byte, nflows)}
	acts := odp.Actions{odp.Output(2)}
	var k flow.Key
	for i := range s.frames {
		s.frames[i] = udpFrame(i)
	}
	if !perFlow {
		m := flow.Match{Mask: wildMask()}
		m.Key.InPort = 1
		if err := dp.FlowPut(&dpif.FlowPut{Match: m, Actions: acts, Flags: dpif.PutCreate}); err != nil {
			b.Fatal(err)
		}
		return s
	}
	for i := range s.frames {
		p := packet.FromBytes(s.frames[i])
		p.Md.InPort = 1
		flow.Extract(p, &k)
		m := flow.Match{Key: k, Mask: exactMask()}
		if err := dp.FlowPut(&dpif.FlowPut{Match: m, Actions: acts, Flags: dpif.PutCreate}); err != nil {
			b.Fatalf("flow %d: %v", i, err)
		}
	}
	return s
}

// BenchmarkForward measures parse -> EMC/megaflow -> output on in-memory
// ports, 64-byte UDP frames, one worker (one core). Copying each frame
// into a pooled buffer stands in for the NIC's receive.
func BenchmarkForward(b *testing.B) {
	if thp, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err == nil {
		b.Logf("transparent huge pages: %s", strings.TrimSpace(string(thp)))
	}
	for _, mode := range []struct {
		name    string
		perFlow bool
	}{{"megaflow=wildcard", false}, {"megaflow=per-flow", true}} {
		for _, n := range []int{1, 256, 10000, 100000, 1000000} {
			b.Run(fmt.Sprintf("%s/flows=%d", mode.name, n), func(b *testing.B) {
				s := newBenchSetup(b, n, mode.perFlow)
				pool := s.dp.WorkerPool(0)
				var batch packet.Batch
				next := 0
				run := func(pkts int) {
					for sent := 0; sent < pkts; {
						batch.N = 0
						for batch.N < packet.BatchSize && sent < pkts {
							p := pool.Get()
							p.SetData(s.frames[next])
							p.Md.InPort = 1
							batch.Add(p)
							next++
							if next == len(s.frames) {
								next = 0
							}
							sent++
						}
						s.dp.ProcessBatch(0, &batch)
					}
				}
				run(2 * len(s.frames)) // warm the caches
				runtime.GC()           // measure steady state, not set-up garbage
				before := s.out.Stats().TxPackets
				b.ReportAllocs()
				b.ResetTimer()
				run(b.N)
				b.StopTimer()
				if got := s.out.Stats().TxPackets - before; got != uint64(b.N) {
					b.Fatalf("forwarded %d of %d packets (stats %+v)", got, b.N, s.dp.Stats())
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mpps")
			})
		}
	}
}
