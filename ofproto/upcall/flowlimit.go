package upcall

import (
	"sync"
	"sync/atomic"
	"time"
)

// Dynamic flow limit, as Open vSwitch's udpif keeps it
// (ofproto-dpif-upcall.c, udpif_revalidator): the number of megaflows a
// datapath may hold is not only other_config:flow-limit but a limit that
// shrinks when a revalidation round gets slow (so that revalidation keeps
// up with the megaflows it must check) and grows back by 1,000 per fast
// round while it is the bottleneck. Misses over the limit are executed
// but not installed.
const (
	// DefaultFlowLimit is other_config:flow-limit's default.
	DefaultFlowLimit = 200000
	// flowLimitStart is the limit a datapath starts with (Open vSwitch:
	// the smaller of 10,000 and the configured limit).
	flowLimitStart = 10000
	// flowLimitFloor is the least a slow round can shrink the limit to.
	flowLimitFloor = 1000
	// flowLimitStep is what a fast round adds.
	flowLimitStep = 1000
	// killAllFactor: over this many times the limit, a round deletes
	// every megaflow it dumps (Open vSwitch's emergency measure).
	killAllFactor = 2
	// overLimitMaxIdle is the idle time after which megaflows are
	// deleted while there are more than the limit.
	overLimitMaxIdle = 100 * time.Millisecond
)

// FlowLimit is a datapath's dynamic megaflow limit. One is shared by the
// bridges of a datapath (Config.FlowLimit), as Open vSwitch's udpif is per
// datapath. It is safe for concurrent use: misses read the limit without
// locks.
type FlowLimit struct {
	limit atomic.Int64  // current dynamic limit
	hits  atomic.Uint64 // misses not installed because of the limit
	kills atomic.Uint64 // megaflows deleted because of the limit

	mu      sync.Mutex
	ceiling int // other_config:flow-limit
	avg     int // running average of the flow count at round starts
	max     int // largest flow count seen at a round start
	dump    time.Duration
	// lastRound is when the last adjustment was made: bridges sharing a
	// datapath each run rounds over all of its megaflows, and only one
	// adjustment per interval is made from them, as by Open vSwitch's
	// single leader revalidator.
	lastRound time.Time
}

// NewFlowLimit returns a limit bounded by ceiling (other_config:flow-limit;
// <= 0 means DefaultFlowLimit), starting at the smaller of the ceiling
// and 10,000.
func NewFlowLimit(ceiling int) *FlowLimit {
	l := &FlowLimit{}
	l.SetCeiling(ceiling)
	return l
}

// SetCeiling changes other_config:flow-limit. A smaller ceiling lowers
// the current limit at once; a larger one lets later rounds grow it.
func (l *FlowLimit) SetCeiling(ceiling int) {
	if ceiling <= 0 {
		ceiling = DefaultFlowLimit
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ceiling == 0 {
		l.limit.Store(int64(min(ceiling, flowLimitStart)))
	} else if int64(ceiling) < l.limit.Load() {
		l.limit.Store(int64(ceiling))
	}
	l.ceiling = ceiling
}

// Limit returns the current dynamic limit.
func (l *FlowLimit) Limit() int { return int(l.limit.Load()) }

// Set forces the current limit (upcall/set-flow-limit); the next round
// adjusts from it.
func (l *FlowLimit) Set(n int) {
	if n < 0 {
		n = 0
	}
	l.limit.Store(int64(n))
}

// Admit reports whether a miss may install a megaflow in a datapath
// holding nflows; a refusal is counted.
func (l *FlowLimit) Admit(nflows int) bool {
	if int64(nflows) < l.limit.Load() {
		return true
	}
	l.hits.Add(1)
	return false
}

// Round records a revalidation round that found nflows megaflows when it
// started and took d, and adjusts the limit: divided by the whole seconds
// of a round over 2 s, cut by a quarter after 1.3 s, raised by 1,000 after
// a round under 1 s while the limit is below the rate at which the round
// got through the megaflows; kept between 1,000 (or the ceiling, if
// smaller) and the ceiling. It returns the new limit.
func (l *FlowLimit) Round(nflows int, d time.Duration) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.roundLocked(nflows, d)
}

// roundIfDue is Round for a bridge's revalidator: it adjusts only if no
// other bridge of the datapath did within the last minGap, and reports
// whether it did.
func (l *FlowLimit) roundIfDue(now time.Time, minGap time.Duration, nflows int, d time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.lastRound.IsZero() && now.Sub(l.lastRound) < minGap {
		return false
	}
	l.lastRound = now
	l.roundLocked(nflows, d)
	return true
}

func (l *FlowLimit) roundLocked(nflows int, d time.Duration) int {
	l.max = max(l.max, nflows)
	l.avg = (l.avg + nflows) / 2
	ms := max(d.Milliseconds(), 1)
	l.dump = time.Duration(ms) * time.Millisecond
	limit := l.limit.Load()
	switch {
	case ms > 2000:
		limit /= ms / 1000
	case ms > 1300:
		limit = limit * 3 / 4
	case ms < 1000 && limit < int64(nflows)*1000/ms:
		limit += flowLimitStep
	}
	limit = min(int64(l.ceiling), max(limit, flowLimitFloor))
	l.limit.Store(limit)
	return int(limit)
}

// FlowLimitStatus is what upcall/show prints of a datapath's flows.
type FlowLimitStatus struct {
	Avg, Max, Limit int
	// DumpDuration is the duration of the last revalidation round.
	DumpDuration time.Duration
	// Hits counts misses not installed because of the limit; Kills
	// megaflows deleted because the datapath was over it.
	Hits, Kills uint64
}

// Status returns the limit and the statistics upcall/show prints.
func (l *FlowLimit) Status() FlowLimitStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	return FlowLimitStatus{Avg: l.avg, Max: l.max, Limit: l.Limit(), DumpDuration: l.dump,
		Hits: l.hits.Load(), Kills: l.kills.Load()}
}

// overLimitPolicy is how a round treats megaflows while the datapath
// holds more than the limit: idle ones go after 100 ms instead of
// max-idle, and over twice the limit every megaflow goes.
type overLimitPolicy struct {
	over, killAll bool
}

func (l *FlowLimit) policy(nflows int) overLimitPolicy {
	limit := l.limit.Load()
	return overLimitPolicy{over: int64(nflows) > limit, killAll: int64(nflows) > killAllFactor*limit}
}

// idleSince returns how long a megaflow has not been used as of now (since
// it was made, if never).
func idleSince(st time.Time, created, now time.Time) time.Duration {
	if st.IsZero() {
		st = created
	}
	return now.Sub(st)
}
