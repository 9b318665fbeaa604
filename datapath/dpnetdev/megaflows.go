package dpnetdev

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/internal/logrl"
)

// megaflows owns the datapath's flow index: every megaflow by UFID with
// its per-worker copies, and the puts, deletes, dumps and idle expiry
// that keep the workers' classifiers in step with it. mu guards the
// index and the copies' zeroed-counter bases; it is taken before any
// classifier's writer lock. The workers' packet path reads only their
// own classifier; a miss installs through installFromUpcall.
type megaflows struct {
	mu      sync.Mutex
	byUFID  map[dpif.UFID]*flowSet
	workers []*worker // guarded by mu; replaced by setWorkers

	dpName string       // for the put log's TYPE@NAME
	log    *slog.Logger // flow_add/flow_mod debug log; may be nil
	putLog *slog.Logger // the dpif put log; may be nil
	// badInPort limits the error for puts whose in_port is not exact
	// (Open vSwitch's 1 a minute, bursts of 5).
	badInPort *logrl.Limit
}

func newMegaflows(dpName string, cfg *dpif.Config, workers []*worker) *megaflows {
	return &megaflows{
		byUFID:  make(map[dpif.UFID]*flowSet),
		workers: workers,
		dpName:  dpName,
		log:     cfg.Log,
		putLog:  cfg.PutLog,

		badInPort: logrl.New(1, 5),
	}
}

// put installs or modifies a megaflow in every worker; now stamps new
// copies' creation time.
func (t *megaflows) put(fp *dpif.FlowPut, now int64) error {
	t.logPut(fp)
	if fp.Match.Mask.InPort != ^uint32(0) {
		// Every megaflow is looked up in its input port's classifier.
		if t.log != nil && t.badInPort.Allow(t.log, slog.LevelError, now/1e6) {
			t.log.Error(fmt.Sprintf("failed to put%s flow: in_port is not an exact match", putFlagsText(fp.Flags)))
		}
		return fmt.Errorf("dpnetdev: put: in_port is not an exact match: %w", dpif.ErrInvalid)
	}
	m := fp.Match
	m.Mask.MatchVLANPresence()
	m.Normalize()
	u := fp.UFID
	if u == (dpif.UFID{}) {
		u = dpif.UFIDFromMatch(&m)
	}
	acts := fp.Actions
	t.mu.Lock()
	defer t.mu.Unlock()
	if set, ok := t.byUFID[u]; ok {
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
			t.logFlowChange(u, set.match, old, acts)
		}
		return nil
	}
	if fp.Flags&dpif.PutCreate == 0 {
		return fmt.Errorf("dpnetdev: modify %s: %w", u, dpif.ErrNotFound)
	}
	set := &flowSet{match: &m, shown: fp.Match.Key, perWork: make([]*dpFlow, len(t.workers))}
	for i, w := range t.workers {
		if w.nflows.Load() >= w.flowLimit.Load() {
			t.removeSetLocked(set)
			return fmt.Errorf("dpnetdev: put %s on worker %d: %w", u, i, dpif.ErrFlowLimit)
		}
		f := &dpFlow{ufid: u, match: set.match, worker: i, created: now}
		f.actions.Store(&acts)
		if err := w.cls.Insert(f.match, f); err != nil {
			t.removeSetLocked(set)
			return fmt.Errorf("dpnetdev: put %s: %w: %v", u, dpif.ErrExists, err)
		}
		w.nflows.Add(1)
		set.perWork[i] = f
	}
	t.byUFID[u] = set
	t.logFlowChange(u, &m, nil, acts)
	return nil
}

// logFlowChange logs a megaflow's installation (old nil) or new actions
// at debug level as Open vSwitch's log_netdev_flow_change does.
func (t *megaflows) logFlowChange(u dpif.UFID, m *flow.Match, old *odp.Actions, acts odp.Actions) {
	if !t.debugLogging() {
		return
	}
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
	t.log.Debug(b.String())
}

