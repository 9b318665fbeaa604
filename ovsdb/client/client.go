package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/ovsdb/jsonrpc"
	"github.com/gvs-project/gvs/ovsdb/model"
)

// Errors returned by calls.
var (
	// ErrNotConnected: the client has no connection at the moment (it may
	// be reconnecting).
	ErrNotConnected = errors.New("ovsdb client: not connected")
	// ErrDisconnected: the connection dropped before the reply arrived;
	// the request may or may not have taken effect.
	ErrDisconnected = errors.New("ovsdb client: connection lost before reply")
	// ErrClosed: Close was called.
	ErrClosed = errors.New("ovsdb client: closed")
)

// Options tune a Client. The zero value is usable.
type Options struct {
	// MinBackoff and MaxBackoff bound the delay between reconnection
	// attempts; it doubles after each failure. Defaults: 100ms and 8s.
	MinBackoff, MaxBackoff time.Duration
	// NoReconnect stops Dial's client from reconnecting.
	NoReconnect bool
	// ProbeInterval, when positive, sends an echo request after that long
	// without hearing from the server and drops the connection if a
	// second interval passes without any message.
	ProbeInterval time.Duration
	// ErrorHook, when set, is told about errors no caller sees: updates
	// that could not be applied, failed reconnections and resyncs. The
	// package itself never logs.
	ErrorHook func(error)
}

// Client is a connection to an OVSDB server. See the package
// documentation.
type Client struct {
	target string // empty for NewClient: no reconnection
	opts   Options

	mu sync.Mutex
	// guarded by mu
	sess *session // nil while disconnected
	// guarded by mu
	nextID uint64
	// guarded by mu
	schemas map[string]*model.DatabaseSchema
	// guarded by mu
	replicas []*Replica // in Monitor order
	// guarded by mu
	monitors map[string]*Replica // by monitor id, on the current session
	// guarded by mu
	locks map[string]*Lock
	// guarded by mu
	nextMon int
	// guarded by mu
	closed bool
	// guarded by mu
	connCh chan struct{} // closed when connected; replaced on disconnect

	closing chan struct{} // closed by Close
	wg      sync.WaitGroup
}

// session is one connection's state.
type session struct {
	rpc  *jsonrpc.Conn
	nc   net.Conn
	done chan struct{} // closed when the reader has exited
	// lastHeard is when the last message arrived (Unix nanoseconds).
	lastHeard atomic.Int64
	// guarded by Client.mu
	pending map[uint64]*pendingCall
	// guarded by Client.mu
	dead bool
}

// pendingCall is a request waiting for its reply. hook, when set, runs on
// the reader goroutine before the next message is read, so that state the
// reply establishes (a monitor's initial contents, a lock's state) is in
// place before any notification that follows it.
type pendingCall struct {
	ch   chan *jsonrpc.Message
	hook func(*jsonrpc.Message)
}

// ParseTarget splits an Open vSwitch connection target ("unix:PATH",
// "tcp:HOST:PORT") into a network and address for net.Dial.
func ParseTarget(target string) (network, addr string, err error) {
	kind, rest, ok := strings.Cut(target, ":")
	if !ok || rest == "" {
		return "", "", fmt.Errorf("ovsdb client: invalid target %q (want unix:PATH or tcp:HOST:PORT)", target)
	}
	switch kind {
	case "unix":
		return "unix", rest, nil
	case "tcp":
		if _, _, err := net.SplitHostPort(rest); err != nil {
			return "", "", fmt.Errorf("ovsdb client: invalid target %q: %w", target, err)
		}
		return "tcp", rest, nil
	}
	return "", "", fmt.Errorf("ovsdb client: unsupported target %q (want unix:PATH or tcp:HOST:PORT)", target)
}

// Dial connects to target ("unix:PATH" or "tcp:HOST:PORT"). Unless
// opts.NoReconnect is set, the client reconnects to the same target
// whenever the connection drops, until Close.
func Dial(ctx context.Context, target string, opts ...Options) (*Client, error) {
	network, addr, err := ParseTarget(target)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("ovsdb client: dial %s: %w", target, err)
	}
	c := newClient(target, opts)
	s := c.startSession(nc)
	if !c.opts.NoReconnect {
		c.wg.Add(1)
		go c.supervise(s)
	}
	return c, nil
}

// NewClient runs the protocol over an established connection. It does not
// reconnect: once conn fails, calls return ErrNotConnected.
func NewClient(conn net.Conn, opts ...Options) *Client {
	c := newClient("", opts)
	c.startSession(conn)
	return c
}

