package backer

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/ofproto/cfm"
	"github.com/gvs-project/gvs/ofproto/ofswitch"
	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// cfmMonitor runs the interfaces' CFM maintenance points (the CFM half
// of Open vSwitch's ofproto-dpif-monitor thread): it sends each one's
// CCMs when due, checks their faults, and turns their state into port
// liveness (with BFD's, as Open vSwitch's may_enable_port). They are
// configured from Interface.cfm_mpid and other_config (configureLocked)
// and their status goes back to the Interface cfm_* columns through the
// BFD monitor's status channel. Time is the bonds' warp clock until
// time/stop freezes it; then only time/warp moves it, step by step, with
// the maintenance points run after each step, as Open vSwitch's stopped
// clock (cfmClock).
type cfmMonitor struct {
	reg     *cfm.Registry
	wake    chan struct{}
	status  chan struct{}
	started bool
	// runMu serialises runOnce between the monitor loop and time/warp's
	// steps (a CCM is due once).
	runMu sync.Mutex
	// created numbers the maintenance points in creation order, the
	// order they run in (Open vSwitch's monitor heap runs the ports that
	// are due oldest first after a reconfiguration).
	created uint64
	// lastPorts is each bridge's port configuration last applied: a
	// change makes every maintenance point urgent (cfmState.urgent).
	lastPorts map[string][]bridge.PortConfig
	// statusReq counts status changes, statusDone the last one whose
	// write-back is committed (bridge.StatusSyncer).
	statusReq, statusDone atomic.Uint64

	clock     *cfmClock
	mu        *sync.Mutex
	bridges   map[string]*dpBridge
	republish func(*dpBridge)
	logger    func(module string) *slog.Logger
	ctx       context.Context
	wg        *sync.WaitGroup
}

// cfmState is a port's CFM: its maintenance point (nil when off), the
// settings it was configured with and whether it keeps the port from
// being live.
type cfmState struct {
	sess  *cfm.Session
	set   cfm.Settings
	noFwd bool
	seq   uint64 // creation order
	// invalid: set was refused (an MPID out of range).
	invalid bool
	// urgent: the configuration changed since the point last ran; it
	// runs before the others, as Open vSwitch's reconfiguration moves
	// every monitored port to the top of the monitor's heap.
	urgent bool
}

func newCFMMonitor() *cfmMonitor {
	return &cfmMonitor{reg: cfm.NewRegistry(), wake: make(chan struct{}, 1), lastPorts: map[string][]bridge.PortConfig{}}
}

// cfmClock is the maintenance points' time in milliseconds: the bonds'
// warp clock while running; once stopped (time/stop), frozen except for
// what time/warp's steps add.
type cfmClock struct {
	base    *warpClock
	mu      sync.Mutex
	stopped bool
	frozen  int64 // guarded by mu
}

// Now is the time in milliseconds.
func (c *cfmClock) Now() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return c.frozen
	}
	return c.base.Now()
}

// stop freezes the clock.
func (c *cfmClock) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped {
		c.frozen, c.stopped = c.base.Now(), true
	}
}

// advance moves a stopped clock on by ms; it reports whether the clock
// is stopped.
func (c *cfmClock) advance(ms int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		c.frozen += ms
	}
	return c.stopped
}

// StopClock is time/stop for the maintenance points' clock.
func (s *Backer) StopClock() { s.cfm.clock.stop() }

// WarpStep is one step of time/warp (called as it goes, after the real
// time it waited for the step): a stopped clock moves on by d and the
// maintenance points run, as Open vSwitch runs once per warp step.
func (s *Backer) WarpStep(d time.Duration) {
	defer s.runSTPPass(true) // stp.go: the spanning trees run after each step
	if !s.cfm.clock.advance(d.Milliseconds()) {
		return
	}
	s.mu.Lock()
	running := s.cfm.started
	s.mu.Unlock()
	if running {
		s.cfm.runOnce()
	}
}

