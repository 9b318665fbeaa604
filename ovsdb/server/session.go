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

	"github.com/gvs-project/gvs/ovsdb/jsonrpc"
	"github.com/gvs-project/gvs/ovsdb/model"
)

var sessionSeq atomic.Uint64

// session is one client connection. Everything but the outgoing queue is
// guarded by the server's mutex.
type session struct {
	srv  *Server
	conn *jsonrpc.Conn
	raw  net.Conn
	seq  uint64

	// Guarded by srv.mu.
	monitors map[string]*monitor
	locks    map[string]bool // locks held or waited for
	pending  map[string]*pendingTxn
	method   string // the request being handled
	// behindMons are the monitors holding merged changes that wait for
	// the client to catch up (monitor.go).
	behindMons map[*monitor]struct{}

	// hasBehind mirrors len(behindMons) > 0 for the writer, which checks
	// it without the server's lock.
	hasBehind atomic.Bool

	// The outgoing queue keeps replies and notifications in the order the
	// server produced them without ever blocking the server on a slow
	// client; its size in bytes is the backlog that stops reading.
	qmu   sync.Mutex
	qcond *sync.Cond
	queue []*jsonrpc.Message // guarded by qmu
	// backlog is the bytes queued plus those the writer is sending.
	backlog int // guarded by qmu
	// progress is when the writer last finished sending (or found the
	// queue empty).
	progress time.Time // guarded by qmu
	closed   bool      // guarded by qmu
}

func newSession(s *Server, c net.Conn) *session {
	sess := &session{
		srv: s, conn: jsonrpc.NewConn(c), raw: c, seq: sessionSeq.Add(1),
		monitors: map[string]*monitor{}, locks: map[string]bool{}, pending: map[string]*pendingTxn{},
		behindMons: map[*monitor]struct{}{}, progress: time.Now(),
	}
	sess.qcond = sync.NewCond(&sess.qmu)
	return sess
}

// maxBacklog bounds the messages queued for one client. With reading
// stopped by bytes (readBacklog) and monitor updates merged while the
// client is behind, it is only a last resort.
const maxBacklog = 1 << 16

// msgSize is a message's approximate size on the wire.
func msgSize(m *jsonrpc.Message) int {
	return len(m.Method) + len(m.Params) + len(m.Result) + len(m.Error) + len(m.ID) + 40
}

// send queues m. Updates merged while the client was behind go first, so
// that a reply never overtakes the changes committed before it.
//
// Preconditions: srv.mu held, except for the inactivity probe's echo.
func (sess *session) send(m *jsonrpc.Message) {
	if sess.hasBehind.Load() && m.Kind != jsonrpc.KindRequest {
		sess.flushBehind()
	}
	sess.enqueue(m)
}

func (sess *session) enqueue(m *jsonrpc.Message) {
	sess.qmu.Lock()
	defer sess.qmu.Unlock()
	if sess.closed {
		return
	}
	if len(sess.queue) >= maxBacklog {
		sess.closeQueueLocked()
		return
	}
	if sess.backlog == 0 {
		sess.progress = time.Now() // the stall clock starts with output
	}
	sess.queue = append(sess.queue, m)
	sess.backlog += msgSize(m)
	sess.qcond.Broadcast()
}

// behind reports whether the client has more queued output than
// readBacklog: the server then reads nothing more from it and merges its
// monitors' updates instead of queueing them.
func (sess *session) behind() bool {
	limit := sess.srv.limits().ReadBacklog
	sess.qmu.Lock()
	defer sess.qmu.Unlock()
	return sess.backlog > limit
}

// stalled reports whether the client is behind and its output has not
// moved for the stall timeout.
func (sess *session) stalled() bool {
	l := sess.srv.limits()
	sess.qmu.Lock()
	defer sess.qmu.Unlock()
	return sess.backlog > 0 && time.Since(sess.progress) > l.StallTimeout
}

// Backlog returns the bytes queued for clients over all sessions (what
// ovsdb-server's memory report calls "backlog").
func (s *Server) Backlog() int {
	s.mu.Lock()
	sessions := make([]*session, 0, len(s.sessions))
	for sess := range s.sessions {
		sessions = append(sessions, sess)
	}
	s.mu.Unlock()
	n := 0
	for _, sess := range sessions {
		sess.qmu.Lock()
		n += sess.backlog
		sess.qmu.Unlock()
	}
	return n
}

func (sess *session) reply(id json.RawMessage, result json.RawMessage) {
	sess.send(&jsonrpc.Message{Kind: jsonrpc.KindReply, ID: id, Result: result})
}

