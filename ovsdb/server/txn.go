package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gvs-project/gvs/ovsdb/model"
)

// change is one row's fate in a transaction: old is the committed row (nil
// for an insert) and new its replacement (nil for a delete). new, when
// non-nil, is owned by the transaction and may be changed in place.
type change struct {
	old, new *row
}

type symbol struct {
	uuid    model.UUID
	created bool
}

// txn is a transaction being executed: a copy-on-write overlay on the
// committed tables. Nothing it does is visible until commit.
type txn struct {
	db       *Database
	changes  map[*dbTable]map[model.UUID]*change
	symbols  map[string]*symbol
	comments []string
	// holdsLock answers "assert"; nil means no lock is held.
	holdsLock func(string) bool
	// expired makes a failing "wait" fail now instead of blocking.
	expired bool
	// wait is the longest timeout of a failed "wait" that asked to block.
	wait    time.Duration
	blocked bool
}

func newTxn(db *Database, holdsLock func(string) bool) *txn {
	return &txn{db: db, changes: map[*dbTable]map[model.UUID]*change{}, symbols: map[string]*symbol{}, holdsLock: holdsLock}
}

func (tx *txn) resolve(name string) model.UUID {
	s, ok := tx.symbols[name]
	if !ok {
		s = &symbol{uuid: model.NewUUID()}
		tx.symbols[name] = s
	}
	return s.uuid
}

// get returns the row as the transaction sees it.
func (tx *txn) get(t *dbTable, id model.UUID) *row {
	if ch, ok := tx.changes[t][id]; ok {
		return ch.new
	}
	return t.Rows[id]
}

// rows returns every row the transaction sees, sorted by UUID.
func (tx *txn) rows(t *dbTable) []*row {
	chs := tx.changes[t]
	out := make([]*row, 0, len(t.Rows)+len(chs))
	for id, r := range t.Rows {
		if _, ok := chs[id]; !ok {
			out = append(out, r)
		}
	}
	for _, ch := range chs {
		if ch.new != nil {
			out = append(out, ch.new)
		}
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].UUID[:], out[j].UUID[:]) < 0 })
	return out
}

// matching returns the rows that satisfy conds, using a direct lookup for
// the common "_uuid == X" clause.
func (tx *txn) matching(t *dbTable, conds []model.Condition) []*row {
	for _, c := range conds {
		if c.Column != nil && c.Column.Index == model.ColUUID && c.Func == model.FuncEQ && len(c.Value.Keys) == 1 {
			r := tx.get(t, c.Value.Keys[0].(model.UUID))
			if r != nil && model.Match(conds, r) {
				return []*row{r}
			}
			return nil
		}
	}
	if rows, ok := tx.matchingByIndex(t, conds); ok {
		return rows
	}
	var out []*row
	for _, r := range tx.rows(t) {
		if model.Match(conds, r) {
			out = append(out, r)
		}
	}
	return out
}

// matchingByIndex answers a "where" that pins every column of a unique
// index with "==" (Interface by name, for instance) from the index: the
// committed row holding that key, plus whatever the transaction changed.
func (tx *txn) matchingByIndex(t *dbTable, conds []model.Condition) ([]*row, bool) {
	for i, cols := range t.Schema.Indexes {
		key := make([]model.Datum, len(cols))
		found := 0
		for j, c := range cols {
			for k := range conds {
				cd := &conds[k]
				if cd.Column != nil && cd.Column.Index == c && cd.Func == model.FuncEQ {
					key[j] = cd.Value
					found++
					break
				}
			}
		}
		if found != len(cols) {
			continue
		}
		probe := &row{Data: make([]model.Datum, len(t.Schema.Columns))}
		for j, c := range cols {
			probe.Data[c] = key[j]
		}
		var out []*row
		chs := tx.changes[t]
		if id, ok := t.indexes[i][indexKey(t.Schema, cols, probe)]; ok {
			if _, changed := chs[id]; !changed {
				if r := t.Rows[id]; model.Match(conds, r) {
					out = append(out, r)
				}
			}
		}
		for _, ch := range chs {
			if ch.new != nil && model.Match(conds, ch.new) {
				out = append(out, ch.new)
			}
		}
		sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].UUID[:], out[j].UUID[:]) < 0 })
		return out, true
	}
	return nil, false
}

