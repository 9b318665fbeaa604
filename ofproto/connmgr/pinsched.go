package connmgr

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/ofproto/ofconn"
)

// Packet-in rate limiting (Controller.controller_rate_limit and
// controller_burst_limit), as Open vSwitch's pinsched: a token bucket per
// connection and kind of packet-in (table miss or action); a packet-in
// that finds tokens and no backlog goes out at once ("bypassed"), others
// wait in a per-input-port queue ("queued") drained round-robin as tokens
// accrue, and when the backlog reaches the burst the longest port queue
// loses its oldest packet-in ("dropped"), so one flooding port cannot
// starve the others.

// pinLimits are a controller's rate (packet-ins per second) and burst.
type pinLimits struct {
	Rate, Burst int
}

// adjust applies Open vSwitch's defaults: rate 1000 when unset, burst a
// quarter of the rate, at least 1.
func (l pinLimits) adjust() pinLimits {
	if l.Rate <= 0 {
		l.Rate = 1000
	}
	if l.Burst <= 0 {
		l.Burst = l.Rate / 4
	}
	if l.Burst < 1 {
		l.Burst = 1
	}
	return l
}

// pinStats are a scheduler's counters, as Controller.status reports them
// (packet-in-KIND-backlog, -bypassed, -queued, -dropped).
type pinStats struct {
	Backlog                   int
	Bypassed, Queued, Dropped uint64
}

// pinsched schedules one kind of packet-in on one connection.
type pinsched struct {
	mu      sync.Mutex
	lim     pinLimits
	tokens  float64 // packet-ins that may go out now, at most lim.Burst
	last    time.Time
	queues  map[uint32][]func() // by OpenFlow in_port
	order   []uint32            // ports with a queue, in round-robin order
	next    int
	backlog int
	stats   pinStats
	now     func() time.Time
	// kick starts the drain when packet-ins are queued (nil in tests that
	// drain by hand).
	kick func()
}

func newPinsched(l pinLimits, now func() time.Time) *pinsched {
	if now == nil {
		now = time.Now
	}
	l = l.adjust()
	return &pinsched{lim: l, tokens: float64(l.Burst), last: now(), queues: map[uint32][]func(){}, now: now}
}

// setLimits changes the limits; a backlog beyond the new burst is
// dropped.
func (p *pinsched) setLimits(l pinLimits) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lim = l.adjust()
	p.tokens = min(p.tokens, float64(p.lim.Burst))
	for p.backlog > p.lim.Burst {
		p.dropLongest()
	}
}

// refill adds the tokens accrued since the last call. Called with p.mu.
func (p *pinsched) refill() {
	now := p.now()
	if d := now.Sub(p.last); d > 0 {
		p.tokens = min(float64(p.lim.Burst), p.tokens+d.Seconds()*float64(p.lim.Rate))
	}
	p.last = now
}

// send sends a packet-in from in_port port now, or queues it.
func (p *pinsched) send(port uint32, emit func()) {
	p.mu.Lock()
	p.refill()
	if p.backlog == 0 && p.tokens >= 1 {
		p.tokens--
		p.stats.Bypassed++
		p.mu.Unlock()
		emit()
		return
	}
	if p.backlog >= p.lim.Burst {
		p.dropLongest()
	}
	if len(p.queues[port]) == 0 {
		p.order = append(p.order, port)
	}
	p.queues[port] = append(p.queues[port], emit)
	p.backlog++
	p.stats.Queued++
	kick := p.kick
	p.mu.Unlock()
	if kick != nil {
		kick()
	}
}

// dropLongest drops the oldest packet-in of the longest queue. Called
// with p.mu.
func (p *pinsched) dropLongest() {
	best, n := uint32(0), 0
	for _, port := range p.order {
		if l := len(p.queues[port]); l > n {
			best, n = port, l
		}
	}
	if n == 0 {
		return
	}
	p.pop(best)
	p.stats.Dropped++
}

// pop removes the head of port's queue. Called with p.mu.
func (p *pinsched) pop(port uint32) func() {
	q := p.queues[port]
	f := q[0]
	q[0] = nil
	if len(q) == 1 {
		delete(p.queues, port)
		for i, o := range p.order {
			if o == port {
				p.order = append(p.order[:i], p.order[i+1:]...)
				if p.next > i {
					p.next--
				}
				break
			}
		}
	} else {
		p.queues[port] = q[1:]
	}
	p.backlog--
	return f
}

// drain sends queued packet-ins the tokens allow (at most 50 per call, as
// Open vSwitch), round-robin over ports, and returns how long until the
// next token (0 when nothing is queued).
func (p *pinsched) drain() time.Duration {
	var out []func()
	p.mu.Lock()
	p.refill()
	for i := 0; i < 50 && p.backlog > 0 && p.tokens >= 1; i++ {
		if p.next >= len(p.order) {
			p.next = 0
		}
		port := p.order[p.next]
		p.next++
		out = append(out, p.pop(port))
		p.tokens--
	}
	wait := time.Duration(0)
	if p.backlog > 0 {
		wait = time.Duration((1 - min(p.tokens, 1)) / float64(p.lim.Rate) * float64(time.Second))
		wait = max(wait, time.Millisecond)
	}
	p.mu.Unlock()
	for _, f := range out {
		f()
	}
	return wait
}

