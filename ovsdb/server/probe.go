package server

import (
	"encoding/json"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/ovsdb/jsonrpc"
)

// ServeConnProbed is ServeConn with Open vSwitch's inactivity probe:
// after interval without hearing from the client the server sends an
// "echo" request, and it drops the connection if another interval passes
// without any message. interval <= 0 is ServeConn.
func (s *Server) ServeConnProbed(c net.Conn, interval time.Duration) {
	if interval <= 0 {
		s.ServeConn(c)
		return
	}
	rc := &readClock{Conn: c, closed: make(chan struct{})}
	rc.touch()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return
	}
	sess := newSession(s, rc)
	s.sessions[sess] = struct{}{}
	s.wg.Add(3)
	s.mu.Unlock()
	go func() { defer s.wg.Done(); sess.runWriter() }()
	go func() { defer s.wg.Done(); sess.runReader() }()
	go func() { defer s.wg.Done(); sess.probe(rc, interval) }()
}

// echoProbe is the inactivity probe; its reply is ignored like any reply.
func echoProbe() *jsonrpc.Message {
	return &jsonrpc.Message{Kind: jsonrpc.KindRequest, Method: "echo", Params: json.RawMessage("[]"), ID: json.RawMessage(`"echo"`)}
}

// probe runs until the connection closes.
func (sess *session) probe(rc *readClock, interval time.Duration) {
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-rc.closed:
			return
		case <-t.C:
		}
		if idle := time.Since(rc.last()); idle < interval {
			t.Reset(interval - idle)
			continue
		}
		sent := time.Now()
		sess.send(echoProbe())
		t.Reset(interval)
		select {
		case <-rc.closed:
			return
		case <-t.C:
		}
		if rc.last().Before(sent) {
			rc.Close() // nothing since the probe: the reader fails and cleans up
			return
		}
		t.Reset(max(interval-time.Since(rc.last()), time.Millisecond))
	}
}

// readClock records when the connection last received data.
type readClock struct {
	net.Conn
	lastRead atomic.Int64 // UnixNano
	once     sync.Once
	closed   chan struct{}
}

func (c *readClock) touch() { c.lastRead.Store(time.Now().UnixNano()) }

func (c *readClock) last() time.Time { return time.Unix(0, c.lastRead.Load()) }

func (c *readClock) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.touch()
	}
	return n, err
}

func (c *readClock) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}