// configureLocked applies the interfaces' CFM settings to their ports
// (iface_configure_cfm). It reports whether a maintenance point was
// created or removed, or a port's liveness changed: the ports must then
// be republished. Called with m.mu held.
func (m *cfmMonitor) configureLocked(b *dpBridge, ports []bridge.PortConfig) bool {
	changed := false
	if !reflect.DeepEqual(m.lastPorts[b.name], ports) {
		m.lastPorts[b.name] = ports
		for _, ob := range m.bridges {
			for _, p := range ob.ports {
				p.cfm.urgent = true
			}
		}
	}
	for _, pc := range ports {
		for _, ic := range pc.Interfaces {
			p := b.ports[ic.Name]
			if p == nil {
				continue
			}
			if !ic.CFMMPIDSet {
				if p.cfm.sess != nil {
					m.reg.Close(p.cfm.sess)
					p.cfm = cfmState{}
					changed = true
					m.changed()
				}
				continue
			}
			flowKey := ic.Options["key"] == "flow" || ic.Options["in_key"] == "flow"
			st := cfm.ParseSettings(ic.CFMMPID, ic.OtherConfig, flowKey && p.tunnel != nil)
			if (p.cfm.sess != nil || p.cfm.invalid) && p.cfm.set == st {
				continue
			}
			if !cfm.ValidMPID(st.Extended, st.MPID) {
				// Refused as Open vSwitch's set_cfm refuses it (EINVAL),
				// once per configuration; a point already there goes.
				m.logger("ofproto").Warn(fmt.Sprintf("%s: CFM configuration on port %d (%s) failed (Invalid argument)",
					b.name, p.ofport, ic.Name))
				if p.cfm.sess != nil {
					m.reg.Close(p.cfm.sess)
					changed = true
					m.changed()
				}
				p.cfm = cfmState{set: st, invalid: true}
				continue
			}
			p.cfm.invalid = false
			old := p.cfm.sess
			env := cfm.Env{Clock: m.clock, Log: m.logger("cfm"), Changed: m.changed,
				RxPackets: m.rxPackets(b, p)}
			p.cfm.sess = m.reg.Open(old, ic.Name, st, env)
			p.cfm.set = st
			if old == nil {
				m.created++
				p.cfm.seq = m.created
			}
			if p.cfm.sess != old {
				changed = true
				p.cfm.noFwd = p.cfm.sess != nil && !p.cfm.sess.Live()
			}
			m.changed()
		}
	}
	if changed && !m.started {
		m.started = true
		m.wg.Add(1)
		go func() { defer m.wg.Done(); m.run() }()
	}
	return changed
}

// changed is a maintenance point's status change: the monitor runs, and
// the status is to be written back.
func (m *cfmMonitor) changed() {
	m.statusReq.Add(1)
	notify(m.wake)
	notify(m.status)
}

// StatusSeq is bridge.StatusSyncer: the number of CFM status changes.
func (s *Backer) StatusSeq() uint64 { return s.cfm.statusReq.Load() }

// StatusWritten is bridge.StatusSyncer: the write-back that started
// after seq changes is committed.
func (s *Backer) StatusWritten(seq uint64) {
	for {
		cur := s.cfm.statusDone.Load()
		if cur >= seq || s.cfm.statusDone.CompareAndSwap(cur, seq) {
			return
		}
	}
}

var _ bridge.StatusSyncer = (*Backer)(nil)

// WaitStatus waits (at most limit) until the CFM status changes made so
// far are written back to the database.
func (s *Backer) WaitStatus(ctx context.Context, limit time.Duration) {
	want := s.cfm.statusReq.Load()
	deadline := time.Now().Add(limit)
	for s.cfm.statusDone.Load() < want && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(2 * time.Millisecond)
	}
}

// rxPackets reads the packets port p received (demand mode).
func (m *cfmMonitor) rxPackets(b *dpBridge, p *dpPort) func() uint64 {
	if dev := p.dev; dev != nil {
		return func() uint64 { return dev.Stats().RxPackets }
	}
	if of, no := b.of, uint16(p.ofport); p.typ == "patch" && of != nil {
		return func() uint64 { return of.Upcalls().PatchRxPackets(no) }
	}
	return nil
}

// closeLocked ends a deleted port's maintenance point.
func (m *cfmMonitor) closeLocked(p *dpPort) {
	if p.cfm.sess != nil {
		m.reg.Close(p.cfm.sess)
		p.cfm = cfmState{}
		m.changed()
	}
}

