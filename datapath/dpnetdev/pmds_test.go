package dpnetdev

import (
	"reflect"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/netdev/dummy"
	"github.com/gvs-project/gvs/datapath/pmd"
)

// threadQueues is "core: port/queue ..." per thread, the main thread
// as core -1.
func threadQueues(dp *Datapath) map[int][]string {
	out := map[int][]string{}
	for _, t := range dp.Threads() {
		core := t.Core
		if t.Main {
			core = -1
		}
		out[core] = []string{}
		for _, q := range t.RxQueues {
			out[core] = append(out[core], q.Port+"/"+string(rune('0'+q.Queue)))
		}
	}
	return out
}

// With the PMD placement, a dummy-pmd port's queues go to the mask's
// PMD threads and a plain dummy port to the main thread; changing the
// mask replaces the threads, and traffic on every queue is forwarded
// by whichever thread polls it.
func TestPMDThreadsPollTheirQueuesAndFollowTheMask(t *testing.T) {
	dp := New("t", dpif.DefaultConfig())
	layout, _ := pmd.DummyLayout("0,0,0")
	dp.SetPMDLayout(layout, false, 0)
	if err := dp.Start(); err != nil {
		t.Fatal(err)
	}
	in, _ := dummy.New(dummy.Config{Name: "in", PMD: true, RxQueues: 3})
	out, _ := dummy.New(dummy.Config{Name: "out"})
	defer func() { dp.Close(); in.Close(); out.Close() }()
	if _, err := dp.AddPort(in, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := dp.AddPort(out, 2); err != nil {
		t.Fatal(err)
	}
	if got, want := threadQueues(dp), map[int][]string{0: {"in/0", "in/1", "in/2"}, -1: {"out/0"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("default placement %v, want %v", got, want)
	}
	dp.ConfigurePMD("0x6", pmd.RoundRobin, true)
	if got, want := threadQueues(dp), map[int][]string{1: {"in/0", "in/2"}, 2: {"in/1"}, -1: {"out/0"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("mask 0x6 %v, want %v", got, want)
	}
	var m flow.Match
	m.Key.InPort, m.Mask.InPort, m.Mask.RecircID = 1, ^uint32(0), ^uint32(0)
	putFlow(t, dp, m, "2")
	for q := 0; q < 3; q++ {
		in.InjectQueue(q, udpFrame(q))
	}
	deadline := time.Now().Add(5 * time.Second)
	for out.Stats().TxPackets < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := out.Stats().TxPackets; n != 3 {
		t.Fatalf("forwarded %d of 3 frames", n)
	}
	// Each PMD thread has its own copy of the API-installed flow, and
	// its counters are the frames it forwarded.
	got := map[int]uint64{}
	dp.FlowDumpThreads(func(th Thread, f *dpif.Flow) bool {
		if !th.Main {
			got[th.Core] = f.Stats.Packets
		}
		return true
	})
	if want := map[int]uint64{1: 2, 2: 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("per-thread packets %v, want %v", got, want)
	}
}

// afxdpLike is a dummy device that says it is an AF_XDP port.
type afxdpLike struct{ *dummy.Device }

func (afxdpLike) Type() string { return "afxdp" }

// AF_XDP ports are PMD ports, as Open vSwitch's afxdp class is: with
// no pmd-cpu-mask their queue goes to a PMD thread, not the main
// thread, which keeps the system and internal ports.
func TestAFXDPPortsArePolledByPMDThreads(t *testing.T) {
	dp := New("t", dpif.DefaultConfig())
	layout, _ := pmd.DummyLayout("0,0")
	dp.SetPMDLayout(layout, false, 0)
	if err := dp.Start(); err != nil {
		t.Fatal(err)
	}
	x, _ := dummy.New(dummy.Config{Name: "x"})
	in, _ := dummy.New(dummy.Config{Name: "in"})
	defer func() { dp.Close(); x.Close(); in.Close() }()
	if _, err := dp.AddPort(afxdpLike{x}, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := dp.AddPort(in, 2); err != nil {
		t.Fatal(err)
	}
	if got, want := threadQueues(dp), map[int][]string{0: {"x/0"}, -1: {"in/0"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("placement %v, want %v", got, want)
	}
}
