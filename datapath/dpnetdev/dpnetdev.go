package dpnetdev

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
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

// maxPortNo bounds datapath port numbers so the fast-path port table can
// be a slice.
const maxPortNo = 1 << 16

// port is a datapath port as the workers see it.
type port struct {
	no  dpif.PortNo
	dev netdev.Device
}

// portTable is an immutable snapshot of the ports, published atomically.
type portTable struct {
	byNo   []*port // indexed by port number; nil where free
	byName map[string]*port
}

func (t *portTable) get(no uint32) *port {
	if int(no) < len(t.byNo) {
		return t.byNo[no]
	}
	return nil
}

type handlerBox struct{ h dpif.UpcallHandler }

// Datapath is the userspace datapath. Create it with New, add ports, set
// an upcall handler, then Start the workers (or drive a worker directly
// with ProcessBatch in benchmarks).
type Datapath struct {
	name string
	cfg  dpif.Config

	mu      sync.Mutex // ports, flows; see the lock order in doc.go
	flows   map[dpif.UFID]*flowSet
	ports   atomic.Pointer[portTable]
	handler atomic.Pointer[handlerBox]
	workers []*worker

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
		flows: make(map[dpif.UFID]*flowSet),
		stop:  make(chan struct{}),
		clock: time.Now,
		ct:    conntrack.New(conntrack.Config{}),
		frag:  conntrack.NewReassembler(conntrack.FragConfig{}),

		meters: meter.NewTable(nil),
	}
	dp.ports.Store(&portTable{byName: map[string]*port{}})
	dp.missShare.Store(DefaultMissShare)
	for i := 0; i < cfg.Workers; i++ {
		dp.workers = append(dp.workers, newWorker(dp, i))
	}
	dp.execWork = newWorker(dp, -1)
	return dp
}

// Name returns the datapath name (as in "netdev@<name>").
func (dp *Datapath) Name() string { return dp.name }

// Config returns the configuration.
func (dp *Datapath) Config() dpif.Config { return dp.cfg }

