package connmgr

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/internal/syserr"
	"github.com/gvs-project/gvs/internal/unixsock"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// Conn is one OpenFlow connection of the switch: the connection manager's
// state for it (asynchronous message configuration, controller id,
// miss_send_len, snoopers, packet-in schedulers) and X, the switch's own
// per-connection state (its open bundles, say), which the manager never
// looks at.
type Conn[X any] struct {
	// Sender is the connection.
	Sender ofconn.Sender
	// Primary marks controller connections (service connections such as
	// <bridge>.mgmt get asynchronous messages only once they set a
	// miss_send_len, and are never snooped).
	Primary bool
	// FlowFormat is NXT_SET_FLOW_FORMAT's format (0 openflow10, 2 nxm).
	// It and the fields below are read by asynchronous message senders
	// on other goroutines.
	FlowFormat   atomic.Uint32
	ControllerID atomic.Uint32
	// Async is the connection's asynchronous message configuration; nil
	// means Open vSwitch's defaults (AsyncConfig).
	Async atomic.Pointer[ofp.AsyncConfig]
	// MissSendLen is the connection's miss_send_len: 128 for controllers
	// (primary connections), 0 for service connections such as
	// <bridge>.mgmt, until set_config changes it, as Open vSwitch.
	MissSendLen atomic.Uint32
	// hub holds the snoopers of an accepted passive controller
	// connection (snoop.go; guarded by Manager.cmu); nil: none yet.
	hub *snoopHub
	// pins are the packet-in schedulers of a connection accepted on a
	// rate-limited passive controller target (pinsched.go).
	pinMu sync.Mutex
	pins  *[2]*pinsched
	// X is the switch's state for the connection.
	X X
}

// DefaultMissSendLen is OFP_DEFAULT_MISS_SEND_LEN.
const DefaultMissSendLen = 128

// Config creates a Manager.
type Config[X any] struct {
	// Name is the bridge's name, for log messages and <name>.mgmt.
	Name string
	// RunDir holds the <name>.mgmt socket; empty: no listener.
	RunDir string
	// SocketPerm is the mode and group of the bridge's unix sockets
	// (<name>.mgmt, <name>.snoop, punix: controller targets).
	SocketPerm unixsock.Perm
	// TLS is the SSL configuration for ssl: and pssl: controller targets;
	// nil: such targets fail.
	TLS *ofconn.TLSSettings
	// OFDebug, if set, sees the messages of every OpenFlow connection
	// (snoops excepted) for the vconn debug log.
	OFDebug ofconn.Debugger
	// Logf receives warnings; Debugf per-message detail. nil discards.
	Logf, Debugf func(format string, args ...any)
	// Serve handles one message received on a connection, on the
	// connection's goroutine; required.
	Serve func(c *Conn[X], m *ofp.Msg)
	// Init, if set, initializes the switch's state of a new connection.
	Init func(x *X)
	// OnChange, if set, runs after a connection is added or removed.
	OnChange func()
}

// Manager owns a bridge's OpenFlow connections, as Open vSwitch's
// connmgr: the <bridge>.mgmt service listener, the controller targets
// (active connections, passive listeners, held targets) and their status,
// inactivity probes and packet-in rate limits, and the snoop listener.
type Manager[X any] struct {
	cfg Config[X]

	server   *ofconn.Server // service connections (<bridge>.mgmt)
	ctl      *ofconn.Server // passive controller connections
	listener net.Listener

	// cmu guards conns and the connections' snoop hubs.
	cmu   sync.Mutex
	conns map[ofconn.Sender]*Conn[X]

	// mu guards the controller targets.
	mu      sync.Mutex
	clients map[string]context.CancelFunc
	// ctlStates track the active controller connections by target.
	ctlStates map[string]*ctlState
	// passive are the listeners of passive controller targets, for
	// their connections' probes and packet-in rate limits.
	passive map[string]net.Listener
	// held are the controller targets not connected while
	// flow-restore-wait holds them.
	held map[string]bool

	// pins are the controllers' packet-in rate limits (pinsched.go).
	pins pinLimitSet
	// probes are the controllers' inactivity probes (probe.go).
	probes probeSet

	ctx    context.Context
	cancel context.CancelFunc
}

type serviceHandler[X any] struct {
	m       *Manager[X]
	primary bool
}

func (h serviceHandler[X]) ServeOpenFlow(s ofconn.Sender, msg *ofp.Msg) {
	h.m.cfg.Serve(h.m.Get(s, h.primary), msg)
}

// New creates a manager. It accepts no connection until Listen.
func New[X any](cfg Config[X]) *Manager[X] {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Debugf == nil {
		cfg.Debugf = func(string, ...any) {}
	}
	m := &Manager[X]{cfg: cfg, conns: map[ofconn.Sender]*Conn[X]{}, clients: map[string]context.CancelFunc{},
		ctlStates: map[string]*ctlState{}, passive: map[string]net.Listener{}}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	errLog := func(err error) { cfg.Logf("%s: %v", cfg.Name, err) }
	m.server = &ofconn.Server{Handler: serviceHandler[X]{m, false}, ErrorLog: errLog, UnixPerm: cfg.SocketPerm,
		Config: ofconn.Config{Debug: cfg.OFDebug, ProbeInterval: mgmtProbe}}
	m.server.OnClose = func(s ofconn.Sender, _ error) { m.Remove(s) }
	m.ctl = &ofconn.Server{Handler: serviceHandler[X]{m, true}, ErrorLog: errLog, UnixPerm: cfg.SocketPerm,
		Config: ofconn.Config{Debug: cfg.OFDebug, Probe: m.passiveProbe}}
	m.ctl.OnClose = m.server.OnClose
	return m
}

