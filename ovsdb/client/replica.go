package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/gvs-project/gvs/ovsdb/jsonrpc"
	"github.com/gvs-project/gvs/ovsdb/model"
)

// zeroTxnID asks monitor_cond_since for the whole contents.
const zeroTxnID = "00000000-0000-0000-0000-000000000000"

// MonitorTable selects a table and its columns. Nil Columns means every
// column of the table.
type MonitorTable struct {
	Table   string
	Columns []string
}

// Row is one row of a replica: its UUID and the value of every monitored
// column (defaults included). Rows are immutable once published.
type Row struct {
	Table string
	UUID  model.UUID
	Data  map[string]model.Datum
}

// Get returns a column's value (an empty datum for an unmonitored column).
func (r *Row) Get(column string) model.Datum { return r.Data[column] }

// equal reports whether two rows of the same table hold the same values.
func (r *Row) equal(o *Row) bool {
	if len(r.Data) != len(o.Data) {
		return false
	}
	for k, v := range r.Data {
		w, ok := o.Data[k]
		if !ok || !v.Equal(w) {
			return false
		}
	}
	return true
}

// Snapshot is an immutable view of a replica after some number of
// updates. Its maps and rows must not be modified.
type Snapshot struct {
	// Seq counts the updates applied to the replica up to this view.
	Seq    uint64
	tables map[string]map[model.UUID]*Row
}

// Row returns one row, or nil.
func (s *Snapshot) Row(table string, id model.UUID) *Row { return s.tables[table][id] }

// Table returns the rows of a table by UUID. The map must not be modified.
func (s *Snapshot) Table(table string) map[model.UUID]*Row { return s.tables[table] }

// Rows returns the rows of a table sorted by UUID.
func (s *Snapshot) Rows(table string) []*Row {
	t := s.tables[table]
	out := make([]*Row, 0, len(t))
	for _, r := range t {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return model.CompareAtoms(out[i].UUID, out[j].UUID) < 0 })
	return out
}

// Find returns the rows of a table, sorted by UUID, for which match
// reports true.
func (s *Snapshot) Find(table string, match func(*Row) bool) []*Row {
	var out []*Row
	for _, r := range s.Rows(table) {
		if match(r) {
			out = append(out, r)
		}
	}
	return out
}

// ChangeKind says what happened to a row.
type ChangeKind uint8

// Change kinds.
const (
	Insert ChangeKind = iota + 1
	Modify
	Delete
)

var changeKindNames = [...]string{"invalid", "insert", "modify", "delete"}

func (k ChangeKind) String() string {
	if int(k) < len(changeKindNames) {
		return changeKindNames[k]
	}
	return "invalid"
}

// Change is one row's change in one applied update. Old is nil for
// Insert, New is nil for Delete.
type Change struct {
	Kind  ChangeKind
	Table string
	UUID  model.UUID
	Old   *Row
	New   *Row
	// Seq is the sequence number of the snapshot that includes the change.
	Seq uint64
}

// MonitorOptions tune a Monitor.
type MonitorOptions struct {
	// OnChange, when set, receives every change in order, on the
	// replica's own goroutine. The initial contents arrive as inserts.
	OnChange func(Change)
}

type monTable struct {
	schema *model.TableSchema
	cols   []*model.ColumnSchema // sorted by name
	byName map[string]*model.ColumnSchema
}

// Replica is the client-side copy of monitored tables of one database.
type Replica struct {
	c        *Client
	db       string
	schema   *model.DatabaseSchema
	tables   map[string]*monTable
	names    []string // monitored table names, sorted
	id       string   // monitor id
	onChange func(Change)
	snap     atomic.Pointer[Snapshot]

	mu sync.Mutex
	// guarded by mu
	method string // the monitor method the server accepted
	// guarded by mu
	lastTxnID string
	// guarded by mu
	notify chan struct{} // closed at the next update
	// guarded by mu
	queue []Change
	// guarded by mu
	stopped bool

	wake   chan struct{}
	stopCh chan struct{}
	done   chan struct{}
}