func (sess *session) replyError(id json.RawMessage, errObj json.RawMessage) {
	sess.send(&jsonrpc.Message{Kind: jsonrpc.KindError, ID: id, Error: errObj})
}

func (sess *session) notify(method string, params json.RawMessage) {
	sess.send(&jsonrpc.Message{Kind: jsonrpc.KindNotify, Method: method, Params: params})
}

func (sess *session) runWriter() {
	for {
		sess.qmu.Lock()
		for len(sess.queue) == 0 && !sess.closed {
			sess.progress = time.Now()
			sess.qcond.Wait()
		}
		if sess.closed {
			sess.qmu.Unlock()
			return
		}
		batch := sess.queue
		sess.queue = nil
		sess.qmu.Unlock()
		for i, m := range batch {
			err := sess.conn.Send(m)
			batch[i] = nil // the memory goes as soon as it is sent
			sess.qmu.Lock()
			sess.backlog -= msgSize(m)
			sess.progress = time.Now()
			sess.qcond.Broadcast()
			sess.qmu.Unlock()
			if err != nil {
				sess.raw.Close()
				sess.stopQueue()
				return
			}
		}
		if sess.hasBehind.Load() && !sess.behind() {
			s := sess.srv
			s.mu.Lock()
			sess.flushBehind()
			s.mu.Unlock()
		}
	}
}

// waitBacklog blocks until the client's queued output is at most
// readBacklog bytes, as ovsdb-server reads from a client only while it
// has no backlog: a client that sends requests without reading the
// replies fills its socket and then waits, and the server holds at most
// one reply more than the limit for it. False once the session closed.
func (sess *session) waitBacklog() bool {
	limit := sess.srv.limits().ReadBacklog
	sess.qmu.Lock()
	defer sess.qmu.Unlock()
	for sess.backlog > limit && !sess.closed {
		sess.qcond.Wait()
	}
	return !sess.closed
}

func (sess *session) closeQueueLocked() {
	sess.closed = true
	sess.queue = nil
	sess.backlog = 0
	sess.qcond.Broadcast()
	sess.raw.Close()
}

func (sess *session) stopQueue() {
	sess.qmu.Lock()
	sess.closed = true
	sess.queue = nil
	sess.backlog = 0
	sess.qcond.Broadcast()
	sess.qmu.Unlock()
}

func (sess *session) runReader() {
	defer sess.cleanup()
	for {
		if !sess.waitBacklog() {
			return
		}
		m, err := sess.conn.Recv()
		if err != nil {
			// Open vSwitch drops a connection that sends an invalid
			// message; so do we.
			sess.srv.connError(sess, err)
			return
		}
		if !sess.handle(m) {
			return
		}
	}
}

func (sess *session) cleanup() {
	s := sess.srv
	s.mu.Lock()
	for _, m := range sess.monitors {
		delete(m.db.monitors, m)
	}
	sess.monitors = nil
	sess.dropBehind()
	for name := range sess.locks {
		s.unlock(sess, name)
	}
	for _, p := range sess.pending {
		p.done = true
		p.stop()
	}
	delete(s.sessions, sess)
	s.mu.Unlock()
	sess.stopQueue()
	sess.raw.Close()
}

func (sess *session) holdsLock(name string) bool {
	l := sess.srv.locks[name]
	return l != nil && len(l.queue) > 0 && l.queue[0] == sess
}

// methodTable maps JSON-RPC methods to handlers. A handler returns the
// result, or an error object for an error reply.
var methodTable map[string]func(sess *session, id json.RawMessage, params []any) (json.RawMessage, json.RawMessage)

func init() {
	methodTable = map[string]func(*session, json.RawMessage, []any) (json.RawMessage, json.RawMessage){
		"echo":                (*session).doEcho,
		"list_dbs":            (*session).doListDBs,
		"get_schema":          (*session).doGetSchema,
		"transact":            (*session).doTransact,
		"monitor":             (*session).doMonitor,
		"monitor_cond":        (*session).doMonitor,
		"monitor_cond_since":  (*session).doMonitor,
		"monitor_cancel":      (*session).doMonitorCancel,
		"monitor_cond_change": (*session).doMonitorCondChange,
		"lock":                (*session).doLock,
		"steal":               (*session).doLock,
		"unlock":              (*session).doUnlock,
		"set_db_change_aware": (*session).doChangeAware,
	}
}

// noReply is returned by handlers that reply later (transact).
var noReply = json.RawMessage(nil)