func (tx *txn) tableChanges(t *dbTable) map[model.UUID]*change {
	m := tx.changes[t]
	if m == nil {
		m = map[model.UUID]*change{}
		tx.changes[t] = m
	}
	return m
}

// modify returns a transaction-owned copy of r for changing.
func (tx *txn) modify(t *dbTable, r *row) *row {
	chs := tx.tableChanges(t)
	if ch, ok := chs[r.UUID]; ok && ch.new != nil {
		return ch.new
	}
	n := r.clone()
	n.Version = model.NewUUID()
	chs[r.UUID] = &change{old: t.Rows[r.UUID], new: n}
	return n
}

func (tx *txn) insert(t *dbTable, r *row) {
	tx.tableChanges(t)[r.UUID] = &change{new: r}
}

func (tx *txn) remove(t *dbTable, id model.UUID) {
	chs := tx.tableChanges(t)
	if ch, ok := chs[id]; ok {
		if ch.old == nil {
			delete(chs, id)
			return
		}
		ch.new = nil
		return
	}
	chs[id] = &change{old: t.Rows[id]}
}

// errWait is returned by a "wait" whose condition is false and whose
// timeout has not expired: the transaction is retried after later commits.
var errWait = &model.Error{Name: "wait"}

// opParser reads the members of one operation object.
type opParser struct {
	op   map[string]any
	raw  any
	i, n int
	used map[string]bool
}

func (p *opParser) errorf(format string, args ...any) *model.Error {
	return &model.Error{
		Name:    model.ErrSyntax,
		Details: fmt.Sprintf("Parsing ovsdb operation %d of %d failed: ", p.i+1, p.n) + fmt.Sprintf(format, args...),
		Syntax:  model.JSONText(p.raw),
	}
}

func (p *opParser) member(name string, required bool) (any, bool, *model.Error) {
	v, ok := p.op[name]
	p.used[name] = true
	if !ok && required {
		return nil, false, p.errorf("Required '%s' member is missing.", name)
	}
	return v, ok, nil
}

func (p *opParser) str(name string, required bool) (string, *model.Error) {
	v, ok, err := p.member(name, required)
	if err != nil || !ok {
		return "", err
	}
	s, isStr := v.(string)
	if !isStr {
		return "", p.errorf("Type mismatch for member '%s'.", name)
	}
	return s, nil
}

func (p *opParser) table(db *Database) (*dbTable, *model.Error) {
	name, err := p.str("table", true)
	if err != nil {
		return nil, err
	}
	t, ok := db.tables[name]
	if !ok {
		return nil, p.errorf("No table named %s.", name)
	}
	return t, nil
}

