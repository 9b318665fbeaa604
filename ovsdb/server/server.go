package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/ovsdb/model"
)

// Server serves any number of databases, plus _Server, to JSON-RPC
// clients.
type Server struct {
	mu sync.Mutex
	// guarded by mu
	dbs map[string]*dbEntry
	// guarded by mu
	locks map[string]*lockState
	// guarded by mu
	sessions map[*session]struct{}
	// guarded by mu
	listeners map[net.Listener]struct{}
	// guarded by mu
	closed bool
	// guarded by mu
	onError func(error)

	wg sync.WaitGroup // sessions and Serve loops

	// transactions counts "transact" requests, for gvs-vswitchd's metrics.
	transactions atomic.Uint64
	// lim is the per-client limits (backlog.go); nil: the defaults.
	lim atomic.Pointer[Limits]
	// slowDropped counts clients disconnected for being too far behind.
	slowDropped atomic.Uint64
}

// Transactions returns how many "transact" requests the server has
// received (valid or not), over all databases and sessions.
func (s *Server) Transactions() uint64 { return s.transactions.Load() }

// Monitors returns the number of active monitors (monitor, monitor_cond
// and monitor_cond_since) over all databases and sessions.
func (s *Server) Monitors() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.dbs {
		n += len(e.monitors)
	}
	return n
}

// Sessions returns the number of connected clients.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// SetErrorHook sets a function told about errors that no client sees,
// such as a failed log compaction. The package itself never logs.
func (s *Server) SetErrorHook(fn func(error)) {
	s.mu.Lock()
	s.onError = fn
	s.mu.Unlock()
}

type dbEntry struct {
	db       *Database
	monitors map[*monitor]struct{}
	waiters  []*pendingTxn
	rowID    model.UUID // its _Server.Database row
}

// pendingTxn is a transaction blocked in a "wait" with a timeout.
type pendingTxn struct {
	sess  *session
	id    json.RawMessage
	db    *dbEntry
	ops   []any
	timer *time.Timer
	done  bool
}

func (p *pendingTxn) stop() {
	if p.timer != nil {
		p.timer.Stop()
	}
}

type lockState struct {
	// queue[0] holds the lock; the rest wait in order.
	queue []*session
}

// New returns a server holding only the _Server database.
func New() *Server {
	s := &Server{
		dbs:       map[string]*dbEntry{},
		locks:     map[string]*lockState{},
		sessions:  map[*session]struct{}{},
		listeners: map[net.Listener]struct{}{},
	}
	sdb := newServerDatabase()
	e := &dbEntry{db: sdb, monitors: map[*monitor]struct{}{}, rowID: model.NewUUID()}
	s.dbs[ServerDatabaseName] = e
	s.publish(e)
	return s
}

// publish adds the _Server.Database row for e.
//
// Preconditions: s.mu held (or s not yet shared).
func (s *Server) publish(e *dbEntry) {
	se := s.dbs[ServerDatabaseName]
	tx := newTxn(se.db, nil)
	t := se.db.tables["Database"]
	tx.insert(t, serverRow(se.db, e.rowID, e.db))
	s.commit(se, tx)
}

// AddDatabase starts serving db under its schema's name.
func (s *Server) AddDatabase(db *Database) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := db.Schema.Name
	if _, ok := s.dbs[name]; ok {
		return fmt.Errorf("ovsdb server: database %s already served", name)
	}
	e := &dbEntry{db: db, monitors: map[*monitor]struct{}{}, rowID: model.NewUUID()}
	s.dbs[name] = e
	s.publish(e)
	return nil
}

// Serve accepts connections on l until l fails or Close is called.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return net.ErrClosed
	}
	s.listeners[l] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			delete(s.listeners, l)
			s.mu.Unlock()
			if closed {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond) // a deadline holds accepting (a handover)
				continue
			}
			return fmt.Errorf("ovsdb server: accept: %w", err)
		}
		s.ServeConn(c)
	}
}

