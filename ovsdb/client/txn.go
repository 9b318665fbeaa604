package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gvs-project/gvs/ovsdb/model"
)

// Txn builds one transaction on one database. Builder methods record
// operations; values are checked against the schema and encoded by
// Commit, which reports the first problem. A Txn is not safe for
// concurrent use and may be committed once.
type Txn struct {
	c   *Client
	db  string
	ops []txnOp
}

type txnOp struct {
	op       string
	table    string
	uuidName string
	row      map[string]any
	where    []Condition
	muts     []Mutation
	columns  []string
	until    string
	rows     []map[string]any
	timeout  time.Duration // negative: none
	text     string        // comment or lock name
}

// Txn starts a transaction on database db.
func (c *Client) Txn(db string) *Txn { return &Txn{c: c, db: db} }

// Len returns the number of operations recorded.
func (t *Txn) Len() int { return len(t.ops) }

// Insert adds an insert of row into table. A non-empty uuidName lets
// later operations (and values in this transaction) refer to the new row
// as NamedUUID(uuidName); Result.UUIDs maps it to the real UUID.
func (t *Txn) Insert(table, uuidName string, row map[string]any) *Txn {
	t.ops = append(t.ops, txnOp{op: "insert", table: table, uuidName: uuidName, row: row})
	return t
}

// Update sets the columns in row on every row of table matching where.
func (t *Txn) Update(table string, row map[string]any, where ...Condition) *Txn {
	t.ops = append(t.ops, txnOp{op: "update", table: table, row: row, where: where})
	return t
}

// Mutate applies mutations to every row of table matching where.
func (t *Txn) Mutate(table string, muts []Mutation, where ...Condition) *Txn {
	t.ops = append(t.ops, txnOp{op: "mutate", table: table, muts: muts, where: where})
	return t
}

// Delete deletes every row of table matching where.
func (t *Txn) Delete(table string, where ...Condition) *Txn {
	t.ops = append(t.ops, txnOp{op: "delete", table: table, where: where})
	return t
}

// Select reads columns (all when nil) of the rows matching where; the
// rows are in the operation's OpResult.
func (t *Txn) Select(table string, columns []string, where ...Condition) *Txn {
	t.ops = append(t.ops, txnOp{op: "select", table: table, columns: columns, where: where})
	return t
}

// Wait adds a wait operation: the rows of table matching where,
// projected on columns, must be (until "==") or must not be (until "!=")
// exactly rows, within timeout (a negative timeout waits indefinitely; 0
// fails at once with "timed out").
func (t *Txn) Wait(table string, where []Condition, columns []string, until string, rows []map[string]any, timeout time.Duration) *Txn {
	t.ops = append(t.ops, txnOp{op: "wait", table: table, where: where, columns: columns, until: until, rows: rows, timeout: timeout})
	return t
}

// Verify makes the transaction fail with "timed out" unless the given
// columns of row still hold the values the replica had when row was read
// (and the row still exists): Open vSwitch's IDL verify, for
// read-modify-write of columns such as Open_vSwitch.bridges.
func (t *Txn) Verify(row *Row, columns ...string) *Txn {
	want := make(map[string]any, len(columns))
	for _, c := range columns {
		want[c] = row.Data[c]
	}
	return t.Wait(row.Table, []Condition{UUIDIs(row.UUID)}, columns, "==", []map[string]any{want}, 0)
}

// Comment adds a comment operation (recorded in the database log).
func (t *Txn) Comment(text string) *Txn {
	t.ops = append(t.ops, txnOp{op: "comment", text: text})
	return t
}

// Assert makes the transaction fail with "not owner" unless this client
// holds lock name.
func (t *Txn) Assert(lock string) *Txn {
	t.ops = append(t.ops, txnOp{op: "assert", text: lock})
	return t
}

// SetColumns updates the given columns of one row.
func (t *Txn) SetColumns(table string, id model.UUID, row map[string]any) *Txn {
	return t.Update(table, row, UUIDIs(id))
}

// SetInsert adds elements to a set column of one row.
func (t *Txn) SetInsert(table string, id model.UUID, column string, elems ...any) *Txn {
	return t.Mutate(table, []Mutation{{column, "insert", elems}}, UUIDIs(id))
}

// SetDelete removes elements from a set column of one row.
func (t *Txn) SetDelete(table string, id model.UUID, column string, elems ...any) *Txn {
	return t.Mutate(table, []Mutation{{column, "delete", elems}}, UUIDIs(id))
}

