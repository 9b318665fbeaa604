package dpnetdev

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/l2fib"
	"github.com/gvs-project/gvs/datapath/netdev/dummy"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

// macScenario is issue 6's topology through the whole datapath on
// in-memory ports: bridge A joins guest port 1 and physical port 2,
// bridge B joins physical port 3 and guest port 4, each through one
// NORMAL megaflow per input port (mac_learn on the bridge's table). The
// "wire" copies what port 2 sends into port 3's input and back. Flow i is
// guest MAC x_i behind A talking to y_i behind B: 4N entries in all.
type macScenario struct {
	n        int
	dp       *Datapath
	ta, tb   *l2fib.Table
	ports    [5]*dummy.Device
	tmpl     []byte
	wire     [packet.BatchSize][]byte // frames in flight between ports 2 and 3
	nwire    int
	batch    packet.Batch
	x        uint64
	received [5]uint64 // frames out of each guest port (1, 4)
}

func newMACScenario(tb testing.TB, n int) *macScenario {
	tb.Helper()
	cfg := dpif.DefaultConfig()
	s := &macScenario{n: n, dp: New("macbench", cfg), x: 0x9e3779b97f4a7c15}
	tb.Cleanup(func() { s.dp.Close() })
	for no := 1; no <= 4; no++ {
		d, err := dummy.New(dummy.Config{Name: fmt.Sprintf("p%d", no)})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := s.dp.AddPort(d, uint32(no)); err != nil {
			tb.Fatal(err)
		}
		s.ports[no] = d
	}
	for i := range s.wire {
		s.wire[i] = make([]byte, 0, 2048)
	}
	toWire := func(f []byte) {
		if s.nwire < len(s.wire) {
			s.wire[s.nwire] = append(s.wire[s.nwire][:0], f...)
			s.nwire++
		}
	}
	s.ports[2].OnTransmit(toWire)
	s.ports[3].OnTransmit(toWire)
	s.ports[1].OnTransmit(func([]byte) { s.received[1]++ })
	s.ports[4].OnTransmit(func([]byte) { s.received[4]++ })
	var err error
	if s.ta, err = l2fib.New(l2fib.Config{}, time.Now()); err != nil { // default capacity holds N = 1M
		tb.Fatal(err)
	}
	if s.tb, err = l2fib.New(l2fib.Config{}, time.Now()); err != nil {
		tb.Fatal(err)
	}
	s.dp.MACTables().Set(1, s.ta)
	s.dp.MACTables().Set(2, s.tb)
	for in, act := range map[uint32]string{
		1: "mac_learn(table=1,ports(1,2))", 2: "mac_learn(table=1,ports(1,2))",
		3: "mac_learn(table=2,ports(3,4))", 4: "mac_learn(table=2,ports(3,4))",
	} {
		acts, err := odp.ParseActions(act)
		if err != nil {
			tb.Fatal(err)
		}
		m := flow.Match{Mask: wildMask()}
		m.Key.InPort = in
		if err := s.dp.FlowPut(&dpif.FlowPut{Match: m, Actions: acts, Flags: dpif.PutCreate}); err != nil {
			tb.Fatal(err)
		}
	}
	s.tmpl = udpFrame(0)
	return s
}

func scenarioMAC(side byte, i int) [6]byte {
	return [6]byte{0x02, side, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}
}

// pass sends one batch of flows first..first+31 (random flows if first
// < 0) from one side's guest port across both bridges to the other's.
func (s *macScenario) pass(first int, reverse bool) {
	pool := s.dp.WorkerPool(0)
	in, mid := uint32(1), uint32(3)
	if reverse {
		in, mid = 4, 2
	}
	s.batch.N = 0
	for k := 0; k < packet.BatchSize; k++ {
		i := first + k
		if first < 0 {
			s.x ^= s.x << 13
			s.x ^= s.x >> 7
			s.x ^= s.x << 17
			i = int(s.x % uint64(s.n))
		} else if i >= s.n {
			break
		}
		src, dst := scenarioMAC(0xa, i), scenarioMAC(0xb, i)
		if reverse {
			src, dst = dst, src
		}
		p := pool.Get()
		p.SetData(s.tmpl)
		d := p.Data()
		copy(d[0:6], dst[:])
		copy(d[6:12], src[:])
		binary.BigEndian.PutUint16(d[34:], uint16(i)) // distinct UDP ports per flow
		p.Md.InPort = in
		s.batch.Add(p)
	}
	s.dp.ProcessBatch(0, &s.batch)
	s.batch.N = 0
	for k := 0; k < s.nwire; k++ {
		p := pool.Get()
		p.SetData(s.wire[k])
		p.Md.InPort = mid
		s.batch.Add(p)
	}
	s.nwire = 0
	s.dp.ProcessBatch(0, &s.batch)
}

func (s *macScenario) warm() {
	for i := 0; i < s.n; i += packet.BatchSize {
		s.pass(i, false)
		s.pass(i, true)
	}
	s.ta.ClearStats()
	s.tb.ClearStats()
	s.received = [5]uint64{}
}

func (s *macScenario) flooded() uint64 { return s.ta.Stats().Flooded + s.tb.Stats().Flooded }

func TestMACScenarioThroughDatapathForwardsWithoutFloodingOrNewMegaflows(t *testing.T) {
	for _, n := range []int{256, 10_000} {
		s := newMACScenario(t, n)
		s.warm()
		if got := s.ta.Len() + s.tb.Len(); got != 4*n {
			t.Fatalf("N=%d: %d entries, want 4N = %d", n, got, 4*n)
		}
		const batches = 1000
		for k := 0; k < batches; k++ {
			s.pass(-1, k%2 == 1)
		}
		if f := s.flooded(); f != 0 {
			t.Errorf("N=%d: %d packets flooded in steady state", n, f)
		}
		if got := s.received[1] + s.received[4]; got != batches*packet.BatchSize {
			t.Errorf("N=%d: %d frames reached the far guest ports, want %d", n, got, batches*packet.BatchSize)
		}
		// One megaflow per input port, whatever the number of MACs.
		if got := s.dp.FlowCount(); got != 4 {
			t.Errorf("N=%d: %d megaflows, want 4", n, got)
		}
		if a := testing.AllocsPerRun(100, func() { s.pass(-1, false) }); a != 0 {
			t.Errorf("N=%d: steady state allocates %v per batch", n, a)
		}
	}
}

// BenchmarkMACScenario is issue 6's benchmark through the datapath:
// parse, megaflow lookup, mac_learn on both bridges and output on
// in-memory ports, one worker. Mpps counts packets delivered from one
// guest port to the other (each crosses both bridges).
func BenchmarkMACScenario(b *testing.B) {
	for _, n := range []int{256, 10_000, 100_000, 400_000, 1_000_000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			s := newMACScenario(b, n)
			s.warm()
			runtime.GC()
			f0 := s.flooded()
			b.ReportAllocs()
			b.ResetTimer()
			pkts := 0
			for k := 0; pkts < b.N; k++ {
				s.pass(-1, k%2 == 1)
				pkts += packet.BatchSize
			}
			b.StopTimer()
			b.ReportMetric(float64(pkts)/b.Elapsed().Seconds()/1e6, "Mpps")
			b.ReportMetric(100*float64(s.flooded()-f0)/float64(2*pkts), "flood%")
			b.ReportMetric(float64(s.ta.Len()+s.tb.Len())/float64(n), "entries/N")
			b.ReportMetric(float64(s.dp.FlowCount()), "megaflows")
		})
	}
}