// cfmPort is a maintenance point to run, with where its CCMs go.
type cfmPort struct {
	port   *dpPort
	key    int64 // run order: urgent first, then by wake time
	seq    uint64
	sess   *cfm.Session
	of     *ofswitch.Bridge
	ofport uint16
	mac    [6]byte
}

func (m *cfmMonitor) ports() []cfmPort {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []cfmPort
	for _, b := range m.bridges {
		for _, p := range b.ports {
			if p.cfm.sess == nil || b.of == nil || p.ofport <= 0 {
				continue
			}
			mac := p.mac
			if p.dev != nil {
				mac = p.dev.MAC()
			}
			key := int64(math.MinInt64)
			if !p.cfm.urgent {
				key = p.cfm.sess.WakeTime()
			}
			out = append(out, cfmPort{port: p, key: key, seq: p.cfm.seq, sess: p.cfm.sess, of: b.of, ofport: uint16(p.ofport), mac: mac})
		}
	}
	slices.SortFunc(out, func(a, b cfmPort) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.seq, b.seq)) })
	return out
}

// run is the monitor loop.
func (m *cfmMonitor) run() {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		// With the clock stopped this runs only what a configuration
		// made urgent (a new point's first CCM goes out at once, as
		// Open vSwitch's monitor thread runs it when it is added) and
		// liveness; time/warp's steps run the rest.
		m.runOnce()
		next := m.clock.Now() + bfdMonitorInterval.Milliseconds()
		for _, cp := range m.ports() {
			next = min(next, cp.sess.WakeTime())
		}
		d := time.Duration(next-m.clock.Now()) * time.Millisecond
		if !sleepOrWake(m.ctx, t, d, m.wake) {
			return
		}
	}
}

// runOnce sends the CCMs that are due, checks faults and updates the
// ports' liveness.
func (m *cfmMonitor) runOnce() {
	m.runMu.Lock()
	defer m.runMu.Unlock()
	for _, cp := range m.ports() {
		m.mu.Lock()
		cp.port.cfm.urgent = false
		m.mu.Unlock()
		if cp.sess.ShouldSend() {
			if err := cp.of.SendPacket(cp.ofport, cp.sess.Compose(cp.mac), false); err != nil {
				m.logger("cfm").Debug(err.Error())
			}
		}
		cp.sess.Run()
	}
	m.updateLiveness()
}

// updateLiveness sets each CFM port's noFwd from its maintenance point
// and republishes the bridges whose ports changed.
func (m *cfmMonitor) updateLiveness() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range m.bridges {
		changed := false
		for _, p := range b.ports {
			if p.cfm.sess == nil {
				continue
			}
			if nf := !p.cfm.sess.Live(); nf != p.cfm.noFwd {
				p.cfm.noFwd, changed = nf, true
			}
		}
		if changed {
			m.republish(b)
		}
	}
}

// noForward is Open vSwitch's may_enable_port for the liveness monitors:
// with CFM or BFD on the port, at least one of them must say it is up.
// bfdNoFwd counts as BFD being on (a port added with BFD enabled starts
// not live before its session exists).
func noForward(p *dpPort) bool {
	hasBFD := p.bfd != nil || p.bfdNoFwd
	hasCFM := p.cfm.sess != nil
	if !hasBFD && !hasCFM {
		return false
	}
	return !(hasCFM && !p.cfm.noFwd) && !(hasBFD && !p.bfdNoFwd)
}

// cfmStatus is the Interface cfm_* columns of port p: nil without CFM.
func cfmStatus(p *dpPort) *bridge.CFMStatus {
	if p.cfm.sess == nil {
		return nil
	}
	st := p.cfm.sess.Status()
	cs := &bridge.CFMStatus{Fault: st.Faults != 0, FaultStatus: cfm.FaultReasons(st.Faults), FlapCount: int64(st.FlapCount),
		Health: int64(st.Health)}
	for _, id := range st.RemoteMPIDs {
		cs.RemoteMPIDs = append(cs.RemoteMPIDs, int64(id))
	}
	switch st.RemoteOpState {
	case 1:
		cs.RemoteOpState = "up"
	case 0:
		cs.RemoteOpState = "down"
	}
	return cs
}

// CFM is the registry of the interfaces' maintenance points (cfm/show,
// cfm/set-fault).
func (s *Backer) CFM() *cfm.Registry { return s.cfm.reg }
