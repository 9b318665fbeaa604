package dpnetdev

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/datapath/conntrack"
	"github.com/gvs-project/gvs/datapath/dpcls"
	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/l2fib"
	"github.com/gvs-project/gvs/datapath/meter"
	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

type handlerBox struct{ h dpif.UpcallHandler }

// Datapath is the userspace datapath. Create it with New, add ports, set
// an upcall handler, then Start the workers (or drive a worker directly
// with ProcessBatch in benchmarks).
type Datapath struct {
	name string
	cfg  dpif.Config

	mu      sync.Mutex // cfg; see the lock order in doc.go
	flows   *megaflows // the flow index (megaflows.go)
	ports   *portSet   // ports and rx queue assignment (ports.go)
	handler atomic.Pointer[handlerBox]
	// workers are the poll-mode workers: replaced whole when the PMD
	// threads change (pmds.go), read with workerList.
	workers atomic.Pointer[[]*worker]
	// pmd is the PMD thread placement (pmds.go); reconfMu serialises
	// reconfigurations and is taken before ports.mu and flows.mu.
	reconfMu sync.Mutex
	pmd      pmdState
	// pmdPending says a reconfiguration came while paused (pause.go).
	pmdPending atomic.Bool
	// retired are the counters of workers a reconfiguration stopped.
	retired atomic.Pointer[dpif.Stats]

	// macTables are the MAC learning tables that mac_learn(table=N)
	// actions name, one per bridge (installed by the layer above).
	macTables l2fib.Registry

	// ct is the connection tracker the ct() action uses: one per
	// datapath, with a table per zone.
	ct *conntrack.Tracker
	// frag reassembles IP fragments before conntrack sees them.
	frag *conntrack.Reassembler

	// meters are the meters the meter(N) action runs packets through.
	meters *meter.Table

	// exec serialises Execute (packet-out) callers on a private context.
	exec     sync.Mutex
	execWork *worker
	// spares are the extra Execute workers made while execWork was
	// busy (execWorker), spareFree those not in use; guarded by spareMu.
	spareMu   sync.Mutex
	spares    []*worker
	spareFree []*worker

	// restoreWait is other_config:flow-restore-wait: no upcalls and no
	// idle expiry while set (restorewait.go).
	restoreWait atomic.Bool

	// missShare is the workers' miss budget (missbudget.go).
	missShare atomic.Int64

	started atomic.Bool
	stop    chan struct{}
	// pausing is the Pause in effect; pauseMu serialises Pauses.
	pausing atomic.Pointer[pause]
	pauseMu sync.Mutex
	wg      sync.WaitGroup
	clock   func() time.Time
}

var _ dpif.Datapath = (*Datapath)(nil)

// New returns a datapath with cfg.Workers workers (not yet running).
func New(name string, cfg dpif.Config) *Datapath {
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if cfg.FlowLimit <= 0 {
		cfg.FlowLimit = dpif.DefaultConfig().FlowLimit
	}
	dp := &Datapath{
		name:  name,
		cfg:   cfg,
		stop:  make(chan struct{}),
		clock: time.Now,
		ct:    conntrack.New(conntrack.Config{}),
		frag:  conntrack.NewReassembler(conntrack.FragConfig{}),

		meters: meter.NewTable(nil),
	}
	dp.missShare.Store(DefaultMissShare)
	var ws []*worker
	for i := 0; i < cfg.Workers; i++ {
		ws = append(ws, newWorker(dp, i))
	}
	dp.workers.Store(&ws)
	dp.retired.Store(&dpif.Stats{})
	dp.flows = newMegaflows(name, &dp.cfg, ws)
	dp.ports = newPortSet()
	dp.execWork = newWorker(dp, -1)
	return dp
}

// workerList returns the current workers.
func (dp *Datapath) workerList() []*worker { return *dp.workers.Load() }

// Name returns the datapath name (as in "netdev@<name>").
func (dp *Datapath) Name() string { return dp.name }

// Config returns the configuration.
func (dp *Datapath) Config() dpif.Config { return dp.cfg }

// SetFlowLimit changes the per-worker megaflow bound at run time.
func (dp *Datapath) SetFlowLimit(n int) {
	dp.mu.Lock()
	dp.cfg.FlowLimit = n
	dp.mu.Unlock()
	for _, w := range dp.workerList() {
		w.flowLimit.Store(int64(n))
	}
}

