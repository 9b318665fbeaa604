package remote

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/internal/unixsock"
	"github.com/gvs-project/gvs/ovsdb/server"
)

// DefaultRemote is the embedded server's remote when no --remote is
// given: as ovs-ctl starts ovsdb-server, the Manager rows named by
// Open_vSwitch.manager_options (`ovs-vsctl set-manager`).
const DefaultRemote = "db:Open_vSwitch,Open_vSwitch,manager_options"

// Remote timing, as Open vSwitch's reconnect defaults.
const (
	remoteMinBackoff = time.Second
	remoteMaxBackoff = 8 * time.Second
	remoteDialTime   = 10 * time.Second
	ovsdbPort        = "6640"
)

// Reconnect states reported in Manager.status:state.
const (
	stateConnecting = "CONNECTING"
	stateActive     = "ACTIVE"
	stateBackoff    = "BACKOFF"
	stateListening  = "LISTENING"
)

// remoteTarget is a parsed OVSDB remote.
type remoteTarget struct {
	passive bool
	tls     bool
	network string // "tcp" or "unix"
	addr    string
}

// parseRemote parses punix:PATH, ptcp:[PORT][:IP], pssl:[PORT][:IP],
// unix:PATH, tcp:HOST[:PORT] and ssl:HOST[:PORT] (port 6640 by default);
// a relative unix path is under runDir.
func parseRemote(target, runDir string) (remoteTarget, error) {
	kind, rest, ok := strings.Cut(target, ":")
	if !ok {
		return remoteTarget{}, fmt.Errorf("remote %q: missing connection type", target)
	}
	var t remoteTarget
	switch kind {
	case "punix", "unix":
		if rest == "" {
			return t, fmt.Errorf("remote %q: missing path", target)
		}
		if !filepath.IsAbs(rest) {
			rest = filepath.Join(runDir, rest)
		}
		return remoteTarget{passive: kind == "punix", network: "unix", addr: rest}, nil
	case "ptcp", "pssl":
		port, ip, _ := strings.Cut(rest, ":")
		if port == "" {
			port = ovsdbPort
		}
		if err := checkPort(port); err != nil {
			return t, fmt.Errorf("remote %q: %w", target, err)
		}
		ip = strings.TrimSuffix(strings.TrimPrefix(ip, "["), "]")
		if ip != "" && net.ParseIP(ip) == nil {
			return t, fmt.Errorf("remote %q: %q is not an IP address", target, ip)
		}
		return remoteTarget{passive: true, tls: kind == "pssl", network: "tcp", addr: net.JoinHostPort(ip, port)}, nil
	case "tcp", "ssl":
		host, port := rest, ovsdbPort
		if strings.HasPrefix(rest, "[") {
			h, p, found := strings.Cut(rest[1:], "]")
			if !found || (p != "" && !strings.HasPrefix(p, ":")) {
				return t, fmt.Errorf("remote %q: bad address", target)
			}
			host = h
			if p != "" {
				port = p[1:]
			}
		} else if h, p, found := strings.Cut(rest, ":"); found {
			host, port = h, p
		}
		if host == "" {
			return t, fmt.Errorf("remote %q: missing host", target)
		}
		if err := checkPort(port); err != nil {
			return t, fmt.Errorf("remote %q: %w", target, err)
		}
		return remoteTarget{tls: kind == "ssl", network: "tcp", addr: net.JoinHostPort(host, port)}, nil
	}
	return t, fmt.Errorf("remote %q: unknown connection type %q", target, kind)
}

func checkPort(p string) error {
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || strconv.FormatUint(n, 10) != p {
		return fmt.Errorf("bad port number %q", p)
	}
	return nil
}

// remoteOptions are a Manager row's connection settings.
type remoteOptions struct {
	// MaxBackoff bounds the wait between connection attempts (0: 8s).
	MaxBackoff time.Duration
	// InactivityProbe is how long a session may be silent before the
	// server sends an echo request (and, as long again, before it drops
	// the session); 0 disables it and probeDefault means Open vSwitch's
	// default: 5s except on unix sockets.
	InactivityProbe time.Duration
}

// probeDefault asks for the default inactivity probe.
const probeDefault = -1

func (o remoteOptions) probe(t remoteTarget) time.Duration {
	switch {
	case o.InactivityProbe >= 0:
		return o.InactivityProbe
	case t.network == "unix":
		return 0
	}
	return 5 * time.Second
}

// TLS gives pssl: listeners and ssl: connections their configuration
// (ofconn.TLSSettings: the SSL table's files, read at each handshake).
type TLS interface {
	// ServerConfig is a listener's configuration.
	ServerConfig() *tls.Config
	// ClientConfig is one active connection's configuration.
	ClientConfig() (*tls.Config, error)
}

