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
// It reads and sets only the Go runtime; it must not import the switch's
// packages. A process has one collector, so a process runs one Tuner.
package heapgoal

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
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
	t.arm()
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

// arm allocates a sentinel whose cleanup, run once a collection found it
// unreachable, adjusts the goal and arms the next.
func (t *Tuner) arm() {
	s := new(sentinel)
	runtime.AddCleanup(s, func(t *Tuner) {
		if t.ctx.Err() != nil {
			return
		}
		t.adjust(true)
		t.arm()
	}, t)
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
