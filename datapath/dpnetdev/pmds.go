package dpnetdev

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/pmd"
)

// PMD threads as Open vSwitch's dpif-netdev runs them.
//
// A datapath starts in the placement of its library use: cfg.Workers
// workers poll every port's queues, spread round-robin. SetPMDLayout
// switches it to Open vSwitch's: one worker per PMD core (the cores of
// pmd-cpu-mask, else the first core of each NUMA node; none while no
// port is polled by PMD threads), each pinned to its core when the
// layout is the machine's, whose rx queues pmd.Schedule assigns
// (pmd-rxq-affinity, then roundrobin, cycles or group), and one more
// worker, the "main thread", that polls the other ports (dummy,
// internal). Ports polled by PMD threads are dummy-pmd ports and, once
// PMD cores are chosen (pmd-cpu-mask, or more than one default thread),
// the AF_PACKET (system) ports: Open vSwitch always polls its kernel
// ports from the main thread, gvs gives them the PMD threads the user
// asked for so that forwarding scales with the cores given.
//
// When the set of PMD cores changes the workers are replaced whole:
// they stop, every megaflow is flushed and the new workers start with
// empty tables (Open vSwitch keeps the threads whose core stays).

// threadID is the thread a worker is: a PMD core and its node, or the
// main thread.
type threadID struct {
	core, numa int
	main       bool
}

// pmdState is the PMD placement; guarded by Datapath.reconfMu.
type pmdState struct {
	layout   *pmd.Layout // nil: the library placement
	pin      bool        // pin PMD workers to their cores
	defaultN int         // PMD threads without a mask; 0 or 1: one per node
	built    bool        // the workers are PMD threads and a main thread
	mask     string
	mode     pmd.Mode
	isolate  bool
	// affinity is pmd-rxq-affinity by port name: queue -> core.
	affinity map[string]map[int]int
	assign   pmd.Assignment
	gen      uint64 // reconfigurations so far
}

// SetPMDLayout switches the datapath to Open vSwitch's PMD placement
// over the NUMA layout l. pin pins each PMD worker to its core while a
// pmd-cpu-mask is set (for the machine's own layout, not --dummy-numa's;
// without a mask the threads run where the process may); defaultThreads, when above
// 1, is how many PMD threads run without a pmd-cpu-mask (the first
// cores), else one per node.
func (dp *Datapath) SetPMDLayout(l pmd.Layout, pin bool, defaultThreads int) {
	dp.reconfMu.Lock()
	defer dp.reconfMu.Unlock()
	dp.pmd.layout = &l
	dp.pmd.pin = pin
	dp.pmd.defaultN = defaultThreads
	dp.pmd.isolate = true
	dp.reconfigureLocked()
}

// ConfigurePMD sets pmd-cpu-mask, pmd-rxq-assign and pmd-rxq-isolate
// and redoes the placement.
func (dp *Datapath) ConfigurePMD(mask string, mode pmd.Mode, isolate bool) {
	dp.reconfMu.Lock()
	defer dp.reconfMu.Unlock()
	dp.pmd.mask, dp.pmd.mode, dp.pmd.isolate = mask, mode, isolate
	dp.reconfigureLocked()
}

// SetRxqAffinity sets a port's pmd-rxq-affinity (queue -> core; nil
// clears it) and redoes the assignment when it changed.
func (dp *Datapath) SetRxqAffinity(port string, aff map[int]int) {
	dp.reconfMu.Lock()
	defer dp.reconfMu.Unlock()
	old := dp.pmd.affinity[port]
	if equalAffinity(old, aff) {
		return
	}
	if dp.pmd.affinity == nil {
		dp.pmd.affinity = map[string]map[int]int{}
	}
	if len(aff) == 0 {
		delete(dp.pmd.affinity, port)
	} else {
		dp.pmd.affinity[port] = aff
	}
	dp.reconfigureLocked()
}

