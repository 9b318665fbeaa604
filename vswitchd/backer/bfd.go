package backer

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/gvs-project/gvs/ofproto/bfd"
	"github.com/gvs-project/gvs/ofproto/ofswitch"
	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// bfdMonitor runs the switch's BFD sessions (Open vSwitch's
// ofproto-dpif-monitor thread): it sends each session's control packets
// when due, runs the sessions' timers, and turns their forwarding
// decisions into port liveness (ofswitch.Port.NoForward). Sessions are
// configured from Interface.bfd (ConfigurePorts) and their status is
// written back to Interface.bfd_status when it changes (StatusChanged).
type bfdMonitor struct {
	reg *bfd.Registry
	// wake makes the monitor run now (a Final to send, a reconfigured
	// session, a status change); status tells the bridge runner to write
	// bfd_status back.
	wake, status chan struct{}
	started      bool
	// parked are the sessions of interfaces deleted by the
	// reconciliation under way: an interface re-added at once (its
	// options changed) keeps its session, as Open vSwitch reconfigures
	// such an interface in place.
	parked map[string]parkedBFD

	// What the monitor needs of the backer: its lock and bridges (whose
	// ports hold the sessions), a way to republish a bridge's ports, its
	// logs and coverage counters, and the context and wait group its
	// loop runs under.
	mu        *sync.Mutex
	bridges   map[string]*dpBridge
	republish func(*dpBridge)
	logger    func(module string) *slog.Logger
	count     func(name string)
	ctx       context.Context
	wg        *sync.WaitGroup
}

type parkedBFD struct {
	sess  *bfd.Session
	cfg   map[string]string
	noFwd bool
}

func newBFDMonitor() *bfdMonitor {
	return &bfdMonitor{reg: bfd.NewRegistry(), wake: make(chan struct{}, 1), status: make(chan struct{}, 1), parked: map[string]parkedBFD{}}
}

// parkedNoFwd is the forwarding decision of the parked session of
// interface name, if there is one.
func (m *bfdMonitor) parkedNoFwd(name string) (noFwd, ok bool) {
	pk, ok := m.parked[name]
	return pk.noFwd, ok
}

// bfdMonitorInterval bounds how long the monitor sleeps, as Open
// vSwitch's MONITOR_INTERVAL_MSEC.
const bfdMonitorInterval = 100 * time.Millisecond

func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// StatusChanged is bridge.StatusNotifier: a BFD status changed.
func (s *Backer) StatusChanged() <-chan struct{} { return s.bfd.status }

var _ bridge.StatusNotifier = (*Backer)(nil)

// configureLocked applies the interfaces' bfd columns to their ports'
// sessions (iface_configure_bfd). It reports whether a session was
// created or removed: the ports must then be republished (translation
// recognises control packets by the port's session). Called with m.mu
// held.
func (m *bfdMonitor) configureLocked(b *dpBridge, ports []bridge.PortConfig) bool {
	changed := false
	for _, pc := range ports {
		for _, ic := range pc.Interfaces {
			p := b.ports[ic.Name]
			if p == nil {
				continue
			}
			var rx func() uint64
			if dev := p.dev; dev != nil {
				rx = func() uint64 { return dev.Stats().RxPackets }
			} else if of, no := b.of, uint16(p.ofport); p.typ == "patch" && of != nil {
				rx = func() uint64 { return of.Upcalls().PatchRxPackets(no) }
			}
			if pk, ok := m.parked[ic.Name]; ok && p.bfd == nil {
				delete(m.parked, ic.Name)
				p.bfd, p.bfdCfg, p.bfdNoFwd = pk.sess, pk.cfg, pk.noFwd
				p.bfd.SetRxPackets(rx)
				changed = true // the new port must be published with it
			}
			old := p.bfd
			if old != nil && maps.Equal(p.bfdCfg, ic.BFD) {
				continue // reconfigured only when the column changes, as Open vSwitch
			}
			p.bfdCfg = ic.BFD
			env := bfd.Env{Log: m.logger("bfd"), Changed: func() { notify(m.wake); notify(m.status) },
				// Registered on the first drop, so that coverage/show
				// reads as Open vSwitch's until then.
				Dropped: func() { m.count("bfd_rx_drop") }}
			env.RxPackets = rx
			p.bfd = m.reg.Open(old, ic.Name, ic.BFD, env)
			nf := p.bfdNoFwd && p.bfd != nil // no session: forwarding as far as BFD goes
			if p.bfd != old || nf != p.bfdNoFwd {
				changed = true
			}
			p.bfdNoFwd = nf
		}
	}
	m.reapLocked()
	if changed {
		notify(m.wake)
		notify(m.status)
		if !m.started {
			m.started = true
			m.wg.Add(1)
			go func() { defer m.wg.Done(); m.run() }()
		}
	}
	return changed
}

