package dpnetdev

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/gvs-project/gvs/datapath/conntrack"
	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/l2fib"
	"github.com/gvs-project/gvs/datapath/netdev/dummy"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

// testSwitch is a datapath with dummy ports p1..pN as ports 1..N.
type testSwitch struct {
	dp    *Datapath
	ports []*dummy.Device // index i is port i (0 unused)
}

func newTestSwitch(t *testing.T, nports int, cfg dpif.Config) *testSwitch {
	t.Helper()
	s := &testSwitch{dp: New("test", cfg), ports: make([]*dummy.Device, nports+1)}
	for i := 1; i <= nports; i++ {
		d, err := dummy.New(dummy.Config{Name: "p" + string(rune('0'+i)), CaptureLen: 1024})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.dp.AddPort(d, uint32(i)); err != nil {
			t.Fatal(err)
		}
		s.ports[i] = d
	}
	t.Cleanup(func() {
		s.dp.Close()
		for _, d := range s.ports[1:] {
			d.Close()
		}
	})
	return s
}

// send runs frames received on port in through worker 0.
func (s *testSwitch) send(in uint32, frames ...[]byte) {
	var b packet.Batch
	pool := s.dp.WorkerPool(0)
	for _, f := range frames {
		p := pool.Get()
		p.SetData(f)
		p.Md.InPort = in
		b.Add(p)
	}
	s.dp.ProcessBatch(0, &b)
}

func putFlow(t *testing.T, dp *Datapath, m flow.Match, acts string) dpif.UFID {
	t.Helper()
	a, err := odp.ParseActions(acts)
	if err != nil {
		t.Fatalf("parse %q: %v", acts, err)
	}
	m.Normalize()
	u := dpif.UFIDFromMatch(&m)
	if err := dp.FlowPut(&dpif.FlowPut{UFID: u, Match: m, Actions: a, Flags: dpif.PutCreate}); err != nil {
		t.Fatal(err)
	}
	return u
}

func inPortMatch(port uint32) flow.Match {
	m := flow.Match{Mask: wildMask()}
	m.Key.InPort = port
	return m
}

// portHandler answers misses with "output to the other port" and a
// megaflow on in_port only, counting misses.
type portHandler struct {
	misses    atomic.Int64
	userspace atomic.Int64
	fail      bool
	install   bool
}

func (h *portHandler) Miss(u *dpif.Upcall, r *dpif.MissReply) error {
	h.misses.Add(1)
	if h.fail {
		return errors.New("refused")
	}
	out := uint32(2)
	if u.Key.InPort == 2 {
		out = 1
	}
	r.Actions = odp.Actions{odp.Output(out)}
	r.Mask = wildMask()
	r.Install = h.install
	return nil
}

func (h *portHandler) Userspace(u *dpif.Upcall) { h.userspace.Add(1) }

func TestFlowPutForwardsExactBytesAndCountsStats(t *testing.T) {
	s := newTestSwitch(t, 2, dpif.DefaultConfig())
	u := putFlow(t, s.dp, inPortMatch(1), "2")
	f1, f2 := udpFrame(1), udpFrame(2)
	s.send(1, f1, f2)
	got := s.ports[2].Captured()
	if len(got) != 2 || !bytes.Equal(got[0], f1) || !bytes.Equal(got[1], f2) {
		t.Fatalf("port 2 sent %d frames, want the 2 frames in order", len(got))
	}
	if n := len(s.ports[1].Captured()); n != 0 {
		t.Fatalf("port 1 sent %d frames, want 0", n)
	}
	fl, err := s.dp.FlowGet(u)
	if err != nil {
		t.Fatal(err)
	}
	if fl.Stats.Packets != 2 || fl.Stats.Bytes != 120 || fl.Stats.Used.IsZero() {
		t.Fatalf("flow stats = %+v, want 2 packets, 120 bytes, used set", fl.Stats)
	}
	st := s.dp.Stats()
	if st.Hit != 2 || st.Missed != 0 || st.Flows != 1 {
		t.Fatalf("datapath stats = %+v, want hit=2 missed=0 flows=1", st)
	}
}

