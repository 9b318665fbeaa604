package server

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/gvs-project/gvs/ovsdb/jsonrpc"
	"github.com/gvs-project/gvs/ovsdb/model"
)

// monitor is one monitor, monitor_cond or monitor_cond_since of a session.
type monitor struct {
	sess    *session
	db      *dbEntry
	id      json.RawMessage // the client's monitor id, echoed in notifications
	version int             // 1: update, 2: update2, 3: update3
	tables  []*monitorTable // sorted by table name
	// behind holds the changes merged while the client is behind
	// (backlog.go); nil when there are none. Guarded by the server's
	// mutex.
	behind map[*dbTable]map[model.UUID]*change
}

type monitorTable struct {
	table                           *dbTable
	columns                         []*model.ColumnSchema
	initial, insert, delete, modify bool
	// where is a disjunction of clauses (monitor_cond semantics); nil or
	// empty matches every row.
	where []model.Condition
}

var zeroTxnID = json.RawMessage(`"00000000-0000-0000-0000-000000000000"`)

func (mt *monitorTable) matches(r *row) bool {
	if len(mt.where) == 0 {
		return true
	}
	for i := range mt.where {
		if mt.where[i].Eval(r) {
			return true
		}
	}
	return false
}

// parseMonitorRequests parses the <monitor-requests> object of monitor,
// monitor_cond and monitor_cond_since. A table maps to one request object
// or an array of them (the form Open vSwitch's IDL sends).
func parseMonitorRequests(db *Database, v any, version int) ([]*monitorTable, *model.Error) {
	o, ok := v.(map[string]any)
	if !ok {
		return nil, model.SyntaxErrorf(v, "monitor requests must be an object")
	}
	var out []*monitorTable
	for _, name := range sortedKeys(o) {
		t, ok := db.tables[name]
		if !ok {
			return nil, model.SyntaxErrorf(o[name], "no table named %s", name)
		}
		reqs, isArr := o[name].([]any)
		if !isArr {
			reqs = []any{o[name]}
		}
		mt := &monitorTable{table: t}
		seen := map[string]bool{}
		allRows := false
		for _, rv := range reqs {
			req, ok := rv.(map[string]any)
			if !ok {
				return nil, model.SyntaxErrorf(rv, "monitor request must be an object")
			}
			if cv, ok := req["columns"]; ok {
				arr, ok := cv.([]any)
				if !ok {
					return nil, model.SyntaxErrorf(cv, "array of column names expected")
				}
				for _, c := range arr {
					cn, _ := c.(string)
					col, ok := t.Schema.Column(cn)
					if !ok {
						return nil, model.SyntaxErrorf(c, "%s is not a valid column name", model.JSONText(c))
					}
					if col.Index < 0 || seen[cn] {
						continue
					}
					seen[cn] = true
					mt.columns = append(mt.columns, col)
				}
			} else {
				for _, col := range t.Schema.Columns {
					if !seen[col.Name] {
						seen[col.Name] = true
						mt.columns = append(mt.columns, col)
					}
				}
			}
			sel := [4]bool{true, true, true, true}
			if sv, ok := req["select"]; ok {
				so, ok := sv.(map[string]any)
				if !ok {
					return nil, model.SyntaxErrorf(sv, "select must be an object")
				}
				for i, k := range [4]string{"initial", "insert", "delete", "modify"} {
					if b, ok := so[k]; ok {
						bb, ok := b.(bool)
						if !ok {
							return nil, model.SyntaxErrorf(b, "%s must be a boolean", k)
						}
						sel[i] = bb
					}
				}
			}
			mt.initial = mt.initial || sel[0]
			mt.insert = mt.insert || sel[1]
			mt.delete = mt.delete || sel[2]
			mt.modify = mt.modify || sel[3]
			wv, hasWhere := req["where"]
			if version == 1 || !hasWhere {
				allRows = true
				continue
			}
			conds, err := model.ParseConditions(t.Schema, wv, nil)
			if err != nil {
				return nil, err
			}
			if len(conds) == 0 {
				allRows = true
			}
			mt.where = append(mt.where, conds...)
		}
		if allRows {
			mt.where = nil
		}
		sort.Slice(mt.columns, func(i, j int) bool { return mt.columns[i].Name < mt.columns[j].Name })
		out = append(out, mt)
	}
	return out, nil
}