// ServeConn serves one established connection in the background.
func (s *Server) ServeConn(c net.Conn) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return
	}
	sess := newSession(s, c)
	s.sessions[sess] = struct{}{}
	s.wg.Add(2)
	s.mu.Unlock()
	go func() { defer s.wg.Done(); sess.runWriter() }()
	go func() { defer s.wg.Done(); sess.runReader() }()
}

// Close stops every listener and connection, waits for their goroutines
// and closes the databases' files.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for l := range s.listeners {
		l.Close()
	}
	for sess := range s.sessions {
		sess.conn.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, e := range s.dbs {
		for _, p := range e.waiters {
			p.stop()
		}
		if err := e.db.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Compact rewrites the named database's log as its schema plus one
// snapshot record (what `ovs-appctl ovsdb-server/compact` asks of
// ovsdb-server). A database without a file needs no compaction.
func (s *Server) Compact(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.dbs[name]
	if !ok {
		return fmt.Errorf("ovsdb server: unknown database %s", name)
	}
	if e.db.log == nil {
		return nil
	}
	return e.db.log.Compact(e.db.Schema.Raw, e.db.snapshot())
}

// commit writes, applies and publishes a transaction that passed
// precommit.
//
// Preconditions: s.mu held.
func (s *Server) commit(e *dbEntry, tx *txn) *model.Error {
	if !tx.hasChanges() {
		return nil
	}
	db := e.db
	if db.log != nil {
		if rec := tx.logRecord(db.now().UnixMilli()); rec != nil {
			if err := db.log.Append(rec); err != nil {
				return model.Errorf(model.ErrIO, "%v", err)
			}
		}
	}
	tx.apply()
	mons := make([]*monitor, 0, len(e.monitors))
	for m := range e.monitors {
		mons = append(mons, m)
	}
	sort.Slice(mons, func(i, j int) bool { return mons[i].sess.seq < mons[j].sess.seq })
	for _, m := range mons {
		s.publishUpdate(m, tx)
	}
	if db.log != nil && db.log.ShouldCompact(db.compactMinSize) {
		// The transaction is already durable; a failed compaction only
		// leaves the longer log in place.
		if err := db.log.Compact(db.Schema.Raw, db.snapshot()); err != nil && s.onError != nil {
			s.onError(fmt.Errorf("ovsdb server: compacting %s: %w", db.Schema.Name, err))
		}
	}
	s.retryWaiters(e)
	return nil
}

// retryWaiters re-runs transactions blocked in "wait" after a commit.
//
// Preconditions: s.mu held.
func (s *Server) retryWaiters(e *dbEntry) {
	waiters := e.waiters
	e.waiters = nil
	for _, p := range waiters {
		if p.done {
			continue
		}
		if s.runTxn(p.sess, e, p.id, p.ops, false, p) {
			p.done = true
			p.stop()
			delete(p.sess.pending, string(p.id))
		}
	}
}

// runTxn executes and, if possible, commits a transaction, then replies.
// It reports false if the transaction blocked in a "wait" and was queued.
//
// Preconditions: s.mu held.
func (s *Server) runTxn(sess *session, e *dbEntry, id json.RawMessage, ops []any, expired bool, p *pendingTxn) bool {
	tx := newTxn(e.db, sess.holdsLock)
	tx.expired = expired
	results, ok := tx.execute(ops)
	if results == nil && tx.blocked {
		if p == nil {
			p = &pendingTxn{sess: sess, id: id, db: e, ops: ops}
			if tx.wait >= 0 {
				p.timer = time.AfterFunc(tx.wait, func() { s.expire(p) })
			}
			sess.pending[string(id)] = p
		}
		e.waiters = append(e.waiters, p)
		return false
	}
	if ok {
		if err := s.commit(e, tx); err != nil {
			results = append(results, errorJSON(err))
		}
	}
	sess.reply(id, rawArray(results))
	return true
}

func (s *Server) expire(p *pendingTxn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.done {
		return
	}
	p.done = true
	delete(p.sess.pending, string(p.id))
	s.runTxn(p.sess, p.db, p.id, p.ops, true, p)
}

func rawArray(items []json.RawMessage) json.RawMessage {
	b := []byte{'['}
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	return append(b, ']')
}

func sortStrings(s []string) { sort.Strings(s) }