// closeLocked parks a deleted port's session: the configuration that
// follows the deletion takes it back if the interface is re-added, and
// ends it otherwise (reapLocked).
func (m *bfdMonitor) closeLocked(p *dpPort) {
	if p.bfd != nil {
		if old, ok := m.parked[p.name]; ok {
			m.reg.Close(old.sess)
		}
		m.parked[p.name] = parkedBFD{sess: p.bfd, cfg: p.bfdCfg, noFwd: p.bfdNoFwd}
		p.bfd = nil
	}
}

// reapLocked ends the parked sessions whose interfaces no bridge has.
func (m *bfdMonitor) reapLocked() {
	for name, pk := range m.parked {
		found := false
		for _, b := range m.bridges {
			if b.ports[name] != nil {
				found = true
			}
		}
		if !found {
			m.reg.Close(pk.sess)
			delete(m.parked, name)
			notify(m.status)
		}
	}
}

// bfdPort is a session to run, with where its packets go.
type bfdPort struct {
	sess   *bfd.Session
	of     *ofswitch.Bridge
	ofport uint16
	mac    [6]byte
}

// ports returns the sessions to run.
func (m *bfdMonitor) ports() []bfdPort {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []bfdPort
	for _, b := range m.bridges {
		for _, p := range b.ports {
			if p.bfd == nil || b.of == nil || p.ofport <= 0 {
				continue
			}
			mac := p.mac
			if p.dev != nil {
				mac = p.dev.MAC()
			}
			out = append(out, bfdPort{sess: p.bfd, of: b.of, ofport: uint16(p.ofport), mac: mac})
		}
	}
	return out
}

// run is the monitor loop.
func (m *bfdMonitor) run() {
	clock := bfd.SystemClock{}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		next := clock.Now() + bfdMonitorInterval.Milliseconds()
		for _, bp := range m.ports() {
			if bp.sess.ShouldSend() {
				f, oam := bp.sess.PutPacket(bp.mac)
				if err := bp.of.SendPacket(bp.ofport, f, oam); err != nil {
					m.logger("bfd").Debug(err.Error())
				}
			}
			bp.sess.Run()
			next = min(next, bp.sess.WakeTime())
		}
		m.updateLiveness()
		d := time.Duration(next-clock.Now()) * time.Millisecond
		if !sleepOrWake(m.ctx, t, d, m.wake) {
			return
		}
	}
}

// updateLiveness sets each BFD port's NoForward from its session's
// forwarding decision (Open vSwitch's may_enable) and republishes the
// ports of the bridges whose ports changed, so that translation (bundle
// members, fast-failover buckets) and OFPPS_LIVE follow.
func (m *bfdMonitor) updateLiveness() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range m.bridges {
		changed := false
		for _, p := range b.ports {
			if p.bfd == nil {
				continue
			}
			if nf := !p.bfd.Forwarding(); nf != p.bfdNoFwd {
				p.bfdNoFwd, changed = nf, true
			}
		}
		if changed {
			m.republish(b)
		}
	}
}

// processed is ofswitch.Config.BFDProcessed: a session processed a
// control packet; a poll is answered at once and liveness updated.
func (m *bfdMonitor) processed(*bfd.Session) { notify(m.wake) }

// BFD is the registry of the interfaces' BFD sessions (bfd/show,
// bfd/set-forwarding).
func (s *Backer) BFD() *bfd.Registry { return s.bfd.reg }