// MapInsert adds pairs (a Go map or a model.Datum map) to a map column of
// one row. As in RFC 7047, keys already present keep their old values;
// use MapSet to replace them.
func (t *Txn) MapInsert(table string, id model.UUID, column string, pairs any) *Txn {
	return t.Mutate(table, []Mutation{{column, "insert", pairs}}, UUIDIs(id))
}

// MapSet sets pairs in a map column of one row, replacing the values of
// keys already present (a delete of the keys, then an insert, in one
// mutate operation).
func (t *Txn) MapSet(table string, id model.UUID, column string, pairs map[string]string) *Txn {
	keys := make([]string, 0, len(pairs))
	for k := range pairs {
		keys = append(keys, k)
	}
	return t.Mutate(table, []Mutation{{column, "delete", keys}, {column, "insert", pairs}}, UUIDIs(id))
}

// MapDelete removes keys (a slice of keys) or pairs (a Go map or a
// model.Datum map: removed only where the value matches) from a map
// column of one row.
func (t *Txn) MapDelete(table string, id model.UUID, column string, keysOrPairs any) *Txn {
	return t.Mutate(table, []Mutation{{column, "delete", keysOrPairs}}, UUIDIs(id))
}

// OpResult is one operation's result.
type OpResult struct {
	Op    string
	UUID  model.UUID // insert
	Count int        // update, mutate, delete
	Rows  []*Row     // select: the selected columns, _uuid and _version included when selected
}

// Result is a committed transaction's results, one per operation.
type Result struct {
	Ops []OpResult
	// UUIDs maps each insert's uuid-name to the UUID of the new row.
	UUIDs map[string]model.UUID
}

// TxnError is a transaction the server rejected: the operation that
// failed (Index into the operations, or the number of operations when
// the commit itself failed, e.g. a referential integrity violation) and
// the server's error.
type TxnError struct {
	Index int
	Op    string
	Err   *model.Error
}

func (e *TxnError) Error() string {
	return fmt.Sprintf("ovsdb client: transaction failed in operation %d (%s): %s", e.Index, e.Op, e.Err.Error())
}

// Unwrap returns the server's error object.
func (e *TxnError) Unwrap() error { return e.Err }

// ErrorName returns the OVSDB error name ("timed out", "not owner",
// "constraint violation", ...) carried by err, or "".
func ErrorName(err error) string {
	var me *model.Error
	if errors.As(err, &me) {
		return me.Name
	}
	return ""
}

// Commit sends the transaction and waits for the result. On a rejected
// transaction it returns the partial result and a *TxnError. If ctx ends
// first, the server is asked to cancel the transaction; whether it
// committed is then unknown.
func (t *Txn) Commit(ctx context.Context) (*Result, error) {
	schema, err := t.c.schema(ctx, t.db)
	if err != nil {
		return nil, err
	}
	params := make([]json.RawMessage, 0, len(t.ops)+1)
	db, _ := json.Marshal(t.db)
	params = append(params, db)
	for i := range t.ops {
		b, err := t.ops[i].encode(schema)
		if err != nil {
			return nil, fmt.Errorf("ovsdb client: transaction on %s, operation %d (%s): %w", t.db, i, t.ops[i].op, err)
		}
		params = append(params, b)
	}
	res, err := t.c.call(ctx, nil, "transact", params, nil)
	if err != nil {
		return nil, err
	}
	return t.decodeResult(schema, res)
}