func (p *opParser) finish() *model.Error {
	var extra []string
	for k := range p.op {
		if !p.used[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return p.errorf("Member '%s' is present but not allowed here.", extra[0])
	}
	return nil
}

// execute runs every operation and, if all succeed, precommits. It returns
// the results (error objects included, as ovsdb-server reports them) and
// whether the transaction is ready to commit.
func (tx *txn) execute(ops []any) ([]json.RawMessage, bool) {
	results := make([]json.RawMessage, 0, len(ops)+1)
	for i, op := range ops {
		res, err := tx.op(i, len(ops), op)
		if err != nil {
			if err == errWait {
				return nil, false
			}
			results = append(results, errorJSON(err))
			for len(results) < len(ops) {
				results = append(results, json.RawMessage("null"))
			}
			return results, false
		}
		results = append(results, res)
	}
	if err := tx.precommit(); err != nil {
		return append(results, errorJSON(err)), false
	}
	return results, true
}

func errorJSON(e *model.Error) json.RawMessage {
	b, _ := e.MarshalJSON()
	return b
}

func (tx *txn) op(i, n int, raw any) (json.RawMessage, *model.Error) {
	p := &opParser{raw: raw, i: i, n: n, used: map[string]bool{}}
	o, ok := raw.(map[string]any)
	if !ok {
		return nil, &model.Error{Name: model.ErrSyntax, Details: fmt.Sprintf("Parsing ovsdb operation %d of %d failed: Object expected.", i+1, n)}
	}
	p.op = o
	name, err := p.str("op", true)
	if err != nil {
		return nil, err
	}
	exec, ok := opTable[name]
	if !ok {
		return nil, p.errorf("No operation \"%s\"", name)
	}
	return exec(tx, p)
}

type opFunc func(tx *txn, p *opParser) (json.RawMessage, *model.Error)

// opTable maps RFC 7047 operation names to their executors.
var opTable map[string]opFunc

func init() {
	opTable = map[string]opFunc{
		"insert":  (*txn).opInsert,
		"select":  (*txn).opSelect,
		"update":  (*txn).opUpdate,
		"mutate":  (*txn).opMutate,
		"delete":  (*txn).opDelete,
		"wait":    (*txn).opWait,
		"commit":  (*txn).opCommit,
		"abort":   (*txn).opAbort,
		"comment": (*txn).opComment,
		"assert":  (*txn).opAssert,
	}
}

func (tx *txn) notAllowed(op string) *model.Error {
	return model.Errorf(model.ErrNotAllowed, "%s operation not allowed on table in reserved database %s", op, tx.db.Schema.Name)
}

// parseRow parses a <row> into column values. For updates, immutable
// columns are rejected with the operation quoted.
func (tx *txn) parseRow(t *dbTable, v any, p *opParser, update bool) ([]*model.ColumnSchema, []model.Datum, *model.Error) {
	o, ok := v.(map[string]any)
	if !ok {
		return nil, nil, model.SyntaxErrorf(v, "Object expected.")
	}
	names := make([]string, 0, len(o))
	for k := range o {
		names = append(names, k)
	}
	sort.Strings(names)
	cols := make([]*model.ColumnSchema, 0, len(o))
	data := make([]model.Datum, 0, len(o))
	for _, name := range names {
		c, ok := t.Schema.Column(name)
		if !ok {
			return nil, nil, &model.Error{Name: model.ErrUnknownColumn,
				Details: fmt.Sprintf("No column %s in table %s.", name, t.Schema.Name), Syntax: model.JSONText(v)}
		}
		if c.Index < 0 || update && !c.Mutable {
			return nil, nil, &model.Error{Name: model.ErrConstraint,
				Details: fmt.Sprintf("Cannot update immutable column %s in table %s.", name, t.Schema.Name),
				Syntax:  model.JSONText(p.raw)}
		}
		d, err := model.DatumFromJSON(&c.Type, o[name], tx.resolve)
		if err != nil {
			return nil, nil, err
		}
		cols = append(cols, c)
		data = append(data, d)
	}
	return cols, data, nil
}

func (tx *txn) opInsert(p *opParser) (json.RawMessage, *model.Error) {
	t, err := p.table(tx.db)
	if err != nil {
		return nil, err
	}
	rowJSON, hasRow, err := p.member("row", false)
	if err != nil {
		return nil, err
	}
	uuidName, err := p.str("uuid-name", false)
	if err != nil {
		return nil, err
	}
	if _, ok := p.op["uuid-name"]; ok && !model.ValidID(uuidName) {
		return nil, p.errorf("Type mismatch for member 'uuid-name'.")
	}
	uuidJSON, hasUUID, err := p.member("uuid", false)
	if err != nil {
		return nil, err
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	var id model.UUID
	switch {
	case hasUUID:
		s, _ := uuidJSON.(string)
		u, perr := model.ParseUUID(s)
		if perr != nil {
			return nil, model.SyntaxErrorf(uuidJSON, "bad uuid")
		}
		if t.Rows[u] != nil || tx.changes[t][u] != nil {
			return nil, &model.Error{Name: "duplicate uuid", Details: "This UUID would duplicate a UUID already present within the table or deleted within the same transaction.", Syntax: model.JSONText(uuidJSON)}
		}
		id = u
	default:
		id = model.NewUUID()
	}
	if uuidName != "" {
		sym, ok := tx.symbols[uuidName]
		if ok && sym.created {
			return nil, &model.Error{Name: model.ErrDuplicateUUIDName, Details: "This \"uuid-name\" appeared on an earlier \"insert\" operation.", Syntax: model.JSONText(uuidName)}
		}
		if !ok {
			sym = &symbol{uuid: id}
			tx.symbols[uuidName] = sym
		} else if !hasUUID {
			id = sym.uuid
		} else {
			sym.uuid = id
		}
		sym.created = true
	}
	r := newRow(t.Schema, id)
	if hasRow {
		cols, data, err := tx.parseRow(t, rowJSON, p, false)
		if err != nil {
			return nil, err
		}
		for i, c := range cols {
			r.Data[c.Index] = data[i]
		}
	}
	for _, c := range t.Schema.Columns {
		if err := r.Data[c.Index].CheckConstraints(&c.Type); err != nil {
			return nil, err
		}
	}
	if tx.db.readOnly {
		return nil, tx.notAllowed("insert")
	}
	tx.insert(t, r)
	b := []byte(`{"uuid":`)
	b = model.AppendAtomJSON(b, id)
	return append(b, '}'), nil
}

func (tx *txn) parseWhere(t *dbTable, p *opParser) ([]model.Condition, *model.Error) {
	w, _, err := p.member("where", true)
	if err != nil {
		return nil, err
	}
	if _, ok := w.([]any); !ok {
		return nil, p.errorf("Type mismatch for member 'where'.")
	}
	return model.ParseConditions(t.Schema, w, tx.resolve)
}

func (tx *txn) parseColumns(t *dbTable, p *opParser, required bool) ([]*model.ColumnSchema, *model.Error) {
	v, ok, err := p.member("columns", required)
	if err != nil {
		return nil, err
	}
	if !ok {
		cols := []*model.ColumnSchema{}
		u, _ := t.Schema.Column("_uuid")
		ver, _ := t.Schema.Column("_version")
		cols = append(cols, u, ver)
		return append(cols, t.Schema.Columns...), nil
	}
	arr, isArr := v.([]any)
	if !isArr {
		return nil, p.errorf("Type mismatch for member 'columns'.")
	}
	cols := make([]*model.ColumnSchema, 0, len(arr))
	for _, cv := range arr {
		name, _ := cv.(string)
		c, ok := t.Schema.Column(name)
		if !ok {
			return nil, model.SyntaxErrorf(v, "%s is not a valid column name", model.AtomString(name))
		}
		cols = append(cols, c)
	}
	return cols, nil
}

func appendRowColumns(b []byte, cols []*model.ColumnSchema, r *row) []byte {
	b = append(b, '{')
	for i, c := range cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = model.AppendString(b, c.Name)
		b = append(b, ':')
		b = r.Get(c).AppendJSON(b, &c.Type)
	}
	return append(b, '}')
}

func (tx *txn) opSelect(p *opParser) (json.RawMessage, *model.Error) {
	t, err := p.table(tx.db)
	if err != nil {
		return nil, err
	}
	conds, err := tx.parseWhere(t, p)
	if err != nil {
		return nil, err
	}
	cols, err := tx.parseColumns(t, p, false)
	if err != nil {
		return nil, err
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	b := []byte(`{"rows":[`)
	for i, r := range tx.matching(t, conds) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendRowColumns(b, cols, r)
	}
	return append(b, "]}"...), nil
}

func countJSON(n int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"count":%d}`, n))
}

func (tx *txn) opUpdate(p *opParser) (json.RawMessage, *model.Error) {
	t, err := p.table(tx.db)
	if err != nil {
		return nil, err
	}
	conds, err := tx.parseWhere(t, p)
	if err != nil {
		return nil, err
	}
	rowJSON, _, err := p.member("row", true)
	if err != nil {
		return nil, err
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	cols, data, err := tx.parseRow(t, rowJSON, p, true)
	if err != nil {
		return nil, err
	}
	for i, c := range cols {
		if err := data[i].CheckConstraints(&c.Type); err != nil {
			return nil, err
		}
	}
	if tx.db.readOnly {
		return nil, tx.notAllowed("update")
	}
	rows := tx.matching(t, conds)
	for _, r := range rows {
		n := tx.modify(t, r)
		for i, c := range cols {
			n.Data[c.Index] = data[i]
		}
	}
	return countJSON(len(rows)), nil
}

func (tx *txn) opMutate(p *opParser) (json.RawMessage, *model.Error) {
	t, err := p.table(tx.db)
	if err != nil {
		return nil, err
	}
	conds, err := tx.parseWhere(t, p)
	if err != nil {
		return nil, err
	}
	mv, _, err := p.member("mutations", true)
	if err != nil {
		return nil, err
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	muts, err := model.ParseMutations(t.Schema, mv, tx.resolve)
	if err != nil {
		return nil, err
	}
	if tx.db.readOnly {
		return nil, tx.notAllowed("mutate")
	}
	rows := tx.matching(t, conds)
	for _, r := range rows {
		data := append([]model.Datum(nil), r.Data...)
		for i := range muts {
			m := &muts[i]
			d, err := m.Apply(data[m.Column.Index])
			if err != nil {
				return nil, err
			}
			data[m.Column.Index] = d
		}
		n := tx.modify(t, r)
		copy(n.Data, data)
	}
	return countJSON(len(rows)), nil
}

func (tx *txn) opDelete(p *opParser) (json.RawMessage, *model.Error) {
	t, err := p.table(tx.db)
	if err != nil {
		return nil, err
	}
	conds, err := tx.parseWhere(t, p)
	if err != nil {
		return nil, err
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	if tx.db.readOnly {
		return nil, tx.notAllowed("delete")
	}
	rows := tx.matching(t, conds)
	for _, r := range rows {
		tx.remove(t, r.UUID)
	}
	return countJSON(len(rows)), nil
}

func (tx *txn) opWait(p *opParser) (json.RawMessage, *model.Error) {
	t, err := p.table(tx.db)
	if err != nil {
		return nil, err
	}
	conds, err := tx.parseWhere(t, p)
	if err != nil {
		return nil, err
	}
	cols, err := tx.parseColumns(t, p, false)
	if err != nil {
		return nil, err
	}
	until, err := p.str("until", true)
	if err != nil {
		return nil, err
	}
	rowsJSON, _, err := p.member("rows", true)
	if err != nil {
		return nil, err
	}
	timeout := time.Duration(-1) // absent: wait forever
	if tv, ok, err := p.member("timeout", false); err != nil {
		return nil, err
	} else if ok {
		ms, perr := model.AtomFromJSON(model.TypeInteger, tv, nil)
		if perr != nil {
			return nil, p.errorf("Type mismatch for member 'timeout'.")
		}
		if ms.(int64) < 0 {
			return nil, model.SyntaxErrorf(tv, "timeout must be nonnegative")
		}
		timeout = time.Duration(ms.(int64)) * time.Millisecond
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	if until != "==" && until != "!=" {
		return nil, model.SyntaxErrorf(until, "\"until\" must be \"==\" or \"!=\"")
	}
	arr, ok := rowsJSON.([]any)
	if !ok {
		return nil, p.errorf("Type mismatch for member 'rows'.")
	}
	var want []string
	for _, rv := range arr {
		rc, rd, err := tx.parseRow(t, rv, p, false)
		if err != nil {
			return nil, err
		}
		r := newRow(t.Schema, model.ZeroUUID)
		for i, c := range rc {
			r.Data[c.Index] = rd[i]
		}
		want = append(want, string(appendRowColumns(nil, cols, r)))
	}
	var have []string
	for _, r := range tx.matching(t, conds) {
		have = append(have, string(appendRowColumns(nil, cols, r)))
	}
	sort.Strings(want)
	sort.Strings(have)
	equal := strings.Join(want, "\n") == strings.Join(have, "\n") && len(want) == len(have)
	if equal == (until == "==") {
		return json.RawMessage("{}"), nil
	}
	if timeout == 0 || tx.expired {
		return nil, model.Errorf(model.ErrTimedOut, "\"where\" clause test failed")
	}
	tx.blocked = true
	if timeout > tx.wait || timeout < 0 {
		tx.wait = timeout
	}
	return nil, errWait
}

func (tx *txn) opCommit(p *opParser) (json.RawMessage, *model.Error) {
	v, _, err := p.member("durable", true)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(bool); !ok {
		return nil, p.errorf("Type mismatch for member 'durable'.")
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	// Every commit is durable here: the log is synced before the reply.
	return json.RawMessage("{}"), nil
}

func (tx *txn) opAbort(p *opParser) (json.RawMessage, *model.Error) {
	if err := p.finish(); err != nil {
		return nil, err
	}
	return nil, model.Errorf(model.ErrAborted, "aborted by request")
}

func (tx *txn) opComment(p *opParser) (json.RawMessage, *model.Error) {
	c, err := p.str("comment", true)
	if err != nil {
		return nil, err
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	tx.comments = append(tx.comments, c)
	return json.RawMessage("{}"), nil
}

func (tx *txn) opAssert(p *opParser) (json.RawMessage, *model.Error) {
	name, err := p.str("lock", true)
	if err != nil {
		return nil, err
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	if tx.holdsLock == nil || !tx.holdsLock(name) {
		return nil, model.Errorf(model.ErrNotOwner, "Asserted lock %s not held.", name)
	}
	return json.RawMessage("{}"), nil
}