// handle serves one message; false closes the connection.
func (sess *session) handle(m *jsonrpc.Message) bool {
	switch m.Kind {
	case jsonrpc.KindReply, jsonrpc.KindError:
		// Only the reply to the inactivity probe's echo is expected; any
		// other reply ends the session, as in ovsdb-server ("received
		// unexpected reply message").
		if m.Kind == jsonrpc.KindReply && string(m.ID) == `"echo"` {
			return true
		}
		sess.srv.connError(sess, fmt.Errorf("received unexpected %s message", m.Kind))
		return false
	case jsonrpc.KindNotify:
		if m.Method == "cancel" {
			sess.doCancel(m.Params)
		}
		return true
	}
	h, ok := methodTable[m.Method]
	if !ok {
		sess.srv.mu.Lock()
		sess.replyError(m.ID, json.RawMessage(`"unknown method"`))
		sess.srv.mu.Unlock()
		return true
	}
	v, err := model.DecodeJSON(m.Params)
	params, isArr := v.([]any)
	if err != nil || !isArr {
		if errors.Is(err, model.ErrNulString) {
			// The framer refuses \u0000 before this; kept for direct
			// callers.
			sess.srv.connError(sess, err)
			return false
		}
		sess.srv.mu.Lock()
		sess.replyError(m.ID, errorJSON(model.SyntaxErrorf(nil, "params must be an array")))
		sess.srv.mu.Unlock()
		return true
	}
	sess.srv.mu.Lock()
	defer sess.srv.mu.Unlock()
	if sess.hasBehind.Load() {
		sess.flushBehind()
	}
	sess.method = m.Method
	res, errObj := h(sess, m.ID, params)
	// The reply is queued before the lock is released: another session's
	// commit queues its update notifications under the lock, and they
	// must not overtake this reply — above all a new monitor's initial
	// contents, which would otherwise arrive after (and overwrite) an
	// update the client then never sees again. Queueing never blocks.
	switch {
	case errObj != nil:
		sess.replyError(m.ID, errObj)
	case res != nil:
		sess.reply(m.ID, res)
	}
	return true
}

func (sess *session) doEcho(id json.RawMessage, params []any) (json.RawMessage, json.RawMessage) {
	b, _ := json.Marshal(params)
	return b, nil
}

func (sess *session) doListDBs(id json.RawMessage, params []any) (json.RawMessage, json.RawMessage) {
	names := make([]string, 0, len(sess.srv.dbs))
	for n := range sess.srv.dbs {
		names = append(names, n)
	}
	sort.Strings(names)
	b := []byte{'['}
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = model.AppendString(b, n)
	}
	return append(b, ']'), nil
}

func (sess *session) lookupDB(method string, params []any) (*dbEntry, json.RawMessage) {
	if len(params) == 0 {
		return nil, errorJSON(model.SyntaxErrorf(params, "%s request params must begin with <db-name>", method))
	}
	name, ok := params[0].(string)
	if !ok {
		return nil, errorJSON(model.SyntaxErrorf(params, "%s request params must begin with <db-name>", method))
	}
	e, ok := sess.srv.dbs[name]
	if !ok {
		return nil, errorJSON(&model.Error{Name: model.ErrUnknownDatabase,
			Details: method + " request specifies unknown database " + name, Syntax: model.JSONText(params)})
	}
	return e, nil
}

func (sess *session) doGetSchema(id json.RawMessage, params []any) (json.RawMessage, json.RawMessage) {
	e, errObj := sess.lookupDB("get_schema", params)
	if errObj != nil {
		return nil, errObj
	}
	return e.db.Schema.Raw, nil
}

func (sess *session) doTransact(id json.RawMessage, params []any) (json.RawMessage, json.RawMessage) {
	sess.srv.transactions.Add(1)
	e, errObj := sess.lookupDB("transact", params)
	if errObj != nil {
		return nil, errObj
	}
	if _, dup := sess.pending[string(id)]; dup {
		return nil, errorJSON(model.Errorf(model.ErrSyntax, "duplicate request ID"))
	}
	sess.srv.runTxn(sess, e, id, params[1:], false, nil)
	return noReply, nil
}

func (sess *session) doCancel(params json.RawMessage) {
	v, err := model.DecodeJSON(params)
	arr, ok := v.([]any)
	if err != nil || !ok || len(arr) != 1 {
		return
	}
	idb, _ := json.Marshal(arr[0])
	s := sess.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := sess.pending[string(idb)]
	if !ok || p.done {
		return
	}
	p.done = true
	p.stop()
	delete(sess.pending, string(idb))
	sess.replyError(p.id, json.RawMessage(`"canceled"`))
}