func TestMissUpcallInstallsMegaflowUsedByLaterPackets(t *testing.T) {
	s := newTestSwitch(t, 2, dpif.DefaultConfig())
	h := &portHandler{install: true}
	s.dp.SetUpcallHandler(h)
	// Three packets of different 5-tuples in one batch: the first misses
	// and installs an in_port megaflow that covers the other two, which
	// leave after it.
	s.send(1, udpFrame(1), udpFrame(2), udpFrame(3))
	s.send(1, udpFrame(4))
	if h.misses.Load() != 1 {
		t.Fatalf("misses = %d, want 1", h.misses.Load())
	}
	if n := len(s.ports[2].Captured()); n != 4 {
		t.Fatalf("port 2 sent %d frames, want 4", n)
	}
	st := s.dp.Stats()
	if st.Missed != 1 || st.Hit != 3 || st.Flows != 1 || st.UpcallOK != 1 {
		t.Fatalf("stats = %+v, want missed=1 hit=3 flows=1 upcall_ok=1", st)
	}
	var dumped []dpif.Flow
	s.dp.FlowDump(func(f *dpif.Flow) bool { dumped = append(dumped, *f); return true })
	// The packet that missed is not the megaflow's (Open vSwitch's
	// datapaths count only the packets a flow matched).
	if len(dumped) != 1 || dumped[0].Match.Key.InPort != 1 || dumped[0].Stats.Packets != 3 {
		t.Fatalf("dump = %+v, want one in_port=1 flow with 3 packets", dumped)
	}
	if got := dumped[0].Actions.String(); got != "2" {
		t.Fatalf("dumped actions %q, want %q", got, "2")
	}
}

func TestMissWithoutHandlerIsLostAndCounted(t *testing.T) {
	s := newTestSwitch(t, 2, dpif.DefaultConfig())
	s.send(1, udpFrame(1), udpFrame(2))
	st := s.dp.Stats()
	if st.Missed != 2 || st.Lost != 2 {
		t.Fatalf("stats = %+v, want missed=2 lost=2", st)
	}
	if n := len(s.ports[2].Captured()); n != 0 {
		t.Fatalf("port 2 sent %d frames, want 0", n)
	}
}

func TestFailedUpcallDropsAndCounts(t *testing.T) {
	s := newTestSwitch(t, 2, dpif.DefaultConfig())
	s.dp.SetUpcallHandler(&portHandler{fail: true})
	s.send(1, udpFrame(1))
	if st := s.dp.Stats(); st.UpcallFail != 1 || st.Lost != 1 {
		t.Fatalf("stats = %+v, want upcall_fail=1 lost=1", st)
	}
}