func equalAffinity(a, b map[int]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// PMDAssignment returns the last rx queue assignment (for the auto load
// balance's dry run) and the settings it was made with.
func (dp *Datapath) PMDAssignment() (a pmd.Assignment, mode pmd.Mode, isolate bool) {
	dp.reconfMu.Lock()
	defer dp.reconfMu.Unlock()
	return dp.pmd.assign, dp.pmd.mode, dp.pmd.isolate
}

// PMDRxQueues returns the rx queues PMD threads poll, as pmd.Schedule
// takes them, with the PMD cores.
func (dp *Datapath) PMDRxQueues() ([]pmd.Core, []pmd.RxQ) {
	dp.reconfMu.Lock()
	defer dp.reconfMu.Unlock()
	var cores []pmd.Core
	for _, t := range dp.pmd.assign.Threads {
		cores = append(cores, t.Core)
	}
	return cores, dp.pmdRxQs(dp.ports.load(), cores)
}

// isPMDPort reports whether PMD threads poll a device's queues:
// dummy-pmd and afxdp ports (PMD ports in Open vSwitch too), and system
// (AF_PACKET) ports once the PMD cores are chosen (a pmd-cpu-mask, or
// more than one default thread); otherwise the main thread polls system
// ports, as Open vSwitch's does.
func (dp *Datapath) isPMDPort(dev netdev.Device) bool {
	switch dev.Type() {
	case "dummy-pmd", "afxdp":
		return true
	case netdev.TypeSystem:
		return dp.pmd.mask != "" || dp.pmd.defaultN > 1
	}
	return false
}

// numaDevice is a device that knows its NUMA node.
type numaDevice interface{ NUMAID() int }

func (dp *Datapath) logf(l pmd.Level, format string, args ...any) {
	lg := dp.cfg.Log
	if lg == nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	switch l {
	case pmd.Debug:
		lg.Debug(msg)
	case pmd.Warn:
		lg.Warn(msg)
	default:
		lg.Info(msg)
	}
}

// reconfigure redoes the placement after a port change.
func (dp *Datapath) reconfigure() {
	dp.reconfMu.Lock()
	defer dp.reconfMu.Unlock()
	dp.reconfigureLocked()
}

// pmdCores returns the cores that run PMD threads now.
func (dp *Datapath) pmdCores(tbl *portTable) []pmd.Core {
	st := &dp.pmd
	has := false
	for _, p := range tbl.byNo {
		if p != nil && dp.isPMDPort(p.dev) {
			has = true
			break
		}
	}
	if has && st.mask == "" && st.defaultN > 1 {
		cs := st.layout.Cores()
		if len(cs) > st.defaultN {
			cs = cs[:st.defaultN]
		}
		return cs
	}
	cores, warns := st.layout.PMDCores(st.mask, has)
	for _, w := range warns {
		dp.logf(pmd.Warn, "%s", w)
	}
	return cores
}

// pmdRxQs lists the PMD ports' queues in port number and queue order.
// A port whose node has no PMD core (or that knows none) counts as on
// the first core's node.
func (dp *Datapath) pmdRxQs(tbl *portTable, cores []pmd.Core) []pmd.RxQ {
	var out []pmd.RxQ
	for _, p := range tbl.byNo {
		if p == nil || !dp.isPMDPort(p.dev) {
			continue
		}
		numa := -1
		if nd, ok := p.dev.(numaDevice); ok {
			numa = nd.NUMAID()
		}
		if numa < 0 {
			numa = 0
			if len(cores) > 0 {
				numa = cores[0].NUMA
			}
		}
		aff := dp.pmd.affinity[p.dev.Name()]
		for q := 0; q < p.dev.NumRxQueues(); q++ {
			core := pmd.NoCore
			if c, ok := aff[q]; ok {
				core = c
			}
			out = append(out, pmd.RxQ{Port: p.dev.Name(), PortNo: uint32(p.no), Queue: q, NUMA: numa, Affinity: core})
		}
	}
	return out
}

// reconfigureLocked places the threads and assigns the queues.
func (dp *Datapath) reconfigureLocked() {
	dp.pmd.gen++
	tbl := dp.ports.load()
	if dp.pmd.layout == nil {
		dp.assignRoundRobin(tbl)
		return
	}
	cores := dp.pmdCores(tbl)
	if !dp.pmd.built || !sameCores(dp.workerCores(), cores) {
		if dp.started.Load() {
			if !dp.pauseMu.TryLock() {
				// Paused: the workers must stay; done on resume.
				dp.pmdPending.Store(true)
				return
			}
			defer dp.pauseMu.Unlock()
		}
		dp.rebuildWorkers(cores)
	}
	a := pmd.Schedule(cores, dp.pmdRxQs(tbl, cores), dp.pmd.mode, dp.pmd.isolate, pmd.Info, dp.logf)
	dp.pmd.assign = a
	ws := dp.workerList()
	for i, t := range a.Threads {
		w := ws[i]
		lst := make([]rxq, 0, len(t.RxQs))
		for _, q := range t.RxQs {
			lst = append(lst, rxq{port: tbl.get(q.PortNo), q: q.Queue})
		}
		w.isolated.Store(t.Isolated)
		w.rxqs.Store(&lst)
	}
	var main []rxq
	for _, p := range tbl.byNo {
		if p == nil || dp.isPMDPort(p.dev) {
			continue
		}
		for q := 0; q < p.dev.NumRxQueues(); q++ {
			main = append(main, rxq{port: p, q: q})
		}
	}
	ws[len(ws)-1].rxqs.Store(&main)
}

// workerCores returns the cores of the PMD workers.
func (dp *Datapath) workerCores() []pmd.Core {
	var out []pmd.Core
	for _, w := range dp.workerList() {
		if !w.thread.main {
			out = append(out, pmd.Core{ID: w.thread.core, NUMA: w.thread.numa})
		}
	}
	return out
}

func sameCores(a, b []pmd.Core) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// rebuildWorkers replaces the workers with one per core and a main
// thread, logging as Open vSwitch does the threads destroyed and
// created and, when any was, the threads per node.
func (dp *Datapath) rebuildWorkers(cores []pmd.Core) {
	old := dp.workerList()
	oldCores := map[pmd.Core]bool{}
	if dp.pmd.built {
		for _, c := range dp.workerCores() {
			oldCores[c] = true
		}
	}
	newCores := map[pmd.Core]bool{}
	for _, c := range cores {
		newCores[c] = true
	}
	for _, w := range old {
		if w.running {
			close(w.quit)
		}
	}
	retired := *dp.retired.Load()
	for _, w := range old {
		w.wait()
		w.closePoller()
		addStats(&retired, w.stats.load())
	}
	dp.retired.Store(&retired)

	changed := false
	for _, c := range dp.workerCoresSorted(oldCores) {
		if !newCores[c] {
			dp.logf(pmd.Info, "PMD thread on numa_id: %d, core id: %2d destroyed.", c.NUMA, c.ID)
			changed = true
		}
	}
	ws := make([]*worker, 0, len(cores)+1)
	for i, c := range cores {
		w := newWorker(dp, i)
		w.thread = threadID{core: c.ID, numa: c.NUMA}
		if dp.pmd.pin && dp.pmd.mask != "" {
			w.pinCore = c.ID
		}
		ws = append(ws, w)
	}
	m := newWorker(dp, len(cores))
	m.thread = threadID{core: -1, numa: -1, main: true}
	ws = append(ws, m)
	dp.flows.setWorkers(ws)
	dp.workers.Store(&ws)
	dp.pmd.built = true
	for _, c := range cores {
		if !oldCores[c] {
			dp.logf(pmd.Info, "PMD thread on numa_id: %d, core id: %2d created.", c.NUMA, c.ID)
			changed = true
		}
	}
	if changed {
		l := pmd.NewLayout(cores)
		for _, n := range l.Nodes() {
			dp.logf(pmd.Info, "There are %d pmd threads on numa node %d", len(l.NodeCores(n)), n)
		}
	}
	if dp.started.Load() {
		for _, w := range ws {
			if err := w.openPoller(); err != nil {
				dp.logf(pmd.Warn, "PMD thread on core %d: %v", w.thread.core, err)
				continue
			}
			w.start()
		}
	}
}

func (dp *Datapath) workerCoresSorted(m map[pmd.Core]bool) []pmd.Core {
	out := make([]pmd.Core, 0, len(m))
	for c := range m {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// addStats adds a worker's counters to s.
func addStats(s *dpif.Stats, ws dpif.Stats) {
	s.EMCHit += ws.EMCHit
	s.MegaflowHit += ws.MegaflowHit
	s.Missed += ws.Missed
	s.Lost += ws.Lost
	s.Recirc += ws.Recirc
	s.UpcallOK += ws.UpcallOK
	s.UpcallFail += ws.UpcallFail
	s.Lookups += ws.Lookups
}

// assignRoundRobin is the library placement: every port's rx queues
// spread round-robin over the workers.
func (dp *Datapath) assignRoundRobin(tbl *portTable) {
	ws := dp.workerList()
	assign := make([][]rxq, len(ws))
	i := 0
	for _, p := range tbl.byNo {
		if p == nil {
			continue
		}
		for q := 0; q < p.dev.NumRxQueues(); q++ {
			w := i % len(ws)
			assign[w] = append(assign[w], rxq{port: p, q: q})
			i++
		}
	}
	for w, a := range assign {
		a := a
		ws[w].rxqs.Store(&a)
	}
}

// start runs the worker's poll loop.
func (w *worker) start() {
	w.running = true
	go w.runPoll()
}

// wait returns once a started worker's loop has ended.
func (w *worker) wait() {
	if w.running {
		<-w.exited
	}
}

// pin binds the calling (locked) OS thread to the worker's core.
func (w *worker) pin() {
	if w.pinCore < 0 {
		return
	}
	var set unix.CPUSet
	set.Set(w.pinCore)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		w.dp.logf(pmd.Warn, "pmd thread on core %d: setting its CPU affinity: %v", w.pinCore, err)
	}
}

// Thread is one poll-mode thread as pmd-rxq-show and pmd-stats-show
// show it.
type Thread struct {
	Core, NUMA int
	Main       bool // Open vSwitch's main thread: polls the other ports
	Isolated   bool
	RxQueues   []RxQueue // in assignment order
	Stats      dpif.Stats
}

// Threads returns the PMD threads in core order, then the main thread
// (in the library placement: the workers, their index as core, node 0).
func (dp *Datapath) Threads() []Thread {
	var out []Thread
	for i, w := range dp.workerList() {
		t := Thread{Core: w.thread.core, NUMA: w.thread.numa, Main: w.thread.main, Isolated: w.isolated.Load(),
			RxQueues: dp.WorkerRxQueues(i), Stats: w.threadStats()}
		out = append(out, t)
	}
	return out
}

// ClearThreadStats zeroes the counters Threads reports, of the PMD
// thread on core (or of every thread when core is negative), as
// pmd-stats-clear does.
func (dp *Datapath) ClearThreadStats(core int) {
	for _, w := range dp.workerList() {
		if core >= 0 && (w.thread.main || w.thread.core != core) {
			continue
		}
		s := w.stats.load()
		w.statsBase.Store(&s)
	}
}

// Rebalance assigns the rx queues again (pmd-rxq-rebalance).
func (dp *Datapath) Rebalance() { dp.reconfigure() }

// threadStats is a worker's counters less those pmd-stats-clear zeroed.
func (w *worker) threadStats() dpif.Stats {
	s := w.stats.load()
	b := w.statsBase.Load()
	if b == nil {
		return s
	}
	sub := func(a, b uint64) uint64 {
		if a < b {
			return 0
		}
		return a - b
	}
	s.EMCHit, s.MegaflowHit = sub(s.EMCHit, b.EMCHit), sub(s.MegaflowHit, b.MegaflowHit)
	s.Hit = s.EMCHit + s.MegaflowHit
	s.Missed, s.Lost, s.Recirc = sub(s.Missed, b.Missed), sub(s.Lost, b.Lost), sub(s.Recirc, b.Recirc)
	s.UpcallOK, s.UpcallFail, s.Lookups = sub(s.UpcallOK, b.UpcallOK), sub(s.UpcallFail, b.UpcallFail), sub(s.Lookups, b.Lookups)
	return s
}

// PMDPlacement reports whether the datapath places PMD threads as Open
// vSwitch does (SetPMDLayout), so that its flows are dumped per thread.
func (dp *Datapath) PMDPlacement() bool {
	dp.reconfMu.Lock()
	defer dp.reconfMu.Unlock()
	return dp.pmd.built
}

// FlowDumpThreads calls fn for each megaflow of each thread, the PMD
// threads in core order then the main thread, with that thread's copy
// and counters (dpctl/dump-flows' "flow-dump from pmd on cpu core: N"),
// until fn returns false.
func (dp *Datapath) FlowDumpThreads(fn func(t Thread, f *dpif.Flow) bool) {
	ws := dp.workerList()
	for i, w := range ws {
		t := Thread{Core: w.thread.core, NUMA: w.thread.numa, Main: w.thread.main}
		stop := false
		dp.flows.dumpWorker(i, func(f *dpif.Flow) bool {
			if !fn(t, f) {
				stop = true
				return false
			}
			return true
		})
		if stop {
			return
		}
	}
}

// logMissUpcall logs a miss at debug level as dpif-netdev does: the
// datapath, then the packet's whole flow key. (Open vSwitch adds a line
// describing the packet in OpenFlow terms, which the datapath cannot
// print.)
func (dp *Datapath) logMissUpcall(k *flow.Key) {
	lg := dp.cfg.Log
	if lg == nil || !lg.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	m := flow.Match{Key: *k}
	w := m.Mask.W()
	for i := range w {
		w[i] = ^uint64(0)
	}
	text := m.Format(false)
	// Unmasked, Open vSwitch prints ct_state's set flags ("0" for none),
	// not every flag with its sign.
	if i := strings.Index(text, "ct_state("); i >= 0 {
		if j := strings.IndexByte(text[i:], ')'); j >= 0 {
			st := "0"
			if k.CtState != 0 {
				st = flow.FormatCtState(k.CtState)
			}
			text = text[:i] + "ct_state(" + st + text[i+j:]
		}
	}
	lg.Debug(fmt.Sprintf("%s: miss upcall:\n%s", dp.name, text))
}

// PMDGeneration counts the reconfigurations (the auto load balance
// checks again after one).
func (dp *Datapath) PMDGeneration() uint64 {
	dp.reconfMu.Lock()
	defer dp.reconfMu.Unlock()
	return dp.pmd.gen
}

// ThreadLoads samples each PMD thread's load: the share of its loop's
// time since the last sample spent in rounds that received packets.
func (dp *Datapath) ThreadLoads() []pmd.ThreadLoad {
	dp.reconfMu.Lock()
	defer dp.reconfMu.Unlock()
	var out []pmd.ThreadLoad
	for _, w := range dp.workerList() {
		if w.thread.main {
			continue
		}
		b, i := w.busyNs.Load(), w.idleNs.Load()
		db, di := b-w.sampledBusy, i-w.sampledIdle
		w.sampledBusy, w.sampledIdle = b, i
		pct := uint64(0)
		if db > 0 {
			pct = uint64(db * 100 / (db + di))
		}
		out = append(out, pmd.ThreadLoad{Core: w.thread.core, Isolated: w.isolated.Load(), Percent: pct})
	}
	return out
}