// SetMaxIdle changes the idle expiry.
func (dp *Datapath) SetMaxIdle(d time.Duration) {
	dp.mu.Lock()
	dp.cfg.MaxIdle = d
	dp.mu.Unlock()
}

// SetUpcallHandler registers the handler for misses and userspace actions.
func (dp *Datapath) SetUpcallHandler(h dpif.UpcallHandler) {
	if h == nil {
		dp.handler.Store(nil)
		return
	}
	dp.handler.Store(&handlerBox{h})
}

// AddPort adds a device as port want (0 or PortNone: the lowest free
// number from 1; the bridge's local port is added explicitly as 0).
func (dp *Datapath) AddPort(dev netdev.Device, want dpif.PortNo) (dpif.PortNo, error) {
	no, err := dp.ports.add(dev, want)
	if err == nil {
		dp.reconfigure()
	}
	return no, err
}

// DelPort removes a port. Its device is not closed: the caller owns it.
func (dp *Datapath) DelPort(no dpif.PortNo) error {
	if err := dp.ports.del(no); err != nil {
		return err
	}
	dp.reconfigure()
	return nil
}

// Port returns a port by number.
func (dp *Datapath) Port(no dpif.PortNo) (dpif.PortInfo, bool) {
	p := dp.ports.load().get(no)
	if p == nil {
		return dpif.PortInfo{}, false
	}
	return p.info(), true
}

// PortByName returns a port by device name.
func (dp *Datapath) PortByName(name string) (dpif.PortInfo, bool) {
	p := dp.ports.load().byName[name]
	if p == nil {
		return dpif.PortInfo{}, false
	}
	return p.info(), true
}

// Ports lists the ports in port-number order.
func (dp *Datapath) Ports() []dpif.PortInfo { return dp.ports.list() }

// FlowPut installs or modifies a megaflow in every worker.
func (dp *Datapath) FlowPut(fp *dpif.FlowPut) error {
	return dp.flows.put(fp, dp.clock().UnixNano())
}

// FlowGet returns a megaflow with its counters summed over workers.
func (dp *Datapath) FlowGet(u dpif.UFID) (dpif.Flow, error) { return dp.flows.get(u) }

// FlowDel deletes a megaflow from every worker and returns its final
// counters.
func (dp *Datapath) FlowDel(u dpif.UFID) (dpif.FlowStats, error) { return dp.flows.del(u) }

// FlowFlush deletes every megaflow.
func (dp *Datapath) FlowFlush() { dp.flows.flush() }

// FlowDump calls fn for each megaflow, sorted by UFID for stable output,
// until fn returns false. fn runs without the datapath lock held.
func (dp *Datapath) FlowDump(fn func(f *dpif.Flow) bool) { dp.flows.dump(fn, false, dp.clock()) }

// FlowDumpTerse is FlowDump for a caller that needs the flows' UFIDs,
// statistics and actions only (dpif.TerseDumper): its log lines carry no
// key.
func (dp *Datapath) FlowDumpTerse(fn func(f *dpif.Flow) bool) { dp.flows.dump(fn, true, dp.clock()) }

// ExpireIdle removes megaflows (worker copies) unused for longer than
// maxIdle as of now, and returns how many worker copies it removed. The
// sweeper calls it; tests call it with a chosen clock.
func (dp *Datapath) ExpireIdle(now time.Time, maxIdle time.Duration) int {
	return dp.flows.expireIdle(now, maxIdle)
}

// Execute runs actions on one packet outside the workers (packet-out). It
// is serialised: packet-out is a control-path operation.
func (dp *Datapath) Execute(p *packet.Packet, acts odp.Actions) error {
	if p == nil {
		return errors.New("dpnetdev: execute: nil packet")
	}
	w, release := dp.execWorker()
	defer release()
	var k flow.Key
	flow.Extract(p, &k) // sets the header offsets the set actions use
	var b packet.Batch
	b.Add(p)
	w.execute(&b, acts)
	w.flushTx()
	return nil
}

// execWorker returns the worker an Execute runs on and how to give it
// back: the private one or, while that one is busy, a spare. Busy can
// mean this very call chain: the actions of an Execute may reach a
// userspace action whose handler executes a packet in turn (a slow-path
// flow's actions, a BFD packet crossing patch ports, a tunnel neighbour
// request), which must not wait for itself.
func (dp *Datapath) execWorker() (*worker, func()) {
	if dp.exec.TryLock() {
		return dp.execWork, dp.exec.Unlock
	}
	dp.spareMu.Lock()
	var w *worker
	if n := len(dp.spareFree); n > 0 {
		w, dp.spareFree = dp.spareFree[n-1], dp.spareFree[:n-1]
	} else {
		w = newWorker(dp, -1)
		dp.spares = append(dp.spares, w)
	}
	dp.spareMu.Unlock()
	return w, func() {
		dp.spareMu.Lock()
		dp.spareFree = append(dp.spareFree, w)
		dp.spareMu.Unlock()
	}
}