func (op *txnOp) encode(schema *model.DatabaseSchema) ([]byte, error) {
	b := []byte(`{"op":`)
	b = model.AppendString(b, op.op)
	if op.op == "comment" {
		b = append(b, `,"comment":`...)
		return append(model.AppendString(b, op.text), '}'), nil
	}
	if op.op == "assert" {
		b = append(b, `,"lock":`...)
		return append(model.AppendString(b, op.text), '}'), nil
	}
	ts := schema.Tables[op.table]
	if ts == nil {
		return nil, fmt.Errorf("unknown table %q", op.table)
	}
	b = append(b, `,"table":`...)
	b = model.AppendString(b, op.table)
	var err error
	switch op.op {
	case "insert":
		b = append(b, `,"row":`...)
		if b, err = encodeRow(b, ts, op.row); err != nil {
			return nil, err
		}
		if op.uuidName != "" {
			if !model.ValidID(op.uuidName) {
				return nil, fmt.Errorf("%q is not a valid uuid-name", op.uuidName)
			}
			b = append(b, `,"uuid-name":`...)
			b = model.AppendString(b, op.uuidName)
		}
		return append(b, '}'), nil
	case "update":
		b = append(b, `,"row":`...)
		if b, err = encodeRow(b, ts, op.row); err != nil {
			return nil, err
		}
	case "mutate":
		b = append(b, `,"mutations":`...)
		if b, err = encodeMutations(b, ts, op.muts); err != nil {
			return nil, err
		}
	case "select":
		if op.columns != nil {
			b = appendColumns(b, op.columns)
		}
	case "wait":
		b = appendColumns(b, op.columns)
		b = append(b, `,"until":`...)
		b = model.AppendString(b, op.until)
		b = append(b, `,"rows":[`...)
		for i, r := range op.rows {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = encodeRow(b, ts, r); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
		if op.timeout >= 0 {
			b = append(b, `,"timeout":`...)
			b = model.AppendAtomJSON(b, op.timeout.Milliseconds())
		}
	}
	b = append(b, `,"where":`...)
	if b, err = encodeWhere(b, ts, op.where); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

func appendColumns(b []byte, cols []string) []byte {
	b = append(b, `,"columns":[`...)
	for i, c := range cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = model.AppendString(b, c)
	}
	return append(b, ']')
}

// decodeResult parses a transact reply: one element per operation (null
// after a failed one) and one more when the commit itself failed.
func (t *Txn) decodeResult(schema *model.DatabaseSchema, raw json.RawMessage) (*Result, error) {
	v, err := model.DecodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("ovsdb client: transact: bad reply: %w", err)
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("ovsdb client: transact: reply is not an array")
	}
	res := &Result{Ops: make([]OpResult, len(t.ops)), UUIDs: map[string]model.UUID{}}
	for i := range t.ops {
		res.Ops[i].Op = t.ops[i].op
	}
	var txnErr *TxnError
	for i, item := range arr {
		o, _ := item.(map[string]any)
		if o == nil {
			continue // not executed
		}
		var op *txnOp
		name := "commit"
		if i < len(t.ops) {
			op = &t.ops[i]
			name = op.op
		}
		if e, ok := o["error"]; ok && e != nil {
			if txnErr == nil {
				me := &model.Error{}
				me.Name, _ = e.(string)
				me.Details, _ = o["details"].(string)
				if s, ok := o["syntax"]; ok {
					me.Syntax, _ = s.(string)
				}
				txnErr = &TxnError{Index: i, Op: name, Err: me}
			}
			continue
		}
		if op == nil {
			continue
		}
		r := &res.Ops[i]
		if u, ok := o["uuid"]; ok {
			a, e := model.AtomFromJSON(model.TypeUUID, u, nil)
			if e != nil {
				return nil, fmt.Errorf("ovsdb client: transact: operation %d: %w", i, e)
			}
			r.UUID = a.(model.UUID)
			if op.uuidName != "" {
				res.UUIDs[op.uuidName] = r.UUID
			}
		}
		if n, ok := o["count"].(json.Number); ok {
			c, _ := n.Int64()
			r.Count = int(c)
		}
		if rows, ok := o["rows"].([]any); ok {
			if r.Rows, err = decodeRows(schema.Tables[op.table], rows); err != nil {
				return nil, fmt.Errorf("ovsdb client: transact: operation %d: %w", i, err)
			}
		}
	}
	if txnErr != nil {
		return res, txnErr
	}
	if len(arr) < len(t.ops) {
		return res, fmt.Errorf("ovsdb client: transact: %d results for %d operations", len(arr), len(t.ops))
	}
	return res, nil
}

func decodeRows(ts *model.TableSchema, rows []any) ([]*Row, error) {
	out := make([]*Row, 0, len(rows))
	for _, rv := range rows {
		o, ok := rv.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("row is not an object")
		}
		row := &Row{Table: ts.Name, Data: make(map[string]model.Datum, len(o))}
		for name, v := range o {
			col, ok := ts.Column(name)
			if !ok {
				return nil, fmt.Errorf("unknown column %q", name)
			}
			d, e := model.DatumFromJSON(&col.Type, v, nil)
			if e != nil {
				return nil, fmt.Errorf("column %s: %w", name, e)
			}
			row.Data[name] = d
			if name == "_uuid" {
				row.UUID = d.Keys[0].(model.UUID)
			}
		}
		out = append(out, row)
	}
	return out, nil
}
