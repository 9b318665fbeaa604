package pmd

// Auto load balance (pmd-auto-lb), as Open vSwitch 3.1's dpif-netdev
// decides it: every PMD interval a non-isolated thread whose load is at
// least the load threshold counts one more overloaded interval (any
// interval below resets the count); every rebalance interval, if some
// thread was overloaded for a whole measurement window, a quick check
// (not round-robin, at least two non-isolated threads of which one polls
// more than one queue; redone only after a reconfiguration) and a dry
// run (the assignment the mode would make now, compared per node by the
// variance of the threads' loads) decide whether to reassign.

// Interval lengths in milliseconds and the window, as Open vSwitch's.
const (
	IntervalMillis = 5000
	IntervalsMax   = 12
)

// ThreadLoad is one PMD thread's measured load over the last interval.
type ThreadLoad struct {
	Core     int
	Isolated bool
	Percent  uint64 // busy share of the interval
}

// ALB is one datapath's auto load balance state. The zero value is a
// datapath that has not run it yet.
type ALB struct {
	timer        int64 // ms; 0: not started
	nextInterval int64
	overloaded   map[int]int // by core: consecutive overloaded intervals
	gen          uint64      // the reconfiguration last checked
	checked      bool
	doDryRun     bool
}

// Disable stops the rebalance timer (the setting was turned off).
func (a *ALB) Disable() { a.timer = 0 }

// Run is one pass of the datapath's main loop at now (milliseconds).
// loads samples the threads' loads (called once per interval); gen is
// the datapath's reconfiguration count; cur is the current assignment,
// rxqs and cores what an assignment would be made from. It returns
// whether the queues should be reassigned.
func (a *ALB) Run(now int64, s *Settings, loads func() []ThreadLoad, gen uint64, cur Assignment, cores []Core, rxqs []RxQ, logf Logf) bool {
	if !s.ALB {
		a.timer = 0
		return false
	}
	if logf == nil {
		logf = func(Level, string, ...any) {}
	}
	if a.overloaded == nil {
		a.overloaded = map[int]int{}
	}
	if now >= a.nextInterval {
		a.nextInterval = now + IntervalMillis
		for _, l := range loads() {
			if l.Isolated {
				continue
			}
			if l.Percent >= uint64(s.ALBLoad) {
				a.overloaded[l.Core]++
			} else {
				a.overloaded[l.Core] = 0
			}
		}
	}
	if a.timer == 0 {
		a.timer = now
		return false
	}
	if a.timer+int64(s.ALBInterval)*60000 >= now {
		return false
	}
	a.timer = now
	rebalance := false
	for _, n := range a.overloaded {
		rebalance = rebalance || n >= IntervalsMax
	}
	if !rebalance || !a.dryRunNeeded(s, gen, cur, logf) || !DryRun(s, cur, cores, rxqs, logf) {
		return false
	}
	logf(Info, "PMD auto load balance dry run. Requesting datapath reconfigure.")
	return true
}

// dryRunNeeded is the quick check, redone only after a reconfiguration.
func (a *ALB) dryRunNeeded(s *Settings, gen uint64, cur Assignment, logf Logf) bool {
	if a.checked && gen == a.gen {
		if !a.doDryRun {
			logf(Debug, "PMD auto load balance nothing to do, no configuration changes since last check.")
			return false
		}
		return true
	}
	a.checked, a.gen = true, gen
	if s.Mode == RoundRobin {
		logf(Debug, "PMD auto load balance nothing to do, pmd-rxq-assign=roundrobin assignment type configured.")
		a.doDryRun = false
		return false
	}
	cnt, multi := 0, false
	for _, t := range cur.Threads {
		if t.Isolated {
			continue
		}
		if len(t.RxQs) > 1 {
			multi = true
		}
		if cnt > 0 && multi {
			a.doDryRun = true
			return true
		}
		cnt++
	}
	logf(Debug, "PMD auto load balance nothing to do, not enough non-isolated PMDs or RxQs.")
	a.doDryRun = false
	return false
}

// DryRun estimates the assignment the mode would make now and reports
// whether it improves the variance of some node's thread loads by the
// improvement threshold, logging each step at debug level.
func DryRun(s *Settings, cur Assignment, cores []Core, rxqs []RxQ, logf Logf) bool {
	logf(Debug, "PMD auto load balance performing dry run.")
	est := Schedule(cores, rxqs, s.Mode, s.Isolate, Debug, logf)
	if est.CrossNUMA() && len(est.Nodes()) != 1 {
		logf(Debug, "PMD auto load balance detected cross-numa polling with multiple numa nodes. Unable to accurately estimate.")
		return false
	}
	met := false
	for _, n := range cur.Nodes() {
		if !hasNode(est, n) {
			continue
		}
		cv, ev := nodeVariance(cur, n), nodeVariance(est, n)
		improvement := uint64(0)
		if ev < cv {
			improvement = (cv - ev) * 100 / cv
		}
		logf(Debug, "Numa node %d. Current variance %d Estimated variance %d. Variance improvement %d%%.", n, cv, ev, improvement)
		if improvement >= uint64(s.ALBImprove) {
			met = true
		}
	}
	state := "not met"
	if met {
		state = "met"
	}
	logf(Debug, "PMD load variance improvement threshold %d%% is %s.", s.ALBImprove, state)
	return met
}

func hasNode(a Assignment, n int) bool {
	for _, t := range a.Threads {
		if t.Core.NUMA == n {
			return true
		}
	}
	return false
}

// nodeVariance is the variance of a node's non-isolated threads' shares
// of the queues' measured cycles (all zero when nothing was measured).
func nodeVariance(a Assignment, n int) uint64 {
	var total uint64
	for _, t := range a.Threads {
		total += t.Cycles
	}
	var busy []uint64
	for _, t := range a.Threads {
		if t.Core.NUMA != n || t.Isolated {
			continue
		}
		p := uint64(0)
		if total > 0 {
			p = t.Cycles * 100 / total
		}
		busy = append(busy, p)
	}
	return variance(busy)
}

// variance is Open vSwitch's integer variance.
func variance(a []uint64) uint64 {
	if len(a) == 0 {
		return 0
	}
	var sum, sq uint64
	for _, v := range a {
		sum += v
	}
	if sum == 0 {
		return 0
	}
	mean := sum / uint64(len(a))
	for _, v := range a {
		d := v - mean
		sq += d * d
	}
	return sq / uint64(len(a))
}