// monitorMethods is the order in which Monitor tries the methods, newest
// first, with the notification version each one implies.
var monitorMethods = []struct {
	name    string
	version int
}{
	{"monitor_cond_since", 3},
	{"monitor_cond", 2},
	{"monitor", 1},
}

// Monitor subscribes to tables of database db and returns the replica,
// filled with the initial contents. It keeps the replica up to date, and
// monitors again after every reconnection, until Close or Cancel.
func (c *Client) Monitor(ctx context.Context, db string, tables []MonitorTable, opts ...MonitorOptions) (*Replica, error) {
	schema, err := c.schema(ctx, db)
	if err != nil {
		return nil, err
	}
	var o MonitorOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	r, err := newReplica(c, db, schema, tables, o)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	r.id = fmt.Sprintf("gvs-%s-%d", db, c.nextMon)
	c.nextMon++
	c.mu.Unlock()
	go r.dispatch()
	if err := r.subscribe(ctx, nil); err != nil {
		r.stop()
		return nil, err
	}
	return r, nil
}

// newReplica builds an empty replica of tables; the caller starts its
// dispatcher.
func newReplica(c *Client, db string, schema *model.DatabaseSchema, tables []MonitorTable, o MonitorOptions) (*Replica, error) {
	r := &Replica{
		c: c, db: db, schema: schema, tables: map[string]*monTable{}, onChange: o.OnChange,
		notify: make(chan struct{}), wake: make(chan struct{}, 1),
		stopCh: make(chan struct{}), done: make(chan struct{}),
	}
	if len(tables) == 0 {
		return nil, fmt.Errorf("ovsdb client: monitor %s: no tables", db)
	}
	for _, mt := range tables {
		ts := schema.Tables[mt.Table]
		if ts == nil {
			return nil, fmt.Errorf("ovsdb client: monitor %s: unknown table %q", db, mt.Table)
		}
		if _, dup := r.tables[mt.Table]; dup {
			return nil, fmt.Errorf("ovsdb client: monitor %s: table %s listed twice", db, mt.Table)
		}
		t := &monTable{schema: ts, byName: map[string]*model.ColumnSchema{}}
		if mt.Columns == nil {
			t.cols = append(t.cols, ts.Columns...)
		}
		for _, name := range mt.Columns {
			col, ok := ts.Column(name)
			if !ok || col.Index < 0 {
				return nil, fmt.Errorf("ovsdb client: monitor %s: table %s has no column %q", db, mt.Table, name)
			}
			if _, dup := t.byName[name]; dup {
				continue
			}
			t.cols = append(t.cols, col)
			t.byName[name] = col
		}
		for _, col := range t.cols {
			t.byName[col.Name] = col
		}
		sort.Slice(t.cols, func(i, j int) bool { return t.cols[i].Name < t.cols[j].Name })
		r.tables[mt.Table] = t
		r.names = append(r.names, mt.Table)
	}
	sort.Strings(r.names)
	empty := &Snapshot{tables: map[string]map[model.UUID]*Row{}}
	for _, n := range r.names {
		empty.tables[n] = map[model.UUID]*Row{}
	}
	r.snap.Store(empty)
	return r, nil
}

// DB returns the monitored database's name.
func (r *Replica) DB() string { return r.db }

// Schema returns the database schema the replica was built with.
func (r *Replica) Schema() *model.DatabaseSchema { return r.schema }

// Snapshot returns the current view. It never blocks on updates.
func (r *Replica) Snapshot() *Snapshot { return r.snap.Load() }

// Seq returns the current sequence number.
func (r *Replica) Seq() uint64 { return r.snap.Load().Seq }

// Method returns the monitor method the server accepted.
func (r *Replica) Method() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.method
}

// LastTxnID returns the last transaction id the server reported
// (monitor_cond_since only), sent when monitoring again after a reconnect.
func (r *Replica) LastTxnID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastTxnID
}

// Changed returns a channel that is closed when the next update is
// applied.
func (r *Replica) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.notify
}

