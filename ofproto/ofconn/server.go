package ofconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/internal/unixsock"
)

// Server accepts OpenFlow connections and serves each with Handler.
type Server struct {
	Handler Handler
	Config
	// HandshakeTimeout bounds the hello exchange; zero means 10s.
	HandshakeTimeout time.Duration
	// ErrorLog receives per-connection failures (handshake errors, closes
	// with an error); nil discards them.
	ErrorLog func(err error)
	// UnixPerm is the mode and group of punix: sockets (zero: 0770 with
	// the process's group).
	UnixPerm unixsock.Perm

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*Conn]struct{}
	closed    bool
	wg        sync.WaitGroup
	accepted  atomic.Uint64
}

// ParseListen turns "punix:PATH" or "ptcp:PORT[:IP]" into a network and
// address for net.Listen.
func ParseListen(target string) (network, addr string, err error) {
	kind, rest, ok := strings.Cut(target, ":")
	switch {
	case ok && kind == "punix" && rest != "":
		return "unix", rest, nil
	case ok && kind == "ptcp":
		port, ip, _ := strings.Cut(rest, ":")
		if strings.Contains(ip, ":") && !strings.HasPrefix(ip, "[") {
			ip = "[" + ip + "]"
		}
		if port == "" {
			port = "6653"
		}
		return "tcp", ip + ":" + port, nil
	}
	return "", "", fmt.Errorf("ofconn: unsupported listen target %q (want punix:PATH or ptcp:PORT[:IP])", target)
}

// Listen opens a listener for target ("punix:PATH" or "ptcp:PORT[:IP]")
// and serves it in the background. A stale unix socket file is removed
// first, as Open vSwitch does.
func (s *Server) Listen(target string) (net.Listener, error) {
	network, addr, err := ParseListen(target)
	if err != nil {
		return nil, err
	}
	var l net.Listener
	if network == "unix" {
		l, err = unixsock.Listen(addr, s.UnixPerm)
	} else {
		l, err = unixsock.ListenTCP(network, addr, s.UnixPerm) // handed over when the daemon took over
	}
	if err != nil {
		return nil, fmt.Errorf("ofconn: listening on %s: %w", target, err)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.Serve(l)
	}()
	return l, nil
}

// Serve accepts connections on l until l or the server is closed; each
// connection is served on its own goroutines.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		l.Close()
		return ErrClosed
	}
	if s.listeners == nil {
		s.listeners = map[net.Listener]struct{}{}
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	for {
		nc, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return fmt.Errorf("ofconn: accepting: %w", err)
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(nc, l)
		}()
	}
}

func (s *Server) logf(err error) {
	if s.ErrorLog != nil && err != nil {
		s.ErrorLog(err)
	}
}

func (s *Server) serveConn(nc net.Conn, l net.Listener) {
	to := s.HandshakeTimeout
	if to == 0 {
		to = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), to)
	c, r, err := handshake(ctx, nc, &s.Config, s.Handler, s.connName(nc))
	cancel()
	if err != nil {
		nc.Close()
		s.logf(fmt.Errorf("%s: %w", nc.RemoteAddr(), err))
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		nc.Close()
		return
	}
	if s.conns == nil {
		s.conns = map[*Conn]struct{}{}
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	c.listener = l
	c.run(r)
	s.logf(c.Err())
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// connName names an accepted connection in debug logs as Open vSwitch
// does: "unix#N" on a unix socket (N counts the server's connections),
// "tcp:IP:PORT" of the peer otherwise.
func (s *Server) connName(nc net.Conn) string {
	n := s.accepted.Add(1)
	if nc.LocalAddr().Network() == "unix" {
		return fmt.Sprintf("unix#%d", n)
	}
	return "tcp:" + nc.RemoteAddr().String()
}

// Conns returns the currently established connections.
func (s *Server) Conns() []*Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Conn, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	return out
}

// Close closes all listeners and connections and waits for their
// goroutines to finish.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}