func newClient(target string, opts []Options) *Client {
	c := &Client{
		target:   target,
		schemas:  map[string]*model.DatabaseSchema{},
		monitors: map[string]*Replica{},
		locks:    map[string]*Lock{},
		connCh:   make(chan struct{}),
		closing:  make(chan struct{}),
	}
	if len(opts) > 0 {
		c.opts = opts[0]
	}
	if c.opts.MinBackoff <= 0 {
		c.opts.MinBackoff = 100 * time.Millisecond
	}
	if c.opts.MaxBackoff < c.opts.MinBackoff {
		c.opts.MaxBackoff = max(8*time.Second, c.opts.MinBackoff)
	}
	return c
}

func (c *Client) reportError(err error) {
	if c.opts.ErrorHook != nil {
		c.opts.ErrorHook(err)
	}
}

// startSession makes nc the current connection and starts its reader.
func (c *Client) startSession(nc net.Conn) *session {
	s := &session{rpc: jsonrpc.NewConn(nc), nc: nc, done: make(chan struct{}), pending: map[uint64]*pendingCall{}}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		nc.Close()
		close(s.done)
		return s
	}
	c.sess = s
	close(c.connCh)
	c.wg.Add(1)
	c.mu.Unlock()
	go c.read(s)
	return s
}

// Connected reports whether the client has a connection now.
func (c *Client) Connected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess != nil
}

// WaitConnected blocks until the client has a connection.
func (c *Client) WaitConnected(ctx context.Context) error {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return ErrClosed
		}
		if c.sess != nil {
			c.mu.Unlock()
			return nil
		}
		ch := c.connCh
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.closing:
			return ErrClosed
		}
	}
}

// Disconnect drops the current connection as if the server had closed it;
// a Dial client then reconnects. Tests and health checks use it.
func (c *Client) Disconnect() {
	c.mu.Lock()
	s := c.sess
	c.mu.Unlock()
	if s != nil {
		s.nc.Close()
	}
}

// Close ends the connection, stops reconnecting and stops every replica's
// callback goroutine. Calls in flight return ErrDisconnected.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.closing)
	s := c.sess
	reps := append([]*Replica(nil), c.replicas...)
	c.mu.Unlock()
	var err error
	if s != nil {
		err = s.nc.Close()
	}
	c.wg.Wait()
	for _, r := range reps {
		r.stop()
	}
	return err
}

// read is the connection's reader goroutine.
func (c *Client) read(s *session) {
	defer c.wg.Done()
	defer c.endSession(s)
	s.lastHeard.Store(time.Now().UnixNano())
	if c.opts.ProbeInterval > 0 {
		c.wg.Add(1) // the reader's own count keeps the group non-zero
		go c.probe(s)
	}
	for {
		m, err := s.rpc.Recv()
		if err != nil {
			// Open vSwitch drops a peer that sends an invalid message, too.
			if !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.EOF) {
				c.reportError(fmt.Errorf("ovsdb client: receive: %w", err))
			}
			return
		}
		s.lastHeard.Store(time.Now().UnixNano())
		switch m.Kind {
		case jsonrpc.KindRequest:
			reply, ok := jsonrpc.EchoReply(m)
			if !ok {
				reply, _ = jsonrpc.NewError(m.ID, "unknown method")
			}
			if err := s.rpc.Send(reply); err != nil {
				return
			}
		case jsonrpc.KindNotify:
			if err := c.handleNotify(s, m); err != nil {
				c.reportError(err)
				return
			}
		case jsonrpc.KindReply, jsonrpc.KindError:
			id, err := strconv.ParseUint(string(m.ID), 10, 64)
			if err != nil {
				continue // not one of ours (ids are plain numbers)
			}
			c.mu.Lock()
			p := s.pending[id]
			delete(s.pending, id)
			c.mu.Unlock()
			if p == nil {
				continue
			}
			if p.hook != nil {
				p.hook(m)
			}
			p.ch <- m
		}
	}
}

// probe is the inactivity probe, as Open vSwitch's: after ProbeInterval
// without hearing from the server it sends an echo request, and if a
// further ProbeInterval passes with nothing heard it drops the connection.
func (c *Client) probe(s *session) {
	defer c.wg.Done()
	iv := c.opts.ProbeInterval
	tick := time.NewTicker(max(iv/4, time.Millisecond))
	defer tick.Stop()
	var echoSent int64 // when the outstanding echo was sent; 0 if none
	for {
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
		now := time.Now().UnixNano()
		heard := s.lastHeard.Load()
		switch {
		case echoSent != 0 && heard >= echoSent:
			echoSent = 0 // answered (or anything else arrived)
		case echoSent != 0 && time.Duration(now-echoSent) >= iv:
			s.nc.Close()
			return
		case echoSent == 0 && time.Duration(now-heard) >= iv:
			if m, err := jsonrpc.NewRequest("echo", []any{}, "echo"); err == nil {
				echoSent = now
				// A peer that does not read must not block the probe;
				// closing the connection unblocks the send.
				go func() { _ = s.rpc.Send(m) }()
			}
		}
	}
}

