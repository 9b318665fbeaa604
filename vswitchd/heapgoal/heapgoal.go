// Package heapgoal owns how far gvs-vswitchd's Go heap may grow past what
// the last garbage collection found live: the collector's goal.
//
// Go's default (GOGC=100) lets the heap double before it collects. For a
// switch whose live heap is mostly long-lived state (OpenFlow rules,
// MAC and conntrack tables) and whose packet path allocates nothing, that
// headroom is resident memory held for garbage the daemon rarely makes:
// at OVN scale it was more than half of the memory per rule. A Tuner
// keeps the headroom to a percentage of the live heap, but never below a
// floor in bytes, so that a small switch collects no more often than
// with the floor of slack, and never above Go's default: after each
// collection it sets the collector's percentage from the live heap.
//
// The headroom stays resident after the work that needed it is over, full
// of garbage no collection comes to find while the daemon is quiet (its
// packet path allocates nothing). Once a period passes with almost no
// allocation, a Trimmer collects and returns the free heap to the
// operating system, as ovn-controller trims its memory after an idle
// period (ovn-trim-timeout-ms). The goal is unchanged, so the next burst
// of work grows the heap again without collecting more often.
//
// It reads and sets only the Go runtime; it must not import the switch's
// packages. A process has one collector, so a process runs one Tuner and
// one Trimmer.
package heapgoal

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// DefaultPercent is Go's own headroom (GOGC=100), the most a Tuner allows.
const DefaultPercent = 100

// Policy is the headroom a Tuner keeps.
type Policy struct {
	// Percent of the live heap (1 to 100, less taken as 1; 100 is Go's
	// default).
	Percent int
	// Min bytes of headroom, whatever the live heap.
	Min uint64
}

// GCPercent is the collector percentage that gives live bytes of live
// heap the policy's headroom: Percent, or more while Percent of live is
// below Min, and at most DefaultPercent.
func (p Policy) GCPercent(live uint64) int {
	if live == 0 {
		return DefaultPercent
	}
	percent := uint64(min(max(p.Percent, 1), DefaultPercent))
	head := max(live/100*percent, p.Min)
	pct := (head*100 + live - 1) / live
	return int(min(max(pct, percent), DefaultPercent))
}

// Tuner applies a Policy to the process's collector.
type Tuner struct {
	p       Policy
	ctx     context.Context
	sample  []metrics.Sample
	mu      sync.Mutex
	current int
	cycles  uint64
}

// Start applies p after every collection until ctx ends, then restores
// Go's default. It first applies p to the live heap found so far.
func Start(ctx context.Context, p Policy) *Tuner {
	t := &Tuner{p: p, ctx: ctx, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}, current: -1}
	t.adjust(false)
	afterEachCollection(ctx, func() { t.adjust(true) })
	context.AfterFunc(ctx, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		debug.SetGCPercent(DefaultPercent)
		t.current = DefaultPercent
	})
	return t
}

// sentinel is an object whose collection marks the end of a GC cycle (not
// tiny-allocated: it holds a pointer).
type sentinel struct {
	_ *int
	_ [2]uint64
}

// afterEachCollection calls fn, on the runtime's cleanup goroutine, after
// every garbage collection until ctx ends: each call allocates the
// sentinel that the next collection finds unreachable.
func afterEachCollection(ctx context.Context, fn func()) {
	s := new(sentinel)
	runtime.AddCleanup(s, func(struct{}) {
		if ctx.Err() != nil {
			return
		}
		fn()
		afterEachCollection(ctx, fn)
	}, struct{}{})
}

// adjust sets the percentage for the live heap the last collection found
// (collected: called after one).
func (t *Tuner) adjust(collected bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ctx.Err() != nil {
		return
	}
	metrics.Read(t.sample)
	live := uint64(0)
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		live = t.sample[0].Value.Uint64()
	}
	if collected {
		t.cycles++
	}
	if pct := t.p.GCPercent(live); pct != t.current {
		debug.SetGCPercent(pct)
		t.current = pct
	}
}

// Current returns the collector percentage last set and the number of
// collections the tuner has seen.
func (t *Tuner) Current() (percent int, cycles uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.current, t.cycles
}

// Trimmer returns the heap's free memory and its garbage to the operating
// system once the daemon has been quiet for a period.
type Trimmer struct {
	period time.Duration
	min    uint64
	// allocs holds the allocation counter at the last trimSteps+1 checks,
	// a check every period/trimSteps: the window is one period, and a
	// trim comes at most a step after the period that made it quiet.
	allocs [trimSteps + 1]uint64
	next   int // where the next check's counter goes
	mu     sync.Mutex
	trims  uint64
	freed  uint64
}

// minTrim is the smallest threshold a Trimmer takes: 1 MiB, so that a
// quiet period is one with less than 256 KiB allocated.
const minTrim = 1 << 20

// trimSteps is how many checks a Trimmer makes per period.
const trimSteps = 5

// StartTrim checks, until ctx ends, whether the daemon was quiet for the
// last period (allocated less than a quarter of min during it) and, if so,
// whether at least min bytes of the heap are free or garbage; then it
// collects and returns them to the system. min is at least minTrim (a
// smaller one would have no quiet period: the daemon always allocates a
// little). period <= 0 never trims.
func StartTrim(ctx context.Context, period time.Duration, min uint64) *Trimmer {
	t := &Trimmer{period: period, min: max(min, minTrim)}
	if period <= 0 {
		return t
	}
	t.restart()
	go func() {
		tick := time.NewTicker(max(period/trimSteps, time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				t.check()
			}
		}
	}()
	return t
}

// read returns the allocation counter and the bytes a collection and a
// trim would return: the free heap, and what was allocated since the last
// collection beyond what it found live (an upper bound on the garbage).
func (t *Trimmer) read() (allocs, reclaimable uint64) {
	s := [...]metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},              // allocated since start
		{Name: "/gc/heap/live:bytes"},                // found live by the last collection
		{Name: "/memory/classes/heap/objects:bytes"}, // live, and garbage not yet collected
		{Name: "/memory/classes/heap/free:bytes"},    // free and resident
	}
	metrics.Read(s[:])
	var v [len(s)]uint64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = s[i].Value.Uint64()
		}
	}
	allocs, live, objects, free := v[0], v[1], v[2], v[3]
	reclaimable = free
	if objects > live {
		reclaimable += objects - live
	}
	return allocs, reclaimable
}

// restart starts a window: a whole period has to pass before a trim.
func (t *Trimmer) restart() {
	allocs, _ := t.read()
	for i := range t.allocs {
		t.allocs[i] = allocs
	}
}

// check is one step: the window's oldest counter is a period old.
func (t *Trimmer) check() {
	allocs, reclaimable := t.read()
	t.allocs[t.next] = allocs
	t.next = (t.next + 1) % len(t.allocs)
	busy := allocs-t.allocs[t.next] >= t.min/4
	if busy || reclaimable < t.min {
		return
	}
	debug.FreeOSMemory()
	t.restart()
	t.mu.Lock()
	t.trims++
	t.freed += reclaimable
	t.mu.Unlock()
}

// Trims returns how many times the heap was trimmed and the bytes each
// trim expected to return, summed.
func (t *Trimmer) Trims() (n, freed uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.trims, t.freed
}