// Listen opens the <name>.mgmt listener (if RunDir is set): from then on
// connections are served. The switch calls it once everything Serve uses
// is set up.
func (m *Manager[X]) Listen() error {
	if m.cfg.RunDir == "" {
		return nil
	}
	l, err := m.server.Listen("punix:" + filepath.Join(m.cfg.RunDir, m.cfg.Name+".mgmt"))
	if err != nil {
		return fmt.Errorf("bridge %s: %w", m.cfg.Name, err)
	}
	m.listener = l
	return nil
}

// Close closes every connection and listener.
func (m *Manager[X]) Close() {
	m.cancel()
	m.mu.Lock()
	for _, c := range m.clients {
		c()
	}
	m.mu.Unlock()
	m.server.Close()
	m.ctl.Close()
}

// Get returns s's connection state, creating it (as a controller
// connection if primary) the first time.
func (m *Manager[X]) Get(s ofconn.Sender, primary bool) *Conn[X] {
	m.cmu.Lock()
	c := m.conns[s]
	added := c == nil
	if added {
		c = &Conn[X]{Sender: s, Primary: primary}
		if primary {
			c.MissSendLen.Store(DefaultMissSendLen)
		}
		if m.cfg.Init != nil {
			m.cfg.Init(&c.X)
		}
		m.conns[s] = c
	}
	m.cmu.Unlock()
	if added && m.cfg.OnChange != nil {
		m.cfg.OnChange()
	}
	return c
}

// Remove forgets a closed connection and closes its snoopers.
func (m *Manager[X]) Remove(s ofconn.Sender) {
	m.cmu.Lock()
	var hub *snoopHub
	if c := m.conns[s]; c != nil {
		hub = c.hub
	}
	delete(m.conns, s)
	m.cmu.Unlock()
	if hub != nil {
		hub.closeAll()
	}
	if m.cfg.OnChange != nil {
		m.cfg.OnChange()
	}
}

// Each calls f for every connection (outside the manager's locks).
func (m *Manager[X]) Each(f func(c *Conn[X])) {
	m.cmu.Lock()
	all := make([]*Conn[X], 0, len(m.conns))
	for _, c := range m.conns {
		all = append(all, c)
	}
	m.cmu.Unlock()
	for _, c := range all {
		f(c)
	}
}

// Controllers are a bridge's controller settings.
type Controllers struct {
	// Targets are Controller.target values ("tcp:IP:PORT", "unix:PATH",
	// "ptcp:PORT", "punix:PATH", "ssl:...", "pssl:...").
	Targets []string
	// Hold keeps the controllers configured but neither connects to nor
	// listens for them (flow-restore-wait).
	Hold bool
	// RateLimits are the targets' packet-in rate limits; none: unlimited.
	RateLimits map[string]RateLimit
	// InactivityProbes are the targets' Controller.inactivity_probe in
	// milliseconds; a target not in the map has the default (probe.go).
	InactivityProbes map[string]*int64
}

// SetControllers connects to or listens for the targets that are new,
// and drops the connections and listeners of those that went.
func (m *Manager[X]) SetControllers(c Controllers) {
	m.pins.setLimits(c.RateLimits)
	m.probes.set(c.InactivityProbes)
	m.mu.Lock()
	defer m.mu.Unlock()
	want := map[string]bool{}
	m.held = nil
	for _, t := range c.Targets {
		if c.Hold {
			m.hold(t)
			continue
		}
		want[t] = true
	}
	for t, cancel := range m.clients {
		if !want[t] {
			cancel()
			delete(m.clients, t)
			delete(m.ctlStates, t)
		}
	}
	for t := range want {
		if _, ok := m.clients[t]; ok {
			continue
		}
		m.clients[t] = m.startController(t)
	}
}

// startController opens an active or passive controller connection.
//
// Preconditions: m.mu is held.
func (m *Manager[X]) startController(target string) context.CancelFunc {
	ctx, cancel := context.WithCancel(m.ctx)
	if ofconn.IsPassive(target) {
		l, err := m.ctl.ListenTarget(target, m.cfg.TLS)
		if err != nil {
			m.cfg.Logf("%s: %v", m.cfg.Name, err)
			return cancel
		}
		m.passive[target] = l
		return func() {
			cancel()
			l.Close()
			delete(m.passive, target) // m.mu is held by the caller
		}
	}
	st := &ctlState{created: time.Now()}
	m.ctlStates[target] = st
	cl := &ofconn.Client{Target: target, Handler: serviceHandler[X]{m, true}, Config: ofconn.Config{Probe: func(*ofconn.Conn) time.Duration { return m.probes.get(target) }, Debug: m.cfg.OFDebug}, TLS: m.cfg.TLS,
		OnConnect: func(c *ofconn.Conn) {
			// A controller gets asynchronous messages from the moment it
			// connects, whether or not it has sent a request yet.
			m.Get(c, true)
			st.connected(c)
		},
		OnError: func(err error) {
			st.failed(err)
			m.cfg.Logf("%s<->%s: connection failed (%s)", m.cfg.Name, target, syserr.Text(err))
		}}
	cl.Config.OnClose = func(s ofconn.Sender, _ error) {
		m.Remove(s)
		st.closed(s)
	}
	go cl.Run(ctx)
	return cancel
}