func (sess *session) doMonitor(id json.RawMessage, params []any) (json.RawMessage, json.RawMessage) {
	method := sess.method
	version := map[string]int{"monitor": 1, "monitor_cond": 2, "monitor_cond_since": 3}[method]
	want := 3
	if version == 3 {
		want = 4
	}
	if len(params) != want {
		return nil, errorJSON(model.SyntaxErrorf(params, "invalid parameters"))
	}
	e, errObj := sess.lookupDB(method, params)
	if errObj != nil {
		return nil, errObj
	}
	monID, _ := json.Marshal(params[1])
	if _, dup := sess.monitors[string(monID)]; dup {
		return nil, errorJSON(model.SyntaxErrorf(params[1], "duplicate monitor ID"))
	}
	tables, err := parseMonitorRequests(e.db, params[2], version)
	if err != nil {
		return nil, errorJSON(err)
	}
	m := &monitor{sess: sess, db: e, id: monID, version: version, tables: tables}
	sess.monitors[string(monID)] = m
	e.monitors[m] = struct{}{}
	initial := m.initial()
	if version == 3 {
		// A standalone database keeps no transaction history, so the
		// client's last-txn-id is never found (ovsdb-server does the same).
		b := []byte(`[false,`)
		b = append(b, zeroTxnID...)
		b = append(b, ',')
		b = append(b, initial...)
		return append(b, ']'), nil
	}
	return initial, nil
}

func (sess *session) doMonitorCancel(id json.RawMessage, params []any) (json.RawMessage, json.RawMessage) {
	if len(params) != 1 {
		return nil, errorJSON(model.SyntaxErrorf(params, "invalid parameters"))
	}
	monID, _ := json.Marshal(params[0])
	m, ok := sess.monitors[string(monID)]
	if !ok {
		return nil, json.RawMessage(`"unknown monitor"`)
	}
	delete(sess.monitors, string(monID))
	delete(m.db.monitors, m)
	delete(sess.behindMons, m)
	m.behind = nil
	return json.RawMessage("{}"), nil
}