func (p *pinsched) pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.backlog
}

func (p *pinsched) snapshot() pinStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Backlog = p.backlog
	return s
}

// RateLimit is a controller target's packet-in rate limit: packets per
// second and burst (0: a quarter of the rate).
type RateLimit struct{ Rate, Burst int }

// pinLimits holds a bridge's configured limits by controller target.
type pinLimitSet struct {
	on     atomic.Bool
	mu     sync.Mutex
	limits map[string]RateLimit
}

func (l *pinLimitSet) setLimits(m map[string]RateLimit) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.limits = m
	l.on.Store(len(m) > 0)
}

// active reports whether any target is rate limited (one atomic load on
// the packet-in path otherwise).
func (l *pinLimitSet) active() bool { return l.on.Load() }

func (l *pinLimitSet) get(target string) (RateLimit, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.limits[target]
	return r, ok
}

// pinsched returns the scheduler for packet-ins of kind miss (or action)
// on connection c, or nil when s is not a controller
// connection with a rate limit: an active one, or one accepted on a
// passive controller target (each such connection has its own
// schedulers, as Open vSwitch's ofconns of a service). The management
// socket is never limited.
func (m *Manager[X]) pinsched(c *Conn[X], miss bool) *pinsched {
	s := c.Sender
	m.mu.Lock()
	var target string
	var cs *ctlState
	for t, cst := range m.ctlStates {
		cst.mu.Lock()
		if cst.conn == s {
			target, cs = t, cst
		}
		cst.mu.Unlock()
		if cs != nil {
			break
		}
	}
	if cs == nil {
		if lc, ok := s.(listenerConn); ok && lc.Listener() != nil {
			for t, l := range m.passive {
				if l == lc.Listener() {
					target = t
				}
			}
		}
	}
	m.mu.Unlock()
	if cs == nil {
		if target == "" {
			return nil
		}
		return m.passivePinsched(target, c, miss)
	}
	lim, ok := m.pins.get(target)
	if !ok {
		return nil
	}
	l := pinLimits{Rate: lim.Rate, Burst: lim.Burst}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.pins == nil || cs.pinsConn != s {
		// A new connection starts with fresh schedulers, as Open
		// vSwitch's per-ofconn ones.
		cs.pins = &[2]*pinsched{newPinsched(l, nil), newPinsched(l, nil)}
		cs.pinsConn = s
		for _, p := range cs.pins {
			p.kick = m.drainer(p)
		}
	} else {
		for _, p := range cs.pins {
			p.setLimits(l)
		}
	}
	i := 0
	if miss {
		i = 1
	}
	return cs.pins[i]
}

// drainer returns a kick function that sends p's backlog as tokens
// accrue, from one goroutine at a time, until the backlog is empty or the
// bridge closes.
func (m *Manager[X]) drainer(p *pinsched) func() {
	var running atomic.Bool
	return func() {
		if !running.CompareAndSwap(false, true) {
			return
		}
		go func() {
			for {
				wait := p.drain()
				if wait == 0 {
					running.Store(false)
					// A packet-in queued after the last drain found
					// the drainer still running: take it over.
					if p.pending() == 0 || !running.CompareAndSwap(false, true) {
						return
					}
					continue
				}
				select {
				case <-m.ctx.Done():
					running.Store(false)
					return
				case <-time.After(wait):
				}
			}
		}()
	}
}

// passivePinsched is pinsched for a connection accepted on passive
// target; its schedulers live in its Conn.
func (m *Manager[X]) passivePinsched(target string, st *Conn[X], miss bool) *pinsched {
	lim, ok := m.pins.get(target)
	if !ok {
		return nil
	}
	l := pinLimits{Rate: lim.Rate, Burst: lim.Burst}
	st.pinMu.Lock()
	defer st.pinMu.Unlock()
	if st.pins == nil {
		st.pins = &[2]*pinsched{newPinsched(l, nil), newPinsched(l, nil)}
		for _, p := range st.pins {
			p.kick = m.drainer(p)
		}
	} else {
		for _, p := range st.pins {
			p.setLimits(l)
		}
	}
	if miss {
		return st.pins[1]
	}
	return st.pins[0]
}

// listenerConn is a connection accepted on a listener (*ofconn.Conn).
type listenerConn interface{ Listener() net.Listener }

var _ listenerConn = (*ofconn.Conn)(nil)

// SendPacketIn sends a packet-in to c with send, through the packet-in
// rate limit of c's controller target if it has one (miss: the
// scheduler of table-miss packet-ins, else that of the others); port is
// the packet's input port, which the scheduler queues by.
func (m *Manager[X]) SendPacketIn(c *Conn[X], port uint32, miss bool, send func()) {
	if m.pins.active() {
		if sched := m.pinsched(c, miss); sched != nil {
			sched.send(port, send)
			return
		}
	}
	send()
}