// logPut logs a flow put as Open vSwitch's dpif module: the datapath
// as TYPE@NAME (the type is the name without "ovs-"), the flags, the
// key as given under its mask in full, the actions.
func (t *megaflows) logPut(fp *dpif.FlowPut) {
	l := t.putLog
	if l == nil || !l.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s@%s: put%s ", strings.TrimPrefix(t.dpName, "ovs-"), t.dpName, putFlagsText(fp.Flags))
	b.WriteString(fp.Match.Format(true))
	b.WriteString(", actions:")
	b.WriteString(actionsText(fp.Actions))
	l.Debug(b.String())
}

// putFlagsText is a put's flags as Open vSwitch's logs write them.
func putFlagsText(f dpif.PutFlags) string {
	var b strings.Builder
	for _, x := range []struct {
		flag dpif.PutFlags
		name string
	}{{dpif.PutCreate, "[create]"}, {dpif.PutModify, "[modify]"}, {dpif.PutZeroStats, "[zero]"}} {
		if f&x.flag != 0 {
			b.WriteString(x.name)
		}
	}
	return b.String()
}

// debugLogging reports whether the debug log is on.
func (t *megaflows) debugLogging() bool {
	return t.log != nil && t.log.Enabled(context.Background(), slog.LevelDebug)
}

// actionsText is format_odp_actions: "drop" for none.
func actionsText(a odp.Actions) string {
	if len(a) == 0 {
		return "drop"
	}
	return a.String()
}

// installFromUpcall installs a megaflow produced by a miss in worker w
// only, created at clock(). It returns the new flow, or nil if not
// installed (limit, race with another put of the same megaflow).
// The debug log shows the packet's own key under the mask (pkt), as Open
// vSwitch's does.
func (t *megaflows) installFromUpcall(w *worker, u dpif.UFID, m *flow.Match, acts odp.Actions, pkt *flow.Key, clock func() time.Time) *dpFlow {
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
	t.mu.Lock()
	defer t.mu.Unlock()
	set := t.byUFID[u]
	if set != nil && set.perWork[w.id] != nil {
		return nil // another upcall in this worker already installed it
	}
	if set != nil {
		m = set.match // share the match of the other workers' copies
	}
	f := &dpFlow{ufid: u, match: m, worker: w.id, created: clock().UnixNano()}
	f.actions.Store(&acts)
	if err := w.cls.Insert(f.match, f); err != nil {
		w.stats.putFail.Add(1)
		return nil
	}
	w.nflows.Add(1)
	if set == nil {
		set = &flowSet{match: m, shown: *pkt, perWork: make([]*dpFlow, len(t.workers))}
		t.byUFID[u] = set
	}
	set.perWork[w.id] = f
	if t.debugLogging() {
		t.logFlowChange(u, &flow.Match{Key: *pkt, Mask: m.Mask}, nil, acts)
	}
	return f
}

// removeSetLocked removes every worker copy of a flow set.
func (t *megaflows) removeSetLocked(set *flowSet) dpif.FlowStats {
	var st dpif.FlowStats
	for i, f := range set.perWork {
		if f == nil {
			continue
		}
		t.removeCopy(i, f)
		st.Add(f.stats())
		set.perWork[i] = nil
	}
	return st
}

// removeCopy removes worker i's copy of a megaflow. The dead mark makes
// any exact-match cache entry still pointing at it miss at once.
func (t *megaflows) removeCopy(i int, f *dpFlow) {
	f.dead.Store(true)
	if t.workers[i].cls.Remove(f.match) {
		t.workers[i].nflows.Add(-1)
	}
}

// get returns a megaflow with its counters summed over workers.
func (t *megaflows) get(u dpif.UFID) (dpif.Flow, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	set, ok := t.byUFID[u]
	if !ok {
		return dpif.Flow{}, fmt.Errorf("dpnetdev: get %s: %w", u, dpif.ErrNotFound)
	}
	return set.flow(u), nil
}