// doMonitorCondChange replaces the conditions of a monitor_cond or
// monitor_cond_since monitor (optionally renaming it), sending "insert"
// for rows that now match and "delete" for rows that no longer do.
func (sess *session) doMonitorCondChange(id json.RawMessage, params []any) (json.RawMessage, json.RawMessage) {
	if len(params) != 3 {
		return nil, errorJSON(model.SyntaxErrorf(params, "invalid parameters"))
	}
	oldID, _ := json.Marshal(params[0])
	newID, _ := json.Marshal(params[1])
	m, ok := sess.monitors[string(oldID)]
	if !ok {
		return nil, json.RawMessage(`"unknown monitor"`)
	}
	if m.version == 1 {
		return nil, errorJSON(model.SyntaxErrorf(params, "monitor_cond_change is only for monitor_cond and monitor_cond_since"))
	}
	if string(newID) != string(oldID) {
		if _, dup := sess.monitors[string(newID)]; dup {
			return nil, errorJSON(model.SyntaxErrorf(params[1], "duplicate monitor ID"))
		}
	}
	reqs, ok := params[2].(map[string]any)
	if !ok {
		return nil, errorJSON(model.SyntaxErrorf(params[2], "monitor-cond-change-requests must be an object"))
	}
	newWhere := map[*monitorTable][]model.Condition{}
	for _, name := range sortedKeys(reqs) {
		var mt *monitorTable
		for _, x := range m.tables {
			if x.table.Schema.Name == name {
				mt = x
			}
		}
		if mt == nil {
			return nil, errorJSON(model.SyntaxErrorf(reqs[name], "%s is not a table in the monitor", name))
		}
		list, isArr := reqs[name].([]any)
		if !isArr {
			list = []any{reqs[name]}
		}
		var conds []model.Condition
		all := false
		for _, rv := range list {
			req, ok := rv.(map[string]any)
			if !ok {
				return nil, errorJSON(model.SyntaxErrorf(rv, "monitor-cond-change-request must be an object"))
			}
			wv, ok := req["where"]
			if !ok {
				all = true
				continue
			}
			c, err := model.ParseConditions(mt.table.Schema, wv, nil)
			if err != nil {
				return nil, errorJSON(err)
			}
			if len(c) == 0 {
				all = true
			}
			conds = append(conds, c...)
		}
		if all {
			conds = nil
		}
		newWhere[mt] = conds
	}
	b := []byte{'{'}
	nt := 0
	for _, mt := range m.tables {
		conds, changed := newWhere[mt]
		if !changed {
			continue
		}
		next := &monitorTable{where: conds}
		start := len(b)
		if nt > 0 {
			b = append(b, ',')
		}
		b = model.AppendString(b, mt.table.Schema.Name)
		b = append(b, ":{"...)
		n := 0
		for _, rid := range sortedUUIDs(mt.table.Rows) {
			r := mt.table.Rows[rid]
			was, is := mt.matches(r), next.matches(r)
			if was == is {
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = model.AppendString(b, rid.String())
			if is {
				b = append(b, `:{"insert":`...)
				b = appendNonDefault(b, mt.columns, r)
				b = append(b, '}')
			} else {
				b = append(b, `:{"delete":null}`...)
			}
		}
		mt.where = conds
		if n == 0 {
			b = b[:start]
			continue
		}
		nt++
		b = append(b, '}')
	}
	b = append(b, '}')
	if string(newID) != string(oldID) {
		delete(sess.monitors, string(oldID))
		m.id = newID
		sess.monitors[string(newID)] = m
	}
	if nt > 0 {
		sess.send(m.notification(b))
	}
	return json.RawMessage("{}"), nil
}

func (sess *session) doChangeAware(id json.RawMessage, params []any) (json.RawMessage, json.RawMessage) {
	if len(params) != 1 {
		return nil, errorJSON(model.SyntaxErrorf(params, "invalid parameters"))
	}
	if _, ok := params[0].(bool); !ok {
		return nil, errorJSON(model.SyntaxErrorf(params, "invalid parameters"))
	}
	return json.RawMessage("{}"), nil
}

// lockName parses the params of lock, steal and unlock: one <id>, as
// ovsdb-server requires.
func lockName(method string, params []any) (string, json.RawMessage) {
	var name string
	ok := len(params) == 1
	if ok {
		name, ok = params[0].(string)
	}
	if !ok || !model.ValidID(name) {
		return "", errorJSON(model.SyntaxErrorf(params, "%s request params must be <id>", method))
	}
	return name, nil
}

func (sess *session) doLock(id json.RawMessage, params []any) (json.RawMessage, json.RawMessage) {
	name, errObj := lockName(sess.method, params)
	if errObj != nil {
		return nil, errObj
	}
	if sess.locks[name] {
		return nil, errorJSON(model.SyntaxErrorf(params, "must issue \"unlock\" before new \"%s\"", sess.method))
	}
	s := sess.srv
	l := s.locks[name]
	if l == nil {
		l = &lockState{}
		s.locks[name] = l
	}
	sess.locks[name] = true
	nameJSON := model.AppendString([]byte{'['}, name)
	nameJSON = append(nameJSON, ']')
	if sess.method == "steal" {
		if len(l.queue) > 0 {
			old := l.queue[0]
			old.notify("stolen", nameJSON)
		}
		l.queue = append([]*session{sess}, l.queue...)
		return json.RawMessage(`{"locked":true}`), nil
	}
	l.queue = append(l.queue, sess)
	if len(l.queue) == 1 {
		return json.RawMessage(`{"locked":true}`), nil
	}
	return json.RawMessage(`{"locked":false}`), nil
}

func (sess *session) doUnlock(id json.RawMessage, params []any) (json.RawMessage, json.RawMessage) {
	name, errObj := lockName(sess.method, params)
	if errObj != nil {
		return nil, errObj
	}
	if !sess.locks[name] {
		return nil, errorJSON(model.SyntaxErrorf(params, "unlock: \"unlock\" without \"lock\" or \"steal\""))
	}
	sess.srv.unlock(sess, name)
	return json.RawMessage("{}"), nil
}

// unlock removes sess from the lock's queue, handing the lock to the next
// waiter with a "locked" notification.
//
// Preconditions: s.mu held.
func (s *Server) unlock(sess *session, name string) {
	delete(sess.locks, name)
	l := s.locks[name]
	if l == nil {
		return
	}
	wasOwner := len(l.queue) > 0 && l.queue[0] == sess
	q := l.queue[:0]
	for _, w := range l.queue {
		if w != sess {
			q = append(q, w)
		}
	}
	l.queue = q
	if len(q) == 0 {
		delete(s.locks, name)
		return
	}
	if wasOwner {
		p := model.AppendString([]byte{'['}, name)
		q[0].notify("locked", append(p, ']'))
	}
}