// execWorkers are the Execute workers, the spares included.
func (dp *Datapath) execWorkers() []*worker {
	dp.spareMu.Lock()
	defer dp.spareMu.Unlock()
	return append([]*worker{dp.execWork}, dp.spares...)
}

// Stats sums the workers' counters.
func (dp *Datapath) Stats() dpif.Stats {
	s := *dp.retired.Load()
	for _, w := range dp.workerList() {
		addStats(&s, w.stats.load()) // pmds.go
		s.Masks += uint64(w.cls.Subtables())
	}
	s.Hit = s.EMCHit + s.MegaflowHit
	s.Flows = uint64(dp.flows.len())
	return s
}

// WorkerStats returns one worker's counters (pmd-stats-show).
func (dp *Datapath) WorkerStats(i int) dpif.Stats {
	ws := dp.workerList()
	if i < 0 || i >= len(ws) {
		return dpif.Stats{}
	}
	return ws[i].stats.load()
}

// Workers returns the number of poll-mode workers.
func (dp *Datapath) Workers() int { return len(dp.workerList()) }

// Conntrack returns the connection tracker (for dpctl/*conntrack* and
// zone flushes).
func (dp *Datapath) Conntrack() *conntrack.Tracker { return dp.ct }

// Meters returns the datapath's meters, which the layer above configures
// from OpenFlow meter_mods.
func (dp *Datapath) Meters() *meter.Table { return dp.meters }

// MACTables returns the registry of MAC learning tables: the layer above
// installs one table per bridge and reads them for fdb/* commands.
func (dp *Datapath) MACTables() *l2fib.Registry { return &dp.macTables }

// Start launches the workers and the idle-flow sweeper.
func (dp *Datapath) Start() error {
	dp.reconfMu.Lock()
	defer dp.reconfMu.Unlock()
	if !dp.started.CompareAndSwap(false, true) {
		return errors.New("dpnetdev: already started")
	}
	ws := dp.workerList()
	for _, w := range ws {
		if err := w.openPoller(); err != nil {
			return err
		}
	}
	for _, w := range ws {
		w.start()
	}
	dp.wg.Add(1)
	go dp.runSweeper()
	return nil
}

// runSweeper expires idle megaflows and re-ranks subtables periodically.
func (dp *Datapath) runSweeper() {
	defer dp.wg.Done()
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-dp.stop:
			return
		case now := <-t.C:
			if dp.Paused() {
				continue // what is handed over must not change
			}
			dp.mu.Lock()
			idle := dp.cfg.MaxIdle
			dp.mu.Unlock()
			if idle > 0 && !dp.restoreWait.Load() {
				dp.ExpireIdle(now, idle)
			}
			for _, w := range dp.workerList() {
				w.rankRequest.Store(true)
			}
			dp.macTables.Range(func(_ uint32, t *l2fib.Table) { t.Sweep(now) })
			dp.sweepConntrack()
		}
	}
}

// ctSweepBudget bounds the connections one expiry pass examines, so a
// pass never holds a zone for long.
const ctSweepBudget = 20000

// sweepConntrack expires idle connections incrementally.
func (dp *Datapath) sweepConntrack() {
	now := dp.ct.Now()
	dp.ct.Sweep(now, ctSweepBudget)
	// Fragments of datagrams that never completed: their buffers came
	// from some worker's pool; they go to the garbage collector.
	dp.frag.Expire(now)
}

// Close stops the workers. Ports' devices are left to their owner.
func (dp *Datapath) Close() error {
	select {
	case <-dp.stop:
	default:
		close(dp.stop)
	}
	dp.reconfMu.Lock()
	defer dp.reconfMu.Unlock()
	dp.wg.Wait()
	for _, w := range dp.workerList() {
		w.wait()
		w.closePoller()
	}
	return nil
}

// newClassifier is the classifier constructor (one per worker).
func newClassifier() *dpcls.Classifier[*dpFlow] { return dpcls.New[*dpFlow]() }