// endSession fails the session's pending calls and marks the client
// disconnected.
func (c *Client) endSession(s *session) {
	s.nc.Close()
	c.mu.Lock()
	s.dead = true
	s.pending = map[uint64]*pendingCall{}
	if c.sess == s {
		c.sess = nil
		c.connCh = make(chan struct{})
		c.monitors = map[string]*Replica{}
	}
	locks := make([]*Lock, 0, len(c.locks))
	for _, l := range c.locks {
		locks = append(locks, l)
	}
	c.mu.Unlock()
	for _, l := range locks {
		l.setHeld(false)
	}
	close(s.done)
}

// supervise reconnects after each connection ends, then monitors every
// replica again and requests every lock again.
func (c *Client) supervise(s *session) {
	defer c.wg.Done()
	network, addr, _ := ParseTarget(c.target)
	for {
		select {
		case <-s.done:
		case <-c.closing:
			<-s.done
			return
		}
		backoff := c.opts.MinBackoff
		var nc net.Conn
		for nc == nil {
			select {
			case <-c.closing:
				return
			case <-time.After(backoff):
			}
			var d net.Dialer
			ctx, cancel := context.WithTimeout(context.Background(), max(backoff, time.Second))
			conn, err := d.DialContext(ctx, network, addr)
			cancel()
			if err != nil {
				c.reportError(fmt.Errorf("ovsdb client: reconnect %s: %w", c.target, err))
				backoff = min(2*backoff, c.opts.MaxBackoff)
				continue
			}
			nc = conn
		}
		s = c.startSession(nc)
		c.resync(s)
	}
}

// resync monitors the replicas again and re-requests locks on session s.
// A failure drops the session so that the supervisor tries again.
func (c *Client) resync(s *session) {
	c.mu.Lock()
	reps := append([]*Replica(nil), c.replicas...)
	locks := make([]*Lock, 0, len(c.locks))
	for _, l := range c.locks {
		locks = append(locks, l)
	}
	c.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.done:
		case <-c.closing:
		case <-ctx.Done():
		}
		cancel()
	}()
	for _, r := range reps {
		if err := r.subscribe(ctx, s); err != nil {
			c.reportError(fmt.Errorf("ovsdb client: resync %s: %w", r.db, err))
			s.nc.Close()
			return
		}
	}
	for _, l := range locks {
		if err := l.request(ctx, s, "lock"); err != nil {
			c.reportError(fmt.Errorf("ovsdb client: relock %s: %w", l.name, err))
			s.nc.Close()
			return
		}
	}
}

// RPCError is an error reply to a request: the server's error object.
type RPCError struct {
	Method string
	Err    *model.Error
}

func (e *RPCError) Error() string { return "ovsdb client: " + e.Method + ": " + e.Err.Error() }

// Unwrap returns the server's error object.
func (e *RPCError) Unwrap() error { return e.Err }

// decodeErrorObject turns a JSON-RPC error member (a string or an object
// with error/details) into a model.Error.
func decodeErrorObject(raw json.RawMessage) *model.Error {
	var name string
	if json.Unmarshal(raw, &name) == nil {
		return &model.Error{Name: name}
	}
	var o struct {
		Error   string `json:"error"`
		Details string `json:"details"`
		Syntax  any    `json:"syntax"`
	}
	if json.Unmarshal(raw, &o) == nil && o.Error != "" {
		e := &model.Error{Name: o.Error, Details: o.Details}
		if o.Syntax != nil {
			e.Syntax = model.JSONText(o.Syntax)
		}
		return e
	}
	return &model.Error{Name: string(raw)}
}

// currentSession returns the connection calls go to now.
func (c *Client) currentSession() (*session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	if c.sess == nil {
		return nil, ErrNotConnected
	}
	return c.sess, nil
}