// flow describes the set's megaflow with its counters summed over the
// workers' copies. Callers hold megaflows.mu.
func (set *flowSet) flow(u dpif.UFID) dpif.Flow {
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

// del deletes a megaflow from every worker and returns its final
// counters.
func (t *megaflows) del(u dpif.UFID) (dpif.FlowStats, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	set, ok := t.byUFID[u]
	if !ok {
		return dpif.FlowStats{}, fmt.Errorf("dpnetdev: delete %s: %w", u, dpif.ErrNotFound)
	}
	delete(t.byUFID, u)
	return t.removeSetLocked(set), nil
}

// flush deletes every megaflow.
func (t *megaflows) flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for u, set := range t.byUFID {
		t.removeSetLocked(set)
		delete(t.byUFID, u)
	}
}

// dump calls fn for each megaflow, sorted by UFID for stable output,
// until fn returns false. fn runs without mu held. Each flow is logged at
// the dpif module's debug level as Open vSwitch's dpif_flow_dump_next
// logs it: terse says the dump is by UFID only (the revalidator's, while
// upcall/enable-ufid), so the line has no key.
func (t *megaflows) dump(fn func(f *dpif.Flow) bool, terse bool, now time.Time) {
	t.mu.Lock()
	out := make([]dpif.Flow, 0, len(t.byUFID))
	for u, set := range t.byUFID {
		out = append(out, set.flow(u))
	}
	t.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].UFID, out[j].UFID
		for k := range a {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return false
	})
	logDump := t.putLog != nil && t.putLog.Enabled(context.Background(), slog.LevelDebug)
	for i := range out {
		if logDump {
			t.putLog.Debug(fmt.Sprintf("%s@%s: %s", strings.TrimPrefix(t.dpName, "ovs-"), t.dpName, dpif.FormatDumpLog(&out[i], now, terse)))
		}
		if !fn(&out[i]) {
			return
		}
	}
}

// expireIdle removes worker copies unused for longer than maxIdle as of
// now and returns how many it removed.
func (t *megaflows) expireIdle(now time.Time, maxIdle time.Duration) int {
	limit := now.Add(-maxIdle).UnixNano()
	n := 0
	t.mu.Lock()
	defer t.mu.Unlock()
	for u, set := range t.byUFID {
		for i, f := range set.perWork {
			if f == nil || f.lastActive() > limit {
				continue
			}
			t.removeCopy(i, f)
			set.perWork[i] = nil
			n++
		}
		if set.count() == 0 {
			delete(t.byUFID, u)
		}
	}
	return n
}

// setWorkers flushes every megaflow and makes ws the workers that hold
// copies from now on (the PMD threads changed; their replacements start
// with empty tables, as new PMD threads do in Open vSwitch).
func (t *megaflows) setWorkers(ws []*worker) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for u, set := range t.byUFID {
		t.removeSetLocked(set)
		delete(t.byUFID, u)
	}
	t.workers = ws
}

// len returns the number of megaflows (UFIDs, not worker copies).
func (t *megaflows) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byUFID)
}

// dumpWorker calls fn for each megaflow worker i holds, with that copy's
// counters only, sorted by UFID, until fn returns false.
func (t *megaflows) dumpWorker(i int, fn func(f *dpif.Flow) bool) {
	t.mu.Lock()
	var out []dpif.Flow
	for u, set := range t.byUFID {
		if i >= len(set.perWork) || set.perWork[i] == nil {
			continue
		}
		wf := set.perWork[i]
		out = append(out, dpif.Flow{UFID: u, Match: *set.match, Shown: &set.shown, Actions: *wf.actions.Load(), Stats: wf.stats(), Workers: 1})
	}
	t.mu.Unlock()
	sort.Slice(out, func(a, b int) bool {
		x, y := out[a].UFID, out[b].UFID
		for k := range x {
			if x[k] != y[k] {
				return x[k] < y[k]
			}
		}
		return false
	})
	for k := range out {
		if !fn(&out[k]) {
			return
		}
	}
}