// WaitFor blocks until cond reports true for the current snapshot and
// returns that snapshot.
func (r *Replica) WaitFor(ctx context.Context, cond func(*Snapshot) bool) (*Snapshot, error) {
	for {
		ch := r.Changed()
		if s := r.Snapshot(); cond(s) {
			return s, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return r.Snapshot(), ctx.Err()
		}
	}
}

// Cancel stops monitoring: the server is told (monitor_cancel) when
// connected, and the callback goroutine stops; changes not yet delivered
// are dropped.
func (r *Replica) Cancel(ctx context.Context) error {
	c := r.c
	c.mu.Lock()
	c.replicas = slices.DeleteFunc(c.replicas, func(x *Replica) bool { return x == r })
	_, active := c.monitors[r.id]
	delete(c.monitors, r.id)
	c.mu.Unlock()
	var err error
	if active {
		_, err = c.call(ctx, nil, "monitor_cancel", []any{r.id}, nil)
		if errors.Is(err, ErrNotConnected) || errors.Is(err, ErrDisconnected) {
			err = nil
		}
	}
	r.stop()
	return err
}

func (r *Replica) stop() {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	r.stopped = true
	close(r.stopCh)
	r.mu.Unlock()
	<-r.done
}

// dispatch delivers queued changes to OnChange, in order, one at a time.
func (r *Replica) dispatch() {
	defer close(r.done)
	for {
		r.mu.Lock()
		batch := r.queue
		r.queue = nil
		stopped := r.stopped
		r.mu.Unlock()
		if stopped {
			return
		}
		for _, ch := range batch {
			r.onChange(ch)
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-r.wake:
		case <-r.stopCh:
			return
		}
	}
}

// requests renders the monitor requests, in the array form Open vSwitch's
// IDL sends.
func (r *Replica) requests() map[string][]map[string]any {
	out := make(map[string][]map[string]any, len(r.names))
	for _, n := range r.names {
		t := r.tables[n]
		cols := make([]string, len(t.cols))
		for i, c := range t.cols {
			cols[i] = c.Name
		}
		out[n] = []map[string]any{{"columns": cols}}
	}
	return out
}

// subscribe sends the monitor request on session s (the current one when
// nil), trying older methods when the server does not know a newer one.
// The reply is applied on the reader goroutine, before any update that
// follows it.
func (r *Replica) subscribe(ctx context.Context, s *session) error {
	c := r.c
	if s == nil {
		var err error
		if s, err = c.currentSession(); err != nil {
			return err
		}
	}
	r.mu.Lock()
	lastID := r.lastTxnID
	r.mu.Unlock()
	if lastID == "" {
		lastID = zeroTxnID
	}
	// Newest first on every connection, falling back on "unknown
	// method": the server may have changed since the last one (an
	// upgrade, or ovsdb-server/disable-monitor-cond, which also drops
	// every session).
	for _, m := range monitorMethods {
		params := []any{r.db, r.id, r.requests()}
		if m.version == 3 {
			params = append(params, lastID)
		}
		var applyErr error
		method, version := m.name, m.version
		hook := func(reply *jsonrpc.Message) {
			if reply.Kind != jsonrpc.KindReply {
				return
			}
			if applyErr = r.applyReply(version, reply.Result); applyErr != nil {
				s.nc.Close()
				return
			}
			r.mu.Lock()
			r.method = method
			r.mu.Unlock()
			c.mu.Lock()
			if c.sess == s {
				c.monitors[r.id] = r
			}
			if !slices.Contains(c.replicas, r) {
				c.replicas = append(c.replicas, r)
			}
			c.mu.Unlock()
		}
		_, err := c.call(ctx, s, method, params, hook)
		if applyErr != nil {
			return fmt.Errorf("ovsdb client: %s %s: %w", method, r.db, applyErr)
		}
		var rpcErr *RPCError
		if errors.As(err, &rpcErr) && rpcErr.Err.Name == "unknown method" {
			continue
		}
		return err
	}
	return fmt.Errorf("ovsdb client: monitor %s: server supports no monitor method", r.db)
}