// call sends a request on session s (the current one when nil) and waits
// for its reply. An error reply becomes *RPCError.
func (c *Client) call(ctx context.Context, s *session, method string, params any, hook func(*jsonrpc.Message)) (json.RawMessage, error) {
	if s == nil {
		var err error
		if s, err = c.currentSession(); err != nil {
			return nil, err
		}
	}
	p := &pendingCall{ch: make(chan *jsonrpc.Message, 1), hook: hook}
	c.mu.Lock()
	if s.dead {
		c.mu.Unlock()
		return nil, ErrNotConnected
	}
	c.nextID++
	id := c.nextID
	s.pending[id] = p
	c.mu.Unlock()
	req, err := jsonrpc.NewRequest(method, params, id)
	if err != nil {
		c.forget(s, id)
		return nil, fmt.Errorf("ovsdb client: %s: %w", method, err)
	}
	if err := s.rpc.Send(req); err != nil {
		c.forget(s, id)
		s.nc.Close()
		return nil, fmt.Errorf("ovsdb client: %s: %w", method, ErrDisconnected)
	}
	select {
	case m := <-p.ch:
		if m.Kind == jsonrpc.KindError {
			return nil, &RPCError{Method: method, Err: decodeErrorObject(m.Error)}
		}
		return m.Result, nil
	case <-s.done:
		// The reply may have been delivered just before the reader ended.
		select {
		case m := <-p.ch:
			if m.Kind == jsonrpc.KindError {
				return nil, &RPCError{Method: method, Err: decodeErrorObject(m.Error)}
			}
			return m.Result, nil
		default:
		}
		return nil, fmt.Errorf("ovsdb client: %s: %w", method, ErrDisconnected)
	case <-ctx.Done():
		c.forget(s, id)
		if method == "transact" {
			// Ask the server to give up on a transaction blocked in a wait.
			if n, err := jsonrpc.NewNotify("cancel", []any{id}); err == nil {
				_ = s.rpc.Send(n)
			}
		}
		return nil, fmt.Errorf("ovsdb client: %s: %w", method, ctx.Err())
	}
}

func (c *Client) forget(s *session, id uint64) {
	c.mu.Lock()
	delete(s.pending, id)
	c.mu.Unlock()
}

// Echo sends an echo request and waits for the reply.
func (c *Client) Echo(ctx context.Context) error {
	res, err := c.call(ctx, nil, "echo", []any{"gvs"}, nil)
	if err != nil {
		return err
	}
	var got []string
	if json.Unmarshal(res, &got) != nil || len(got) != 1 || got[0] != "gvs" {
		return fmt.Errorf("ovsdb client: echo: unexpected reply %s", res)
	}
	return nil
}

// ListDBs returns the names of the databases the server serves.
func (c *Client) ListDBs(ctx context.Context) ([]string, error) {
	res, err := c.call(ctx, nil, "list_dbs", []any{}, nil)
	if err != nil {
		return nil, err
	}
	var names []string
	if err := json.Unmarshal(res, &names); err != nil {
		return nil, fmt.Errorf("ovsdb client: list_dbs: bad reply: %w", err)
	}
	return names, nil
}

// GetSchema fetches a database's schema from the server (and caches it
// for Monitor and Txn).
func (c *Client) GetSchema(ctx context.Context, db string) (*model.DatabaseSchema, error) {
	res, err := c.call(ctx, nil, "get_schema", []any{db}, nil)
	if err != nil {
		return nil, err
	}
	s, err := model.ParseSchema(res)
	if err != nil {
		return nil, fmt.Errorf("ovsdb client: get_schema %s: %w", db, err)
	}
	c.mu.Lock()
	c.schemas[db] = s
	c.mu.Unlock()
	return s, nil
}

// schema returns the cached schema of db, fetching it if needed.
func (c *Client) schema(ctx context.Context, db string) (*model.DatabaseSchema, error) {
	c.mu.Lock()
	s := c.schemas[db]
	c.mu.Unlock()
	if s != nil {
		return s, nil
	}
	return c.GetSchema(ctx, db)
}

// handleNotify applies one notification. An error means the connection's
// state can no longer be trusted.
func (c *Client) handleNotify(s *session, m *jsonrpc.Message) error {
	switch m.Method {
	case "update", "update2", "update3":
		var params []json.RawMessage
		if err := json.Unmarshal(m.Params, &params); err != nil || len(params) < 2 {
			return fmt.Errorf("ovsdb client: %s: malformed params", m.Method)
		}
		var monID string
		if err := json.Unmarshal(params[0], &monID); err != nil {
			return nil // not a monitor of ours
		}
		c.mu.Lock()
		r := c.monitors[monID]
		if c.sess != s {
			r = nil
		}
		c.mu.Unlock()
		if r == nil {
			return nil
		}
		return r.applyNotification(m.Method, params)
	case "locked", "stolen":
		var params []string
		if err := json.Unmarshal(m.Params, &params); err != nil || len(params) != 1 {
			return fmt.Errorf("ovsdb client: %s: malformed params", m.Method)
		}
		c.mu.Lock()
		l := c.locks[params[0]]
		c.mu.Unlock()
		if l != nil {
			l.setHeld(m.Method == "locked")
		}
	}
	return nil
}