// SetFlowLimit changes the per-worker megaflow bound at run time.
func (dp *Datapath) SetFlowLimit(n int) {
	dp.mu.Lock()
	dp.cfg.FlowLimit = n
	dp.mu.Unlock()
	for _, w := range dp.workers {
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
	dp.mu.Lock()
	defer dp.mu.Unlock()
	old := dp.ports.Load()
	if _, dup := old.byName[dev.Name()]; dup {
		return 0, fmt.Errorf("dpnetdev: add port %q: %w", dev.Name(), dpif.ErrNameInUse)
	}
	no := want
	if want == dpif.PortNone {
		no = 0
		for n := uint32(1); n < maxPortNo; n++ {
			if old.get(n) == nil {
				no = n
				break
			}
		}
		if no == 0 {
			return 0, fmt.Errorf("dpnetdev: add port %q: no free port number", dev.Name())
		}
	} else if no >= maxPortNo {
		return 0, fmt.Errorf("dpnetdev: add port %q: port number %d out of range", dev.Name(), no)
	} else if old.get(no) != nil {
		return 0, fmt.Errorf("dpnetdev: add port %q as %d: %w", dev.Name(), no, dpif.ErrPortInUse)
	}
	nt := &portTable{byName: make(map[string]*port, len(old.byName)+1)}
	size := len(old.byNo)
	if int(no) >= size {
		size = int(no) + 1
	}
	nt.byNo = make([]*port, size)
	copy(nt.byNo, old.byNo)
	for k, v := range old.byName {
		nt.byName[k] = v
	}
	p := &port{no: no, dev: dev}
	nt.byNo[no] = p
	nt.byName[dev.Name()] = p
	dp.ports.Store(nt)
	dp.assignQueuesLocked()
	return no, nil
}

// DelPort removes a port. Its device is not closed: the caller owns it.
func (dp *Datapath) DelPort(no dpif.PortNo) error {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	old := dp.ports.Load()
	p := old.get(no)
	if p == nil {
		return fmt.Errorf("dpnetdev: delete port %d: %w", no, dpif.ErrNoSuchPort)
	}
	nt := &portTable{byNo: make([]*port, len(old.byNo)), byName: make(map[string]*port, len(old.byName))}
	copy(nt.byNo, old.byNo)
	nt.byNo[no] = nil
	for k, v := range old.byName {
		if v != p {
			nt.byName[k] = v
		}
	}
	dp.ports.Store(nt)
	dp.assignQueuesLocked()
	return nil
}

func (dp *Datapath) portInfo(p *port) dpif.PortInfo {
	return dpif.PortInfo{No: p.no, Name: p.dev.Name(), Type: p.dev.Type(), Device: p.dev}
}

// Port returns a port by number.
func (dp *Datapath) Port(no dpif.PortNo) (dpif.PortInfo, bool) {
	p := dp.ports.Load().get(no)
	if p == nil {
		return dpif.PortInfo{}, false
	}
	return dp.portInfo(p), true
}

// PortByName returns a port by device name.
func (dp *Datapath) PortByName(name string) (dpif.PortInfo, bool) {
	p := dp.ports.Load().byName[name]
	if p == nil {
		return dpif.PortInfo{}, false
	}
	return dp.portInfo(p), true
}

// Ports lists the ports in port-number order.
func (dp *Datapath) Ports() []dpif.PortInfo {
	t := dp.ports.Load()
	var out []dpif.PortInfo
	for _, p := range t.byNo {
		if p != nil {
			out = append(out, dp.portInfo(p))
		}
	}
	return out
}

// assignQueuesLocked spreads every port's rx queues round-robin over the
// workers and publishes each worker's new assignment. Workers reconcile
// their pollers when they see a new assignment.
func (dp *Datapath) assignQueuesLocked() {
	assign := make([][]rxq, len(dp.workers))
	i := 0
	for _, p := range dp.ports.Load().byNo {
		if p == nil {
			continue
		}
		for q := 0; q < p.dev.NumRxQueues(); q++ {
			w := i % len(dp.workers)
			assign[w] = append(assign[w], rxq{port: p, q: q})
			i++
		}
	}
	for w, a := range assign {
		a := a
		dp.workers[w].rxqs.Store(&a)
	}
}

// FlowPut installs or modifies a megaflow in every worker.
func (dp *Datapath) FlowPut(fp *dpif.FlowPut) error {
	dp.logPut(fp)
	m := fp.Match
	m.Mask.MatchVLANPresence()
	m.Normalize()
	u := fp.UFID
	if u == (dpif.UFID{}) {
		u = dpif.UFIDFromMatch(&m)
	}
	acts := fp.Actions
	dp.mu.Lock()
	defer dp.mu.Unlock()
	if set, ok := dp.flows[u]; ok {
		if fp.Flags&dpif.PutModify == 0 {
			return fmt.Errorf("dpnetdev: put %s: %w", u, dpif.ErrExists)
		}
		var old *odp.Actions
		for _, f := range set.perWork {
			if f != nil {
				if old == nil {
					old = f.actions.Load()
				}
				f.actions.Store(&acts)
				if fp.Flags&dpif.PutZeroStats != 0 {
					f.zeroStats()
				}
			}
		}
		if old != nil {
			dp.logFlowChange(u, set.match, old, acts)
		}
		return nil
	}
	if fp.Flags&dpif.PutCreate == 0 {
		return fmt.Errorf("dpnetdev: modify %s: %w", u, dpif.ErrNotFound)
	}
	set := &flowSet{match: &m, shown: fp.Match.Key, perWork: make([]*dpFlow, len(dp.workers))}
	now := dp.clock().UnixNano()
	for i, w := range dp.workers {
		if w.nflows.Load() >= w.flowLimit.Load() {
			dp.removeSetLocked(set)
			return fmt.Errorf("dpnetdev: put %s on worker %d: %w", u, i, dpif.ErrFlowLimit)
		}
		f := &dpFlow{ufid: u, match: set.match, worker: i, created: now}
		f.actions.Store(&acts)
		if err := w.cls.Insert(f.match, f); err != nil {
			dp.removeSetLocked(set)
			return fmt.Errorf("dpnetdev: put %s: %w: %v", u, dpif.ErrExists, err)
		}
		w.nflows.Add(1)
		set.perWork[i] = f
	}
	dp.flows[u] = set
	dp.logFlowChange(u, &m, nil, acts)
	return nil
}

// logFlowChange logs a megaflow's installation (old nil) or new actions
// at debug level as Open vSwitch's log_netdev_flow_change does.
func (dp *Datapath) logFlowChange(u dpif.UFID, m *flow.Match, old *odp.Actions, acts odp.Actions) {
	if !dp.debugLogging() {
		return
	}
	l := dp.cfg.Log
	var b strings.Builder
	if old != nil {
		b.WriteString("flow_mod: ")
	} else {
		b.WriteString("flow_add: ")
	}
	// gvs keeps one UFID per megaflow: it is also the megaflow's.
	fmt.Fprintf(&b, "ufid:%s mega_ufid:%s %s", u, u, m.Format(false))
	if old != nil {
		b.WriteString(", old_actions:")
		b.WriteString(actionsText(*old))
	}
	b.WriteString(", actions:")
	b.WriteString(actionsText(acts))
	l.Debug(b.String())
}

// logPut logs a flow put as Open vSwitch's dpif module: the datapath
// as TYPE@NAME (the type is the name without "ovs-"), the flags, the
// key as given under its mask in full, the actions.
func (dp *Datapath) logPut(fp *dpif.FlowPut) {
	l := dp.cfg.PutLog
	if l == nil || !l.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s@%s: put", strings.TrimPrefix(dp.name, "ovs-"), dp.name)
	for _, f := range []struct {
		flag dpif.PutFlags
		name string
	}{{dpif.PutCreate, "[create]"}, {dpif.PutModify, "[modify]"}, {dpif.PutZeroStats, "[zero]"}} {
		if fp.Flags&f.flag != 0 {
			b.WriteString(f.name)
		}
	}
	b.WriteByte(' ')
	b.WriteString(fp.Match.Format(true))
	b.WriteString(", actions:")
	b.WriteString(actionsText(fp.Actions))
	l.Debug(b.String())
}

// debugLogging reports whether the debug log is on.
func (dp *Datapath) debugLogging() bool {
	l := dp.cfg.Log
	return l != nil && l.Enabled(context.Background(), slog.LevelDebug)
}

// actionsText is format_odp_actions: "drop" for none.
func actionsText(a odp.Actions) string {
	if len(a) == 0 {
		return "drop"
	}
	return a.String()
}

// installFromUpcall installs a megaflow produced by a miss in worker w
// only. It returns the new flow, or nil if not installed (limit, race with
// another put of the same megaflow).
// The debug log shows the packet's own key under the mask (pkt), as Open
// vSwitch's does.
func (dp *Datapath) installFromUpcall(w *worker, u dpif.UFID, m *flow.Match, acts odp.Actions, pkt *flow.Key) *dpFlow {
	if w.id < 0 {
		// The packet-out worker keeps no megaflows: a packet it
		// recirculates that misses is executed with the reply's
		// actions and the next packet of a worker installs them.
		return nil
	}
	if w.nflows.Load() >= w.flowLimit.Load() {
		w.stats.flowLimitHit.Add(1)
		return nil
	}
	dp.mu.Lock()
	defer dp.mu.Unlock()
	set := dp.flows[u]
	if set != nil && set.perWork[w.id] != nil {
		return nil // another upcall in this worker already installed it
	}
	if set != nil {
		m = set.match // share the match of the other workers' copies
	}
	f := &dpFlow{ufid: u, match: m, worker: w.id, created: dp.clock().UnixNano()}
	f.actions.Store(&acts)
	if err := w.cls.Insert(f.match, f); err != nil {
		w.stats.putFail.Add(1)
		return nil
	}
	w.nflows.Add(1)
	if set == nil {
		set = &flowSet{match: m, shown: *pkt, perWork: make([]*dpFlow, len(dp.workers))}
		dp.flows[u] = set
	}
	set.perWork[w.id] = f
	if dp.debugLogging() {
		dp.logFlowChange(u, &flow.Match{Key: *pkt, Mask: m.Mask}, nil, acts)
	}
	return f
}

// removeSetLocked removes every worker copy of a flow set.
func (dp *Datapath) removeSetLocked(set *flowSet) dpif.FlowStats {
	var st dpif.FlowStats
	for i, f := range set.perWork {
		if f == nil {
			continue
		}
		dp.removeCopy(i, f)
		st.Add(f.stats())
		set.perWork[i] = nil
	}
	return st
}

// removeCopy removes worker i's copy of a megaflow. The dead mark makes
// any exact-match cache entry still pointing at it miss at once.
func (dp *Datapath) removeCopy(i int, f *dpFlow) {
	f.dead.Store(true)
	if dp.workers[i].cls.Remove(f.match) {
		dp.workers[i].nflows.Add(-1)
	}
}

// FlowGet returns a megaflow with its counters summed over workers.
func (dp *Datapath) FlowGet(u dpif.UFID) (dpif.Flow, error) {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	set, ok := dp.flows[u]
	if !ok {
		return dpif.Flow{}, fmt.Errorf("dpnetdev: get %s: %w", u, dpif.ErrNotFound)
	}
	return dp.flowOfSet(u, set), nil
}

func (dp *Datapath) flowOfSet(u dpif.UFID, set *flowSet) dpif.Flow {
	f := dpif.Flow{UFID: u, Match: *set.match, Shown: &set.shown}
	for _, wf := range set.perWork {
		if wf == nil {
			continue
		}
		if f.Actions == nil {
			f.Actions = *wf.actions.Load()
		}
		f.Stats.Add(wf.stats())
		f.Workers++
	}
	return f
}

// FlowDel deletes a megaflow from every worker and returns its final
// counters.
func (dp *Datapath) FlowDel(u dpif.UFID) (dpif.FlowStats, error) {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	set, ok := dp.flows[u]
	if !ok {
		return dpif.FlowStats{}, fmt.Errorf("dpnetdev: delete %s: %w", u, dpif.ErrNotFound)
	}
	delete(dp.flows, u)
	return dp.removeSetLocked(set), nil
}

// FlowFlush deletes every megaflow.
func (dp *Datapath) FlowFlush() {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	for u, set := range dp.flows {
		dp.removeSetLocked(set)
		delete(dp.flows, u)
	}
}

// FlowDump calls fn for each megaflow, sorted by UFID for stable output,
// until fn returns false. fn runs without the datapath lock held.
func (dp *Datapath) FlowDump(fn func(f *dpif.Flow) bool) {
	dp.mu.Lock()
	out := make([]dpif.Flow, 0, len(dp.flows))
	for u, set := range dp.flows {
		out = append(out, dp.flowOfSet(u, set))
	}
	dp.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].UFID, out[j].UFID
		for k := range a {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return false
	})
	for i := range out {
		if !fn(&out[i]) {
			return
		}
	}
}