func TestFlowDelStopsForwarding(t *testing.T) {
	s := newTestSwitch(t, 2, dpif.DefaultConfig())
	u := putFlow(t, s.dp, inPortMatch(1), "2")
	s.send(1, udpFrame(1))
	st, err := s.dp.FlowDel(u)
	if err != nil {
		t.Fatal(err)
	}
	if st.Packets != 1 {
		t.Fatalf("final stats %+v, want 1 packet", st)
	}
	s.send(1, udpFrame(1)) // the EMC entry must not outlive the flow
	if n := len(s.ports[2].Captured()); n != 1 {
		t.Fatalf("port 2 sent %d frames, want 1 (only before the delete)", n)
	}
	if _, err := s.dp.FlowDel(u); !errors.Is(err, dpif.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
}

func TestFlowPutModifyReplacesActions(t *testing.T) {
	s := newTestSwitch(t, 3, dpif.DefaultConfig())
	m := inPortMatch(1)
	u := putFlow(t, s.dp, m, "2")
	s.send(1, udpFrame(1))
	a3, _ := odp.ParseActions("3")
	if err := s.dp.FlowPut(&dpif.FlowPut{UFID: u, Match: m, Actions: a3, Flags: dpif.PutModify | dpif.PutZeroStats}); err != nil {
		t.Fatal(err)
	}
	s.send(1, udpFrame(1))
	if n2, n3 := len(s.ports[2].Captured()), len(s.ports[3].Captured()); n2 != 1 || n3 != 1 {
		t.Fatalf("port2=%d port3=%d frames, want 1 and 1", n2, n3)
	}
	f, _ := s.dp.FlowGet(u)
	if f.Stats.Packets != 1 {
		t.Fatalf("stats after zeroing modify = %+v, want 1 packet", f.Stats)
	}
	if err := s.dp.FlowPut(&dpif.FlowPut{UFID: u, Match: m, Actions: a3, Flags: dpif.PutCreate}); !errors.Is(err, dpif.ErrExists) {
		t.Fatalf("create over existing: %v, want ErrExists", err)
	}
}

func TestFlowLimitExecutesWithoutInstalling(t *testing.T) {
	cfg := dpif.DefaultConfig()
	cfg.FlowLimit = 1
	s := newTestSwitch(t, 2, cfg)
	h := &exactHandler{}
	s.dp.SetUpcallHandler(h)
	s.send(1, udpFrame(1))
	s.send(1, udpFrame(2)) // a second megaflow: over the limit
	s.send(1, udpFrame(2))
	if n := len(s.ports[2].Captured()); n != 3 {
		t.Fatalf("port 2 sent %d frames, want 3 (over-limit packets still forwarded)", n)
	}
	if st := s.dp.Stats(); st.Flows != 1 || st.Missed != 3 {
		t.Fatalf("stats = %+v, want flows=1 missed=3", st)
	}
}

// exactHandler installs one megaflow per 5-tuple, output to port 2.
type exactHandler struct{ misses atomic.Int64 }

func (h *exactHandler) Miss(u *dpif.Upcall, r *dpif.MissReply) error {
	h.misses.Add(1)
	r.Actions = odp.Actions{odp.Output(2)}
	r.Mask = exactMask()
	r.Install = true
	return nil
}
func (h *exactHandler) Userspace(*dpif.Upcall) {}

func TestExpireIdleRemovesOnlyIdleFlows(t *testing.T) {
	s := newTestSwitch(t, 2, dpif.DefaultConfig())
	var now atomic.Int64
	now.Store(time.Unix(1000, 0).UnixNano())
	s.dp.clock = func() time.Time { return time.Unix(0, now.Load()) }
	s.dp.SetUpcallHandler(&exactHandler{})
	s.send(1, udpFrame(1), udpFrame(2))
	now.Add(int64(5 * time.Second))
	s.send(1, udpFrame(2)) // flow 2 used again
	if n := s.dp.ExpireIdle(time.Unix(0, now.Load()).Add(6*time.Second), 10*time.Second); n != 1 {
		t.Fatalf("expired %d, want 1 (only the flow idle for 11s)", n)
	}
	if st := s.dp.Stats(); st.Flows != 1 {
		t.Fatalf("flows = %d, want 1", st.Flows)
	}
}

func TestRecircReentersPipelineWithNewRecircID(t *testing.T) {
	s := newTestSwitch(t, 2, dpif.DefaultConfig())
	putFlow(t, s.dp, inPortMatch(1), "recirc(0x5)")
	m := inPortMatch(1)
	m.Key.RecircID = 5
	putFlow(t, s.dp, m, "2")
	s.send(1, udpFrame(1))
	if n := len(s.ports[2].Captured()); n != 1 {
		t.Fatalf("port 2 sent %d frames, want 1", n)
	}
	if st := s.dp.Stats(); st.Recirc != 1 || st.Hit != 2 {
		t.Fatalf("stats = %+v, want recirc=1 hit=2", st)
	}
}

func TestRecircLoopIsBoundedAndCounted(t *testing.T) {
	s := newTestSwitch(t, 2, dpif.DefaultConfig())
	putFlow(t, s.dp, inPortMatch(1), "recirc(0x1)")
	m := inPortMatch(1)
	m.Key.RecircID = 1
	putFlow(t, s.dp, m, "recirc(0x1)")
	s.send(1, udpFrame(1))
	st := s.dp.Stats()
	if st.Recirc != MaxRecircDepth+1 || st.Lost != 1 {
		t.Fatalf("stats = %+v, want recirc=%d lost=1", st, MaxRecircDepth+1)
	}
}

func TestOutputToMissingPortIsCounted(t *testing.T) {
	s := newTestSwitch(t, 2, dpif.DefaultConfig())
	putFlow(t, s.dp, inPortMatch(1), "9")
	s.send(1, udpFrame(1))
	if got := s.dp.workerList()[0].stats.outputNoPort.Load(); got != 1 {
		t.Fatalf("output-to-missing-port drops = %d, want 1", got)
	}
}

func TestForwardingAllocatesNothing(t *testing.T) {
	s := newTestSwitch(t, 2, dpif.DefaultConfig())
	putFlow(t, s.dp, inPortMatch(1), "2")
	// Captures copy frames: measure with a capture-free output port.
	out, _ := dummy.New(dummy.Config{Name: "sink"})
	defer out.Close()
	s.dp.DelPort(2)
	s.dp.AddPort(out, 2)
	frames := [][]byte{udpFrame(1), udpFrame(2), udpFrame(3)}
	s.send(1, frames...)
	allocs := testing.AllocsPerRun(100, func() { s.send(1, frames...) })
	if allocs != 0 {
		t.Fatalf("forwarding allocated %.1f times per batch, want 0", allocs)
	}
}

func TestPortNumbersAndNames(t *testing.T) {
	dp := New("t", dpif.DefaultConfig())
	defer dp.Close()
	a, _ := dummy.New(dummy.Config{Name: "a"})
	b, _ := dummy.New(dummy.Config{Name: "b"})
	c, _ := dummy.New(dummy.Config{Name: "a"})
	defer a.Close()
	defer b.Close()
	defer c.Close()
	if no, err := dp.AddPort(a, dpif.PortNone); err != nil || no != 1 {
		t.Fatalf("auto number = %d, %v; want 1", no, err)
	}
	if _, err := dp.AddPort(b, 1); !errors.Is(err, dpif.ErrPortInUse) {
		t.Fatalf("duplicate number: %v, want ErrPortInUse", err)
	}
	if _, err := dp.AddPort(c, 7); !errors.Is(err, dpif.ErrNameInUse) {
		t.Fatalf("duplicate name: %v, want ErrNameInUse", err)
	}
	if no, err := dp.AddPort(b, 7); err != nil || no != 7 {
		t.Fatalf("requested number = %d, %v; want 7", no, err)
	}
	if p, ok := dp.PortByName("b"); !ok || p.No != 7 || p.Type != "dummy" {
		t.Fatalf("PortByName(b) = %+v, %v", p, ok)
	}
	if err := dp.DelPort(1); err != nil {
		t.Fatal(err)
	}
	if _, ok := dp.Port(1); ok {
		t.Fatal("port 1 still present after DelPort")
	}
	if err := dp.DelPort(1); !errors.Is(err, dpif.ErrNoSuchPort) {
		t.Fatalf("delete twice: %v, want ErrNoSuchPort", err)
	}
}

// TestWorkersForwardInjectedFramesWhileFlowsChange runs the real poll
// loop: frames injected into p1 come out of p2 while another goroutine
// adds and deletes unrelated megaflows (run with -race).
func TestWorkersForwardInjectedFramesWhileFlowsChange(t *testing.T) {
	cfg := dpif.DefaultConfig()
	cfg.Workers = 2
	s := newTestSwitch(t, 2, cfg)
	putFlow(t, s.dp, inPortMatch(1), "2")
	var got atomic.Int64
	s.ports[2].OnTransmit(func([]byte) { got.Add(1) })
	if err := s.dp.Start(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			m := inPortMatch(3)
			m.Key.RecircID = uint32(i%50 + 1)
			m.Normalize()
			u := dpif.UFIDFromMatch(&m)
			_ = s.dp.FlowPut(&dpif.FlowPut{UFID: u, Match: m, Actions: odp.Actions{odp.Output(1)}, Flags: dpif.PutCreate})
			_, _ = s.dp.FlowDel(u)
		}
	}()
	const n = 2000
	for i := 0; i < n; i++ {
		for !s.ports[1].Inject(udpFrame(i)) {
			time.Sleep(time.Millisecond) // rx queue full: let the worker drain
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for got.Load() < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if got.Load() != n {
		t.Fatalf("forwarded %d of %d injected frames", got.Load(), n)
	}
}

func TestEMCServesRepeatsAndNeverOutlivesItsFlow(t *testing.T) {
	cfg := dpif.DefaultConfig()
	cfg.EMCInsertInvProb = 1 // cache every megaflow hit
	s := newTestSwitch(t, 3, cfg)
	u := putFlow(t, s.dp, inPortMatch(1), "2")
	// A second mask, so that the exact-match cache is in use.
	m := flow.Match{Key: flow.Key{InPort: 3}, Mask: exactMask()}
	putFlow(t, s.dp, m, "1")
	f := udpFrame(7)
	s.send(1, f)    // megaflow hit, inserted into the EMC
	s.send(1, f, f) // EMC hits
	if st := s.dp.Stats(); st.EMCHit != 2 || st.MegaflowHit != 1 {
		t.Fatalf("stats = %+v, want emc_hit=2 megaflow_hit=1", st)
	}
	if _, err := s.dp.FlowDel(u); err != nil {
		t.Fatal(err)
	}
	s.send(1, f)
	if n := len(s.ports[2].Captured()); n != 3 {
		t.Fatalf("port 2 sent %d frames, want 3 (none after the delete)", n)
	}
	if st := s.dp.Stats(); st.EMCHit != 2 || st.Missed != 1 {
		t.Fatalf("stats after delete = %+v, want emc_hit=2 missed=1", st)
	}
}

func TestEMCGateStopsLookupsWhileMissingAndResumesWhenHitting(t *testing.T) {
	var g emcGate
	for i := 0; i < emcWindow; i++ {
		if !g.want() {
			t.Fatal("gate closed before any window completed")
		}
		g.record(i%10 == 0) // 10% hits
	}
	if !g.off {
		t.Fatal("gate still open after a window at 10% hits")
	}
	asked := 0
	for i := 0; i < emcSampleEvery*emcWindow; i++ {
		if g.want() {
			asked++
			g.record(true)
		}
	}
	if asked != emcWindow {
		t.Fatalf("sampled %d lookups while off, want %d (one in %d)", asked, emcWindow, emcSampleEvery)
	}
	if g.off {
		t.Fatal("gate still closed after a sampled window at 100% hits")
	}
}

// macFrame is a frame from src to dst (last MAC bytes).
func macFrame(src, dst byte) []byte {
	f := udpFrame(1)
	f[5], f[11] = dst, src
	f[0], f[6] = 0x02, 0x02
	return f
}

// TestMACLearnActionLearnsFloodsThenForwards: one megaflow per input port
// ending in mac_learn serves every MAC: an unknown destination floods to
// the other ports of the VLAN, and once the destination has been learned
// from its own traffic, frames go to its port only.
func TestMACLearnActionLearnsFloodsThenForwards(t *testing.T) {
	s := newTestSwitch(t, 3, dpif.DefaultConfig())
	tbl, err := l2fib.New(l2fib.Config{Capacity: 1024}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s.dp.MACTables().Set(1, tbl)
	for in := uint32(1); in <= 3; in++ {
		putFlow(t, s.dp, inPortMatch(in), "mac_learn(table=1,vlan=0,ports(1,2,3))")
	}
	s.send(1, macFrame(0xa, 0xb)) // b unknown: flood to 2 and 3
	if n2, n3 := len(s.ports[2].Captured()), len(s.ports[3].Captured()); n2 != 1 || n3 != 1 {
		t.Fatalf("unknown destination: port2=%d port3=%d frames, want 1 and 1", n2, n3)
	}
	s.send(2, macFrame(0xb, 0xa)) // a learned on port 1: to port 1 only
	if n1, n3 := len(s.ports[1].Captured()), len(s.ports[3].Captured()); n1 != 1 || n3 != 0 {
		t.Fatalf("learned destination: port1=%d port3=%d frames, want 1 and 0", n1, n3)
	}
	s.send(1, macFrame(0xa, 0xb)) // b now learned on port 2
	if n2, n3 := len(s.ports[2].Captured()), len(s.ports[3].Captured()); n2 != 1 || n3 != 0 {
		t.Fatalf("second frame to b: port2=%d port3=%d frames, want 1 and 0", n2, n3)
	}
	if st := s.dp.Stats(); st.Flows != 3 || st.Missed != 0 {
		t.Fatalf("stats = %+v: three megaflows serve every MAC, no misses", st)
	}
	if n := tbl.Stats(); n.Current != 2 {
		t.Fatalf("MAC table holds %d entries, want 2", n.Current)
	}
}

// TestCtActionTracksAndRecirculatesWithState: a stateful pipeline in
// datapath flows — ct(commit,zone=5) then recirc; after recirculation
// the packet matches on ct_state=+trk+new and the reply on +trk+est.
func TestCtActionTracksAndRecirculatesWithState(t *testing.T) {
	s := newTestSwitch(t, 2, dpif.DefaultConfig())
	putFlow(t, s.dp, inPortMatch(1), "ct(commit,zone=5),recirc(0x1)")
	putFlow(t, s.dp, inPortMatch(2), "ct(zone=5),recirc(0x1)")
	for in, state := range map[uint32]uint8{1: flow.CsTracked | flow.CsNew, 2: flow.CsTracked | flow.CsEstablished | flow.CsReplyDir} {
		m := inPortMatch(in)
		m.Key.RecircID, m.Key.CtState = 1, state
		m.Mask.CtState = 0xff
		out := "2"
		if in == 2 {
			out = "1"
		}
		putFlow(t, s.dp, m, out)
	}
	req := udpFrame(3)
	reply := udpFrame(3)
	copy(reply[26:30], req[30:34]) // swap IPv4 addresses
	copy(reply[30:34], req[26:30])
	copy(reply[34:36], req[36:38]) // and UDP ports
	copy(reply[36:38], req[34:36])
	reply[24], reply[25] = 0, 0
	sum := packet.Checksum(reply[14:34])
	reply[24], reply[25] = byte(sum>>8), byte(sum)
	s.send(1, req)
	s.send(2, reply)
	if n1, n2 := len(s.ports[1].Captured()), len(s.ports[2].Captured()); n1 != 1 || n2 != 1 {
		t.Fatalf("port1=%d port2=%d frames, want the reply on 1 and the request on 2", n1, n2)
	}
	if got := conntrack.FormatDump(s.dp.Conntrack().Dump(nil), false); !strings.Contains(got, "udp,orig=(src=10.0.0.0,dst=11.0.0.3,sport=1027,dport=2000),reply=(src=11.0.0.3,dst=10.0.0.0,sport=2000,dport=1027),zone=5") {
		t.Fatalf("dump-conntrack:\n%s", got)
	}
	if n := s.dp.Conntrack().FlushZone(5); n != 1 {
		t.Fatalf("FlushZone(5) removed %d, want 1", n)
	}
}

func TestHotFlowFieldsShareOneCacheLine(t *testing.T) {
	var f dpFlow
	if end := unsafe.Offsetof(f.tcpFlags) + unsafe.Sizeof(f.tcpFlags); end > 64 {
		t.Fatalf("the packet path's dpFlow fields span %d bytes, more than one cache line", end)
	}
}

// ipv4Fragment builds fragment [off, off+len(data)) of a UDP datagram
// from 10.0.0.1 to 10.0.0.2 with IP id 0x1234.
func ipv4Fragment(data []byte, off int, more bool) []byte {
	f := make([]byte, 14+20+len(data))
	copy(f[0:6], []byte{0x02, 0, 0, 0, 0, 2})
	copy(f[6:12], []byte{0x02, 0, 0, 0, 0, 1})
	f[12], f[13] = 0x08, 0x00
	ip := f[14:]
	ip[0] = 0x45
	tot := 20 + len(data)
	ip[2], ip[3] = byte(tot>>8), byte(tot)
	ip[4], ip[5] = 0x12, 0x34
	fo := off / 8
	if more {
		fo |= 0x2000
	}
	ip[6], ip[7] = byte(fo>>8), byte(fo)
	ip[8], ip[9] = 64, 17
	copy(ip[12:16], []byte{10, 0, 0, 1})
	copy(ip[16:20], []byte{10, 0, 0, 2})
	sum := packet.Checksum(ip[:20])
	ip[10], ip[11] = byte(sum>>8), byte(sum)
	copy(ip[20:], data)
	return f
}

// TestCtReassemblesFragmentsAndForwardsThemWithTheDatagramsState: the
// first fragment is held; when the second completes the datagram,
// conntrack runs once on the whole datagram and both fragments leave with
// its ct_state.
func TestCtReassemblesFragmentsAndForwardsThemWithTheDatagramsState(t *testing.T) {
	s := newTestSwitch(t, 2, dpif.DefaultConfig())
	putFlow(t, s.dp, inPortMatch(1), "ct(commit,zone=7),recirc(0x1)")
	m := inPortMatch(1)
	m.Key.RecircID, m.Key.CtState = 1, flow.CsTracked|flow.CsNew
	m.Mask.CtState = 0xff
	putFlow(t, s.dp, m, "2")
	udp := make([]byte, 32)
	udp[0], udp[1], udp[2], udp[3] = 0x04, 0xd2, 0x00, 0x35 // 1234 -> 53
	udp[4], udp[5] = 0, 32
	for i := 8; i < 32; i++ {
		udp[i] = byte(i)
	}
	first, second := ipv4Fragment(udp[:16], 0, true), ipv4Fragment(udp[16:], 16, false)
	s.send(1, first)
	if n := len(s.ports[2].Captured()); n != 0 {
		t.Fatalf("port 2 sent %d frames before the datagram was complete", n)
	}
	s.send(1, second)
	got := s.ports[2].Captured()
	if len(got) != 2 || !bytes.Equal(got[0], first) || !bytes.Equal(got[1], second) {
		t.Fatalf("port 2 sent %d frames, want both fragments unchanged", len(got))
	}
	if dump := conntrack.FormatDump(s.dp.Conntrack().Dump(nil), false); !strings.Contains(dump, "udp,orig=(src=10.0.0.1,dst=10.0.0.2,sport=1234,dport=53)") || !strings.Contains(dump, "zone=7") {
		t.Fatalf("dump-conntrack:\n%s", dump)
	}
}

// A packet-out whose actions recirculate reaches the miss handler from
// the packet-out worker, which keeps no megaflows: the packet is still
// forwarded by the reply's actions, and nothing is installed there.
func TestExecuteThatRecirculatesForwardsOnAMiss(t *testing.T) {
	s := newTestSwitch(t, 2, dpif.DefaultConfig())
	h := &exactHandler{}
	s.dp.SetUpcallHandler(h)
	p := packet.FromBytes(udpFrame(1))
	p.Md.InPort = 1
	if err := s.dp.Execute(p, odp.Actions{odp.Recirc(7)}); err != nil {
		t.Fatal(err)
	}
	if n := len(s.ports[2].Captured()); n != 1 || h.misses.Load() != 1 {
		t.Fatalf("port 2 sent %d frames after %d misses, want 1 and 1", n, h.misses.Load())
	}
	if st := s.dp.Stats(); st.Flows != 0 {
		t.Fatalf("flows = %d, want 0 (the packet-out worker installs none)", st.Flows)
	}
}

// reexecHandler executes, from a userspace upcall, the packet again with
// other actions, as the switch's slow path does with a slow-path flow's
// actions.
type reexecHandler struct {
	dp    *Datapath
	again odp.Actions
}

func (h *reexecHandler) Miss(*dpif.Upcall, *dpif.MissReply) error { return errors.New("no misses") }

func (h *reexecHandler) Userspace(u *dpif.Upcall) {
	p := packet.FromBytes(u.Packet.Data())
	_ = h.dp.Execute(p, h.again)
}

func TestExecuteFromAUserspaceUpcallOfAnExecuteDoesNotWaitForItself(t *testing.T) {
	s := newTestSwitch(t, 2, dpif.DefaultConfig())
	s.dp.SetUpcallHandler(&reexecHandler{dp: s.dp, again: odp.Actions{odp.Output(2)}})
	done := make(chan error, 1)
	go func() {
		done <- s.dp.Execute(packet.FromBytes(udpFrame(1)), odp.Actions{odp.Userspace(0, odp.UserspaceParams{})})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Execute waited for itself")
	}
	if n := len(s.ports[2].Captured()); n != 1 {
		t.Fatalf("port 2 sent %d frames, want the one the nested Execute sent", n)
	}
}