// initial renders the rows selected for the reply to the monitor request.
func (m *monitor) initial() json.RawMessage {
	b := []byte{'{'}
	firstTable := true
	for _, mt := range m.tables {
		if !mt.initial {
			continue
		}
		start := len(b)
		if !firstTable {
			b = append(b, ',')
		}
		b = model.AppendString(b, mt.table.Schema.Name)
		b = append(b, ":{"...)
		n := 0
		for _, id := range sortedUUIDs(mt.table.Rows) {
			r := mt.table.Rows[id]
			if !mt.matches(r) {
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = model.AppendString(b, id.String())
			if m.version == 1 {
				b = append(b, `:{"new":`...)
				b = appendRowColumns(b, mt.columns, r)
			} else {
				b = append(b, `:{"initial":`...)
				b = appendNonDefault(b, mt.columns, r)
			}
			b = append(b, '}')
		}
		if n == 0 {
			b = b[:start]
			continue
		}
		firstTable = false
		b = append(b, '}')
	}
	return append(b, '}')
}

func appendNonDefault(b []byte, cols []*model.ColumnSchema, r *row) []byte {
	b = append(b, '{')
	first := true
	for _, c := range cols {
		d := r.Data[c.Index]
		if d.IsDefault(&c.Type) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = model.AppendString(b, c.Name)
		b = append(b, ':')
		b = d.AppendJSON(b, &c.Type)
	}
	return append(b, '}')
}

func changedIn(cols []*model.ColumnSchema, old, new *row) []*model.ColumnSchema {
	var out []*model.ColumnSchema
	for _, c := range cols {
		if !old.Data[c.Index].Equal(new.Data[c.Index]) {
			out = append(out, c)
		}
	}
	return out
}

// update renders committed changes' effect on this monitor, or nil if
// they have none.
func (m *monitor) update(changes map[*dbTable]map[model.UUID]*change) json.RawMessage {
	b := []byte{'{'}
	firstTable := true
	for _, mt := range m.tables {
		chs := changes[mt.table]
		if len(chs) == 0 {
			continue
		}
		start := len(b)
		if !firstTable {
			b = append(b, ',')
		}
		b = model.AppendString(b, mt.table.Schema.Name)
		b = append(b, ":{"...)
		n := 0
		for _, id := range sortedUUIDs(chs) {
			ch := chs[id]
			old, new := ch.old, ch.new
			if old != nil && !mt.matches(old) {
				old = nil
			}
			if new != nil && !mt.matches(new) {
				new = nil
			}
			var body []byte
			switch {
			case old == nil && new == nil:
				continue
			case old == nil:
				if !mt.insert {
					continue
				}
				if m.version == 1 {
					body = appendRowColumns([]byte(`{"new":`), mt.columns, new)
				} else {
					body = appendNonDefault([]byte(`{"insert":`), mt.columns, new)
				}
			case new == nil:
				if !mt.delete {
					continue
				}
				if m.version == 1 {
					body = appendRowColumns([]byte(`{"old":`), mt.columns, old)
				} else {
					body = []byte(`{"delete":null`)
				}
			default:
				changed := changedIn(mt.columns, old, new)
				if !mt.modify || len(changed) == 0 {
					continue
				}
				if m.version == 1 {
					body = appendRowColumns([]byte(`{"new":`), mt.columns, new)
					body = append(body, `,"old":`...)
					body = appendRowColumns(body, changed, old)
				} else {
					body = appendRowDiff([]byte(`{"modify":`), mt.table.Schema, old, new, changed, false)
				}
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = model.AppendString(b, id.String())
			b = append(b, ':')
			b = append(b, body...)
			b = append(b, '}')
		}
		if n == 0 {
			b = b[:start]
			continue
		}
		firstTable = false
		b = append(b, '}')
	}
	if firstTable {
		return nil
	}
	return append(b, '}')
}

// notification wraps an update in the message its monitor version uses.
func (m *monitor) notification(updates json.RawMessage) *jsonrpc.Message {
	var params []byte
	var method string
	switch m.version {
	case 1:
		method = "update"
		params = fmt.Appendf(nil, "[%s,%s]", m.id, updates)
	case 2:
		method = "update2"
		params = fmt.Appendf(nil, "[%s,%s]", m.id, updates)
	default:
		method = "update3"
		params = fmt.Appendf(nil, "[%s,%s,%s]", m.id, zeroTxnID, updates)
	}
	return &jsonrpc.Message{Kind: jsonrpc.KindNotify, Method: method, Params: params}
}

func sortedKeys(o map[string]any) []string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sortStrings(keys)
	return keys
}
