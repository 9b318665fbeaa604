package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/gvs-project/gvs/ovsdb/model"
)

// Limits bound what one client can make the server hold.
type Limits struct {
	// ReadBacklog is the most output, in bytes, a client may have queued
	// for the server to read its next request and to queue its monitors'
	// updates one by one; past it the server stops reading from the
	// client and merges the updates (0: DefaultReadBacklog).
	ReadBacklog int
	// StallTimeout disconnects a client that is behind on its monitors
	// when its output has not moved for this long (0:
	// DefaultStallTimeout).
	StallTimeout time.Duration
}

// Defaults of Limits.
const (
	DefaultReadBacklog  = 64 << 10
	DefaultStallTimeout = 60 * time.Second
)

// SetLimits changes the per-client limits; zero fields take the defaults.
func (s *Server) SetLimits(l Limits) {
	if l.ReadBacklog <= 0 {
		l.ReadBacklog = DefaultReadBacklog
	}
	if l.StallTimeout <= 0 {
		l.StallTimeout = DefaultStallTimeout
	}
	s.lim.Store(&l)
}

func (s *Server) limits() Limits {
	if l := s.lim.Load(); l != nil {
		return *l
	}
	return Limits{ReadBacklog: DefaultReadBacklog, StallTimeout: DefaultStallTimeout}
}

// SlowClientsDropped returns how many clients were disconnected for
// falling too far behind on their monitors.
func (s *Server) SlowClientsDropped() uint64 { return s.slowDropped.Load() }

// connError tells the error hook why a connection ends, except for the
// peer simply going away.
func (s *Server) connError(sess *session, err error) {
	if isHangup(err) {
		return
	}
	s.mu.Lock()
	hook := s.onError
	s.mu.Unlock()
	if hook != nil {
		hook(fmt.Errorf("%s: %w, disconnecting", sess.name(), err))
	}
}

func (sess *session) name() string {
	if a := sess.raw.RemoteAddr(); a != nil && a.String() != "" && a.String() != "@" {
		return a.Network() + ":" + a.String()
	}
	if a := sess.raw.LocalAddr(); a != nil {
		return a.Network() + ":" + a.String()
	}
	return "session"
}

// publishUpdate gives a committed transaction to a monitor: rendered and
// queued at once while the client keeps up, merged into the changes the
// monitor holds while it is behind, as ovsdb-server keeps one pending
// change set per row for a client with a backlog and sends it when the
// backlog is gone. A client that stays behind with no output moving for
// StallTimeout is disconnected.
//
// Preconditions: s.mu held.
func (s *Server) publishUpdate(m *monitor, tx *txn) {
	sess := m.sess
	if !sess.hasBehind.Load() && !sess.behind() {
		if u := m.update(tx.changes); u != nil {
			sess.enqueue(m.notification(u))
		}
		return
	}
	m.merge(tx.changes)
	if len(m.behind) == 0 {
		return
	}
	sess.behindMons[m] = struct{}{}
	sess.hasBehind.Store(true)
	// The writer may have drained the queue between behind() above and
	// the Store: it then saw no merged changes and sleeps until the next
	// message, which may never come (a unix client sends no probes).
	// Whoever sees the backlog gone flushes; under s.mu, only once.
	if !sess.behind() {
		sess.flushBehind()
		return
	}
	if sess.stalled() {
		s.dropSlow(sess)
	}
}

// dropSlow disconnects a client that fell too far behind.
//
// Preconditions: s.mu held.
func (s *Server) dropSlow(sess *session) {
	s.slowDropped.Add(1)
	if s.onError != nil {
		s.onError(fmt.Errorf("%s: monitor client made no progress for %v with updates pending, disconnecting",
			sess.name(), s.limits().StallTimeout))
	}
	sess.dropBehind()
	sess.stopQueue()
	sess.raw.Close()
}

// merge adds a transaction's changes for the monitor's tables to the
// changes it holds: a row keeps its state from before the first and
// after the last transaction.
func (m *monitor) merge(changes map[*dbTable]map[model.UUID]*change) {
	for _, mt := range m.tables {
		chs := changes[mt.table]
		if len(chs) == 0 {
			continue
		}
		if m.behind == nil {
			m.behind = map[*dbTable]map[model.UUID]*change{}
		}
		held := m.behind[mt.table]
		if held == nil {
			held = map[model.UUID]*change{}
			m.behind[mt.table] = held
		}
		for id, ch := range chs {
			if h, ok := held[id]; ok {
				h.new = ch.new
				if h.old == nil && h.new == nil {
					delete(held, id)
				}
				continue
			}
			held[id] = &change{old: ch.old, new: ch.new}
		}
	}
}

// flushBehind queues the merged updates of the session's monitors.
//
// Preconditions: s.mu held.
func (sess *session) flushBehind() {
	for m := range sess.behindMons {
		if u := m.update(m.behind); u != nil {
			sess.enqueue(m.notification(u))
		}
		m.behind = nil
	}
	clear(sess.behindMons)
	sess.hasBehind.Store(false)
}

// dropBehind forgets the merged updates (the session is going).
//
// Preconditions: s.mu held.
func (sess *session) dropBehind() {
	for m := range sess.behindMons {
		m.behind = nil
	}
	clear(sess.behindMons)
	sess.hasBehind.Store(false)
}

// isHangup reports whether err is the peer going away rather than
// something it sent.
func isHangup(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
