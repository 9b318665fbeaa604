package unixctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gvs-project/gvs/internal/unixsock"
	"github.com/gvs-project/gvs/ovsdb/jsonrpc"
)

// maxRequestSize bounds one request. Open vSwitch's unixctl server has no
// limit and answers a megabyte-long command with the command's error
// ("\"version\" command takes at most 0 arguments"); gvs does the same up
// to 16 MiB, past which it closes the connection rather than buffer more
// (one request per connection is read at a time).
const maxRequestSize = 16 << 20

// Server answers ovs-appctl requests from a Registry.
type Server struct {
	reg *Registry
	log *slog.Logger

	ctx    context.Context // cancelled by Close; parent of handler contexts
	cancel context.CancelFunc
	wg     sync.WaitGroup // connection goroutines

	mu     sync.Mutex
	lns    map[net.Listener]struct{} // guarded by mu
	conns  map[net.Conn]struct{}     // guarded by mu
	closed bool                      // guarded by mu
}

// NewServer returns a server for reg. log receives warnings about
// misbehaving clients; nil discards them.
func NewServer(reg *Registry, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{
		reg: reg, log: log, ctx: ctx, cancel: cancel,
		lns: make(map[net.Listener]struct{}), conns: make(map[net.Conn]struct{}),
	}
}

// SocketPath is the conventional control socket of a daemon,
// <rundir>/<program>.<pid>.ctl. A relative path given by the user (for
// example --unixctl=F) is resolved under rundir, an absolute one kept.
func SocketPath(rundir, program string, pid int) string {
	return filepath.Join(rundir, fmt.Sprintf("%s.%d.ctl", program, pid))
}

// ResolvePath resolves a --unixctl style path under rundir.
func ResolvePath(rundir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(rundir, path)
}

// Listen creates the unix socket at path (punix semantics) with mode
// 0770 and the daemon's group; see ListenPerm.
func Listen(path string) (net.Listener, error) { return ListenPerm(path, unixsock.Perm{}) }

// ListenPerm creates the unix socket at path with the permissions p: a
// stale socket file left by a dead daemon is removed first, and the file
// is removed again when the listener closes.
func ListenPerm(path string, p unixsock.Perm) (net.Listener, error) {
	ln, err := unixsock.Listen(path, p)
	if err != nil {
		return nil, fmt.Errorf("appctl: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	return ln, nil
}

// Serve accepts connections on ln until Close; it returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.lns[ln] = struct{}{}
	s.mu.Unlock()
	for {
		nc, err := ln.Accept()
		if err != nil && acceptRetryable(err) {
			// Out of descriptors or an aborted handshake: keep serving.
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				s.log.Warn("unixctl: accept failed, retrying", "error", err)
			}
			select {
			case <-time.After(50 * time.Millisecond):
				continue
			case <-s.ctx.Done():
			}
		}
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			delete(s.lns, ln)
			s.mu.Unlock()
			if closed {
				return nil
			}
			return fmt.Errorf("appctl: accept: %w", err)
		}
		if !s.track(nc) {
			nc.Close()
			return nil
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.untrack(nc)
			s.serveConn(nc)
		}()
	}
}

func acceptRetryable(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM) ||
		errors.Is(err, os.ErrDeadlineExceeded) // accepting held (a handover)
}

func (s *Server) track(nc net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[nc] = struct{}{}
	return true
}

func (s *Server) untrack(nc net.Conn) {
	s.mu.Lock()
	delete(s.conns, nc)
	s.mu.Unlock()
	nc.Close()
}

// Close stops the listeners, cancels running handlers, closes every
// connection and waits for their goroutines (so a handler that ignores
// its context delays Close until it returns).
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for ln := range s.lns {
		ln.Close()
	}
	for nc := range s.conns {
		nc.Close()
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return nil
}

type connKey struct{}

// connState is what a connection remembers between requests.
type connState struct {
	format Format // written only by set-options, on the connection's goroutine
}

