package backer

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/ofproto/lacp"
)

// warpClock is the time the bonds and their LACP run on: the monotonic
// clock plus what time/warp added beyond the real time it waited (a warp
// longer than the longest real wait, such as the 30 s Open vSwitch's
// tests wait for LACP's slow rate, still moves LACP on by all of it).
type warpClock struct{ offset atomic.Int64 }

// Now is the time in milliseconds.
func (c *warpClock) Now() int64 { return lacp.SystemClock{}.Now() + c.offset.Load() }

// Warp moves the bonds' clock on by d, in steps of step (the bonds run
// after each, as Open vSwitch's main loop runs once per warp step), after
// time/warp waited what it could in real time.
func (s *Backer) Warp(d, step time.Duration) {
	if step <= 0 {
		step = d
	}
	for d > 0 {
		n := min(step, d)
		s.bnd.clock.offset.Add(n.Milliseconds())
		d -= n
		s.mu.Lock()
		running := s.bnd.started
		s.mu.Unlock()
		if running {
			s.bnd.runOnce()
		}
		s.runMcast()  // mcast.go
		s.albOnce()   // alb.go
		s.WarpStep(n) // cfm.go: a stopped CFM clock moves on too
	}
}

// every runs fn each period in real time until the backer stops (the
// periodic work of Open vSwitch's main loop: auto load balance,
// multicast snooping ages).
func (s *Backer) every(period time.Duration, fn func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-t.C:
				fn()
			}
		}
	}()
}

// sleepOrWake waits on timer t, reset to d (at least 0), until it fires
// or wake does; it reports false when ctx ends first. The protocol
// monitors (BFD, CFM) sleep until their next session's deadline this way.
func sleepOrWake(ctx context.Context, t *time.Timer, d time.Duration, wake <-chan struct{}) bool {
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
	t.Reset(max(d, 0))
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case <-wake:
	}
	return true
}