// ExpireIdle removes megaflows (worker copies) unused for longer than
// maxIdle as of now, and returns how many worker copies it removed. The
// sweeper calls it; tests call it with a chosen clock.
func (dp *Datapath) ExpireIdle(now time.Time, maxIdle time.Duration) int {
	limit := now.Add(-maxIdle).UnixNano()
	n := 0
	dp.mu.Lock()
	defer dp.mu.Unlock()
	for u, set := range dp.flows {
		for i, f := range set.perWork {
			if f == nil || f.lastActive() > limit {
				continue
			}
			dp.removeCopy(i, f)
			set.perWork[i] = nil
			n++
		}
		if set.count() == 0 {
			delete(dp.flows, u)
		}
	}
	return n
}

// Execute runs actions on one packet outside the workers (packet-out). It
// is serialised: packet-out is a control-path operation.
func (dp *Datapath) Execute(p *packet.Packet, acts odp.Actions) error {
	if p == nil {
		return errors.New("dpnetdev: execute: nil packet")
	}
	dp.exec.Lock()
	defer dp.exec.Unlock()
	w := dp.execWork
	var k flow.Key
	flow.Extract(p, &k) // sets the header offsets the set actions use
	var b packet.Batch
	b.Add(p)
	w.execute(&b, acts)
	w.flushTx()
	return nil
}