// applyReply applies a monitor reply: the whole contents, or for
// monitor_cond_since with found=true the changes since the last txn id.
func (r *Replica) applyReply(version int, result json.RawMessage) error {
	if version != 3 {
		return r.apply(result, version, true, "")
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(result, &parts); err != nil || len(parts) != 3 {
		return fmt.Errorf("monitor_cond_since reply is not [found, last-txn-id, updates]")
	}
	var found bool
	var txnID string
	if json.Unmarshal(parts[0], &found) != nil || json.Unmarshal(parts[1], &txnID) != nil {
		return fmt.Errorf("monitor_cond_since reply is not [found, last-txn-id, updates]")
	}
	return r.apply(parts[2], 2, !found, txnID)
}

// applyNotification applies an update, update2 or update3 notification's
// params.
func (r *Replica) applyNotification(method string, params []json.RawMessage) error {
	var err error
	switch method {
	case "update":
		err = r.apply(params[1], 1, false, "")
	case "update2":
		err = r.apply(params[1], 2, false, "")
	case "update3":
		var txnID string
		if len(params) != 3 || json.Unmarshal(params[1], &txnID) != nil {
			return fmt.Errorf("ovsdb client: update3: params are not [monitor-id, last-txn-id, updates]")
		}
		err = r.apply(params[2], 2, false, txnID)
	}
	if err != nil {
		return fmt.Errorf("ovsdb client: %s for %s: %w", method, r.db, err)
	}
	return nil
}

// apply turns one <table-updates> (version 1) or <table-updates2>
// (version 2) into the next snapshot and publishes it with its changes.
// full means the updates are the complete contents (a monitor reply), to
// be compared with the current snapshot rather than applied to it.
func (r *Replica) apply(raw json.RawMessage, version int, full bool, txnID string) error {
	v, err := model.DecodeJSON(raw)
	if err != nil {
		return fmt.Errorf("bad JSON: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("table updates are not an object")
	}
	base := r.snap.Load()
	next := &Snapshot{Seq: base.Seq + 1, tables: maps.Clone(base.tables)}
	touched := map[string]map[model.UUID]bool{}
	if full {
		for _, n := range r.names {
			next.tables[n] = map[model.UUID]*Row{}
			ids := map[model.UUID]bool{}
			for id := range base.tables[n] {
				ids[id] = true
			}
			touched[n] = ids
		}
	}
	for _, tname := range sortedKeys(obj) {
		mt := r.tables[tname]
		if mt == nil {
			return fmt.Errorf("update for unmonitored table %q", tname)
		}
		rows, ok := obj[tname].(map[string]any)
		if !ok {
			return fmt.Errorf("table %s: row updates are not an object", tname)
		}
		if touched[tname] == nil {
			touched[tname] = map[model.UUID]bool{}
			next.tables[tname] = maps.Clone(base.tables[tname])
		}
		t := next.tables[tname]
		for _, idStr := range sortedKeys(rows) {
			id, err := model.ParseUUID(idStr)
			if err != nil {
				return fmt.Errorf("table %s: %w", tname, err)
			}
			touched[tname][id] = true
			ru, ok := rows[idStr].(map[string]any)
			if !ok {
				return fmt.Errorf("table %s row %s: update is not an object", tname, idStr)
			}
			row, del, err := mt.applyRowUpdate(t[id], id, ru, version)
			if err != nil {
				return fmt.Errorf("table %s row %s: %w", tname, idStr, err)
			}
			if del {
				delete(t, id)
			} else {
				t[id] = row
			}
		}
	}
	var changes []Change
	for _, tname := range r.names {
		ids := touched[tname]
		if len(ids) == 0 {
			continue
		}
		sorted := make([]model.UUID, 0, len(ids))
		for id := range ids {
			sorted = append(sorted, id)
		}
		sort.Slice(sorted, func(i, j int) bool { return model.CompareAtoms(sorted[i], sorted[j]) < 0 })
		for _, id := range sorted {
			old, new := base.tables[tname][id], next.tables[tname][id]
			ch := Change{Table: tname, UUID: id, Old: old, New: new, Seq: next.Seq}
			switch {
			case old == nil && new == nil:
				continue
			case old == nil:
				ch.Kind = Insert
			case new == nil:
				ch.Kind = Delete
			case old.equal(new):
				// Keep the old pointer so readers can compare rows by
				// identity across snapshots.
				next.tables[tname][id] = old
				continue
			default:
				ch.Kind = Modify
			}
			changes = append(changes, ch)
		}
	}
	r.mu.Lock()
	r.snap.Store(next)
	if txnID != "" {
		r.lastTxnID = txnID
	}
	if r.onChange != nil && !r.stopped {
		r.queue = append(r.queue, changes...)
	}
	close(r.notify)
	r.notify = make(chan struct{})
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return nil
}

// applyRowUpdate computes a row's next value from one <row-update>
// (version 1) or <row-update2> (version 2). del reports a deletion.
func (mt *monTable) applyRowUpdate(old *Row, id model.UUID, ru map[string]any, version int) (row *Row, del bool, err error) {
	if version == 1 {
		newObj, hasNew := ru["new"]
		if _, hasOld := ru["old"]; !hasNew && !hasOld {
			return nil, false, fmt.Errorf("neither old nor new")
		}
		if !hasNew {
			return nil, true, nil
		}
		return mt.decodeRow(old, id, newObj, false)
	}
	if len(ru) != 1 {
		return nil, false, fmt.Errorf("row update must have exactly one of initial, insert, modify, delete")
	}
	for kind, body := range ru {
		switch kind {
		case "initial", "insert":
			row, _, err := mt.decodeRow(nil, id, body, false)
			return row, false, err
		case "modify":
			if old == nil {
				return nil, false, fmt.Errorf("modify of a row the replica does not have")
			}
			row, _, err := mt.decodeRow(old, id, body, true)
			return row, false, err
		case "delete":
			return nil, true, nil
		default:
			return nil, false, fmt.Errorf("unknown row update %q", kind)
		}
	}
	return nil, false, nil
}

// decodeRow builds a row from base (or defaults when base is nil) with the
// columns of obj applied: as values, or as update2 diffs.
func (mt *monTable) decodeRow(base *Row, id model.UUID, obj any, diff bool) (*Row, bool, error) {
	o, ok := obj.(map[string]any)
	if !ok {
		return nil, false, fmt.Errorf("row is not an object")
	}
	row := &Row{Table: mt.schema.Name, UUID: id, Data: make(map[string]model.Datum, len(mt.cols))}
	if base != nil {
		maps.Copy(row.Data, base.Data)
	} else {
		for _, c := range mt.cols {
			row.Data[c.Name] = model.DefaultDatum(&c.Type)
		}
	}
	for name, v := range o {
		col := mt.byName[name]
		if col == nil {
			return nil, false, fmt.Errorf("unexpected column %q", name)
		}
		if !diff {
			d, e := model.DatumFromJSON(&col.Type, v, nil)
			if e != nil {
				return nil, false, fmt.Errorf("column %s: %w", name, e)
			}
			row.Data[name] = d
			continue
		}
		d, err := applyDiff(&col.Type, row.Data[name], v)
		if err != nil {
			return nil, false, fmt.Errorf("column %s: %w", name, err)
		}
		row.Data[name] = d
	}
	return row, false, nil
}

// applyDiff applies an update2 column diff: the new value for columns of
// at most one atom (ovsdb-server sends 7 or ["set",[]] for an optional
// integer); for sets the elements to toggle; for maps the pairs to remove
// (same value), add or replace.
func applyDiff(ct *model.ColumnType, old model.Datum, v any) (model.Datum, error) {
	if ct.DiffIsValue() {
		d, e := model.DatumFromJSON(ct, v, nil)
		if e != nil {
			return old, e
		}
		return d, nil
	}
	relaxed := *ct
	relaxed.Min, relaxed.Max = 0, model.Unlimited
	diff, e := model.DatumFromJSON(&relaxed, v, nil)
	if e != nil {
		return old, e
	}
	out := model.ApplyDiff(&relaxed, old, diff)
	if n := len(out.Keys); n < ct.Min || n > ct.Max {
		return old, fmt.Errorf("diff leaves %d elements, outside [%d, %d]", n, ct.Min, ct.Max)
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