// remoteSet runs the embedded server's remotes: listeners for passive
// ones, reconnecting connections for active ones. Sessions are served by
// the server like those of RUNDIR/db.sock.
type remoteSet struct {
	srv    *server.Server
	tls    TLS
	runDir string
	log    *slog.Logger
	ctx    context.Context
	// perm is the mode and group of punix: remotes' sockets.
	perm unixsock.Perm
	// kick is signalled when a remote's state changes (listening,
	// connecting, connected, backing off), so that Manager.status is
	// written soon.
	kick chan struct{}

	mu      sync.Mutex
	running map[string]*remote // by target
}

func newRemoteSet(ctx context.Context, srv *server.Server, ts TLS, runDir string, log *slog.Logger) *remoteSet {
	return &remoteSet{srv: srv, tls: ts, runDir: runDir, log: log, ctx: ctx,
		kick: make(chan struct{}, 1), running: map[string]*remote{}}
}

func (rs *remoteSet) changed() {
	select {
	case rs.kick <- struct{}{}:
	default:
	}
}

// apply makes the running remotes exactly those in want: new ones start,
// missing ones stop (closing their listener and sessions), and the
// options of the others are updated in place.
func (rs *remoteSet) apply(want map[string]remoteOptions) {
	rs.mu.Lock()
	var stop []*remote
	for t, r := range rs.running {
		if _, ok := want[t]; !ok {
			stop = append(stop, r)
			delete(rs.running, t)
		}
	}
	rs.mu.Unlock()
	for _, r := range stop {
		rs.log.Info("removing remote", "target", r.target)
		r.cancel()
		<-r.done // its port is free again before a new remote may bind it
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for t, o := range want {
		if r, ok := rs.running[t]; ok {
			r.setOptions(o)
			continue
		}
		rs.running[t] = rs.start(t, o)
	}
}

// lookup returns the running remote for target, or nil.
func (rs *remoteSet) lookup(target string) *remote {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.running[target]
}

// stopAll stops every remote and waits for them.
func (rs *remoteSet) stopAll() { rs.apply(nil) }

// remote is one running remote and its connection state.
type remote struct {
	target     string
	rs         *remoteSet
	maxBackoff atomic.Int64 // time.Duration; 0 for the default
	probe      atomic.Int64 // time.Duration, or probeDefault
	cancel     context.CancelFunc
	done       chan struct{}

	mu sync.Mutex
	// guarded by mu
	state string
	// guarded by mu
	boundPort int
	// guarded by mu
	conns map[*trackedConn]struct{}
	// guarded by mu
	connected, disconnected time.Time // zero: never
}

func (rs *remoteSet) start(target string, o remoteOptions) *remote {
	ctx, cancel := context.WithCancel(rs.ctx)
	r := &remote{target: target, rs: rs, cancel: cancel, done: make(chan struct{}), conns: map[*trackedConn]struct{}{}}
	r.setOptions(o)
	go func() {
		defer close(r.done)
		t, err := parseRemote(target, rs.runDir)
		if err != nil {
			// Open vSwitch keeps a bad target in BACKOFF; so do we,
			// without retrying what cannot succeed.
			rs.log.Warn("ignoring OVSDB remote", "err", err)
			r.setState(stateBackoff)
			<-ctx.Done()
			return
		}
		rs.log.Info("adding remote", "target", target)
		if t.passive {
			r.runPassive(ctx, t)
		} else {
			r.runActive(ctx, t)
		}
	}()
	return r
}

func (r *remote) setOptions(o remoteOptions) {
	r.maxBackoff.Store(int64(o.MaxBackoff))
	r.probe.Store(int64(o.InactivityProbe))
}

// probeInterval is the inactivity probe for new sessions.
func (r *remote) probeInterval(t remoteTarget) time.Duration {
	return remoteOptions{InactivityProbe: time.Duration(r.probe.Load())}.probe(t)
}

func (r *remote) setState(s string) {
	r.mu.Lock()
	r.state = s
	r.mu.Unlock()
	r.rs.changed()
}

func (r *remote) nextBackoff(b time.Duration) time.Duration {
	maxB := time.Duration(r.maxBackoff.Load())
	if maxB <= 0 {
		maxB = remoteMaxBackoff
	}
	if b *= 2; b > maxB {
		b = maxB
	}
	return max(b, remoteMinBackoff)
}

// sleep waits d or until ctx is done; it reports whether to go on.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (r *remote) tlsConfig() *tls.Config { return r.rs.tls.ServerConfig() }

func (r *remote) runPassive(ctx context.Context, t remoteTarget) {
	backoff := remoteMinBackoff
	for {
		var l net.Listener
		var err error
		if t.network == "unix" {
			l, err = unixsock.Listen(t.addr, r.rs.perm)
		} else {
			l, err = unixsock.ListenTCP("tcp", t.addr, r.rs.perm)
		}
		if err != nil {
			r.rs.log.Warn("listen attempt failed", "target", r.target, "err", err)
			r.setState(stateBackoff)
			if !sleep(ctx, backoff) {
				return
			}
			backoff = r.nextBackoff(backoff)
			continue
		}
		backoff = remoteMinBackoff
		r.mu.Lock()
		r.state = stateListening
		if a, ok := l.Addr().(*net.TCPAddr); ok {
			r.boundPort = a.Port
		}
		r.mu.Unlock()
		r.rs.changed()
		tl := &trackedListener{Listener: l, r: r}
		if t.tls {
			tl.tls = r.tlsConfig()
		}
		stop := context.AfterFunc(ctx, func() { l.Close() })
		err = r.serve(tl, t)
		stop()
		l.Close()
		r.closeConns()
		if ctx.Err() != nil {
			return
		}
		r.rs.log.Warn("listener failed", "target", r.target, "err", err)
		r.setState(stateBackoff)
		if !sleep(ctx, backoff) {
			return
		}
	}
}

func (r *remote) runActive(ctx context.Context, t remoteTarget) {
	backoff := remoteMinBackoff
	for {
		r.setState(stateConnecting)
		c, err := r.dial(ctx, t)
		if err == nil {
			backoff = remoteMinBackoff
			tc := r.track(c)
			r.setState(stateActive)
			r.rs.srv.ServeConnProbed(tc, r.probeInterval(t))
			select {
			case <-tc.closed:
			case <-ctx.Done():
				tc.Close()
			}
		} else if ctx.Err() == nil {
			r.rs.log.Info("connection attempt failed", "target", r.target, "err", err)
		}
		if ctx.Err() != nil {
			return
		}
		r.setState(stateBackoff)
		if !sleep(ctx, backoff) {
			return
		}
		backoff = r.nextBackoff(backoff)
	}
}

// serve accepts sessions until the listener fails or is closed.
func (r *remote) serve(l net.Listener, t remoteTarget) error {
	for {
		c, err := l.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond) // a deadline holds accepting (a handover)
				continue
			}
			return err
		}
		r.rs.srv.ServeConnProbed(c, r.probeInterval(t))
	}
}