// serveConn runs one connection: a reader goroutine hands over one message
// at a time, so at most one request is in flight, and notices the peer
// hanging up while a slow handler runs (cancelling its context).
func (s *Server) serveConn(nc net.Conn) {
	conn := jsonrpc.NewConn(nc)
	conn.MaxMessageSize = maxRequestSize
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	st := &connState{}
	ctx = context.WithValue(ctx, connKey{}, st)

	msgs := make(chan *jsonrpc.Message)
	go func() {
		defer close(msgs)
		for {
			m, err := conn.Recv()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
					s.log.Warn("unixctl: closing connection", "error", err)
				}
				cancel()
				return
			}
			select {
			case msgs <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() {
		nc.Close()
		for range msgs { // let the reader finish
		}
	}()
	for m := range msgs {
		if m.Kind != jsonrpc.KindRequest {
			s.log.Warn("unixctl: received unexpected message, closing connection", "kind", m.Kind.String())
			return
		}
		reply := s.dispatch(ctx, st, m)
		if err := conn.Send(reply); err != nil {
			return
		}
	}
}

// dispatch runs one request and builds its reply.
func (s *Server) dispatch(ctx context.Context, st *connState, m *jsonrpc.Message) *jsonrpc.Message {
	var params []json.RawMessage
	if err := json.Unmarshal(m.Params, &params); err != nil {
		// Decode guarantees an array; keep a reply rather than trust it.
		return errorReply(m.ID, fmt.Sprintf("%q command has non-string argument", m.Method))
	}
	cmd, ok := s.reg.Lookup(m.Method)
	if !ok && m.Method == "echo" {
		// JSON-RPC keepalive, answered as jsonrpc sessions answer it.
		r, _ := jsonrpc.EchoReply(m)
		return r
	}
	args := make([]string, 0, len(params))
	allStrings := true
	for _, p := range params {
		var a string
		if len(p) == 0 || p[0] != '"' || json.Unmarshal(p, &a) != nil {
			allStrings = false
			break
		}
		args = append(args, a)
	}
	if msg := checkArgs(&cmd, ok, m.Method, len(params), allStrings); msg != "" {
		return errorReply(m.ID, msg)
	}
	// The reply uses the format in force when the request arrived, so
	// set-options itself is answered in the old format.
	format := st.format
	if format == FormatJSON && cmd.RunJSON != nil {
		v, err := s.runJSON(ctx, &cmd, args)
		if err != nil {
			return errorReply(m.ID, err.Error())
		}
		r, err := jsonrpc.NewReply(m.ID, v)
		if err != nil {
			return errorReply(m.ID, fmt.Sprintf("%q: cannot encode reply: %v", m.Method, err))
		}
		return r
	}
	text, err := s.runText(ctx, &cmd, args)
	if err != nil {
		return errorReply(m.ID, err.Error())
	}
	text = withNewline(text)
	var result any = text
	if format == FormatJSON {
		result = plainReply{Format: "plain", Reply: text}
	}
	r, err := jsonrpc.NewReply(m.ID, result)
	if err != nil {
		return errorReply(m.ID, err.Error())
	}
	return r
}

// plainReply wraps a text reply on a JSON connection (Open vSwitch 3.4+).
type plainReply struct {
	Format string `json:"reply-format"`
	Reply  string `json:"reply"`
}

// runText calls the handler, turning a panic into an error reply: a bug
// in one command must not take the daemon down.
func (s *Server) runText(ctx context.Context, c *Command, args []string) (text string, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("unixctl: command panicked", "command", c.Name, "panic", p)
			err = fmt.Errorf("%q command failed: internal error", c.Name)
		}
	}()
	return c.Run(ctx, args)
}

func (s *Server) runJSON(ctx context.Context, c *Command, args []string) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("unixctl: command panicked", "command", c.Name, "panic", p)
			err = fmt.Errorf("%q command failed: internal error", c.Name)
		}
	}()
	return c.RunJSON(ctx, args)
}

// withNewline ends non-empty text with a newline, as Open vSwitch's
// server does for every reply body.
func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

func errorReply(id json.RawMessage, msg string) *jsonrpc.Message {
	if msg == "" {
		msg = "error"
	}
	r, err := jsonrpc.NewError(id, withNewline(msg))
	if err != nil { // a string always encodes
		r = &jsonrpc.Message{Kind: jsonrpc.KindError, Error: json.RawMessage(`"error\n"`), ID: id}
	}
	return r
}