// Stats sums the workers' counters.
func (dp *Datapath) Stats() dpif.Stats {
	var s dpif.Stats
	for _, w := range dp.workers {
		ws := w.stats.load()
		s.EMCHit += ws.EMCHit
		s.MegaflowHit += ws.MegaflowHit
		s.Missed += ws.Missed
		s.Lost += ws.Lost
		s.Recirc += ws.Recirc
		s.UpcallOK += ws.UpcallOK
		s.UpcallFail += ws.UpcallFail
		s.Lookups += ws.Lookups
		s.Masks += uint64(w.cls.Subtables())
	}
	s.Hit = s.EMCHit + s.MegaflowHit
	dp.mu.Lock()
	s.Flows = uint64(len(dp.flows))
	dp.mu.Unlock()
	return s
}

// WorkerStats returns one worker's counters (pmd-stats-show).
func (dp *Datapath) WorkerStats(i int) dpif.Stats {
	if i < 0 || i >= len(dp.workers) {
		return dpif.Stats{}
	}
	return dp.workers[i].stats.load()
}

// Workers returns the number of poll-mode workers.
func (dp *Datapath) Workers() int { return len(dp.workers) }

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
	if !dp.started.CompareAndSwap(false, true) {
		return errors.New("dpnetdev: already started")
	}
	for _, w := range dp.workers {
		if err := w.openPoller(); err != nil {
			return err
		}
	}
	for _, w := range dp.workers {
		dp.wg.Add(1)
		go w.runPoll()
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
			for _, w := range dp.workers {
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
	dp.wg.Wait()
	for _, w := range dp.workers {
		w.closePoller()
	}
	return nil
}

// newClassifier is the classifier constructor (one per worker).
func newClassifier() *dpcls.Classifier[*dpFlow] { return dpcls.New[*dpFlow]() }