func (r *remote) dial(ctx context.Context, t remoteTarget) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, remoteDialTime)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, t.network, t.addr)
	if err != nil || !t.tls {
		return c, err
	}
	tc, err := r.rs.tls.ClientConfig()
	if err != nil {
		c.Close()
		return nil, err
	}
	sc := tls.Client(c, tc)
	if err := sc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("ssl handshake: %w", err)
	}
	return sc, nil
}

// track counts a new session of the remote.
func (r *remote) track(c net.Conn) *trackedConn {
	tc := &trackedConn{Conn: c, r: r, closed: make(chan struct{})}
	r.mu.Lock()
	r.conns[tc] = struct{}{}
	r.connected = time.Now()
	r.mu.Unlock()
	// Session counts reach Manager.status on the next periodic update,
	// as with ovsdb-server: a short-lived client (ovs-vsctl show) does
	// not show itself connected.
	return tc
}

func (r *remote) untrack(tc *trackedConn) {
	r.mu.Lock()
	delete(r.conns, tc)
	r.disconnected = time.Now()
	r.mu.Unlock()
}

// closeConns ends the remote's sessions (its Manager row is gone).
func (r *remote) closeConns() {
	r.mu.Lock()
	cs := make([]*trackedConn, 0, len(r.conns))
	for c := range r.conns {
		cs = append(cs, c)
	}
	r.mu.Unlock()
	for _, c := range cs {
		c.Close()
	}
}

// status returns what Open vSwitch's ovsdb-server writes to a Manager
// row: a listener reports its bound port and its number of sessions
// (when more than one) with zero times; a connection reports its
// reconnect state and the seconds since it last connected and
// disconnected.
func (r *remote) status(now time.Time) (bool, map[string]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := map[string]string{}
	n := len(r.conns)
	if r.state == stateListening {
		if r.boundPort != 0 {
			st["bound_port"] = strconv.Itoa(r.boundPort)
		}
		if n > 1 {
			st["n_connections"] = strconv.Itoa(n)
		}
		st["sec_since_connect"] = "0"
		st["sec_since_disconnect"] = "0"
		return n > 0, st
	}
	if r.state != "" {
		st["state"] = r.state
	}
	if !r.connected.IsZero() {
		st["sec_since_connect"] = strconv.Itoa(int(now.Sub(r.connected) / time.Second))
	}
	if !r.disconnected.IsZero() {
		st["sec_since_disconnect"] = strconv.Itoa(int(now.Sub(r.disconnected) / time.Second))
	}
	return r.state == stateActive, st
}

// trackedListener wraps accepted connections (in TLS when tls is set)
// so that the remote knows its sessions.
type trackedListener struct {
	net.Listener
	r   *remote
	tls *tls.Config
}

func (l *trackedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if l.tls != nil {
		// The handshake runs on the session's first read: a client that
		// does not speak TLS fails it and is disconnected.
		c = tls.Server(c, l.tls)
	}
	return l.r.track(c), nil
}

// trackedConn tells its remote when the server closes the session.
type trackedConn struct {
	net.Conn
	r      *remote
	once   sync.Once
	closed chan struct{}
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.r.untrack(c)
		close(c.closed)
	})
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
