package vsctl

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/model"
)

// row is a row of the working copy: a snapshot row copied on first use,
// or a row inserted by this run. Datums are replaced, never changed in
// place, because they may be shared with the snapshot.
type row struct {
	ts       *model.TableSchema
	uuid     model.UUID // temporary for new rows
	data     map[string]model.Datum
	isNew    bool
	deleted  bool
	changed  map[string]bool
	uuidName string // new rows: the uuid-name used in the transaction
}

func (r *row) get(col string) model.Datum {
	if d, ok := r.data[col]; ok {
		return d
	}
	if c, ok := r.ts.Column(col); ok {
		return model.DefaultDatum(&c.Type)
	}
	return model.Datum{}
}

// str returns a scalar string column's value, or "".
func (r *row) str(col string) string {
	d := r.get(col)
	if len(d.Keys) == 1 {
		s, _ := d.Keys[0].(string)
		return s
	}
	return ""
}

// refs returns a reference column's UUIDs.
func (r *row) refs(col string) []model.UUID {
	d := r.get(col)
	out := make([]model.UUID, 0, len(d.Keys))
	for _, k := range d.Keys {
		if u, ok := k.(model.UUID); ok {
			out = append(out, u)
		}
	}
	return out
}

func (r *row) set(col string, d model.Datum) {
	r.data[col] = d
	r.changed[col] = true
}

// symbol is a --id=@name row reference.
type symbol struct {
	uuid    model.UUID
	created bool // defined by create or get --id
}

// dbctx is the working copy of the database the commands share.
type dbctx struct {
	schema  *model.DatabaseSchema
	snap    *client.Snapshot
	tables  map[string]map[model.UUID]*row
	loaded  map[string]bool
	symbols map[string]*symbol
	ovs     *row // the Open_vSwitch row
	warn    io.Writer
	nextTmp int
	logSeq  int // warnings printed so far
}

func newDBCtx(schema *model.DatabaseSchema, snap *client.Snapshot, warn io.Writer) *dbctx {
	dc := &dbctx{schema: schema, snap: snap, tables: map[string]map[model.UUID]*row{},
		loaded: map[string]bool{}, symbols: map[string]*symbol{}, warn: warn}
	if rows := dc.rows("Open_vSwitch"); len(rows) > 0 {
		dc.ovs = rows[0]
	} else {
		dc.ovs = dc.insert("Open_vSwitch", model.UUID{})
	}
	return dc
}

// table loads a table of the working copy.
func (dc *dbctx) table(name string) map[model.UUID]*row {
	t := dc.tables[name]
	if t == nil {
		t = map[model.UUID]*row{}
		dc.tables[name] = t
	}
	if !dc.loaded[name] {
		dc.loaded[name] = true
		ts := dc.schema.Tables[name]
		for id, sr := range dc.snap.Table(name) {
			if _, ok := t[id]; ok {
				continue
			}
			data := make(map[string]model.Datum, len(sr.Data))
			for k, v := range sr.Data {
				data[k] = v
			}
			t[id] = &row{ts: ts, uuid: id, data: data, changed: map[string]bool{}}
		}
	}
	return t
}

// rows returns a table's live rows in UUID order.
func (dc *dbctx) rows(name string) []*row {
	t := dc.table(name)
	out := make([]*row, 0, len(t))
	for _, r := range t {
		if !r.deleted {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].uuid[:], out[j].uuid[:]) < 0 })
	return out
}

// row returns a live row by UUID.
func (dc *dbctx) row(table string, id model.UUID) *row {
	if r := dc.table(table)[id]; r != nil && !r.deleted {
		return r
	}
	return nil
}

// insert adds a new row; a zero id picks a fresh temporary UUID.
func (dc *dbctx) insert(table string, id model.UUID) *row {
	if id == (model.UUID{}) {
		id = model.NewUUID()
	}
	dc.nextTmp++
	r := &row{ts: dc.schema.Tables[table], uuid: id, data: map[string]model.Datum{},
		isNew: true, changed: map[string]bool{}, uuidName: fmt.Sprintf("row%d", dc.nextTmp)}
	dc.table(table)[id] = r
	return r
}

func (dc *dbctx) delete(r *row) { r.deleted = true }

// dirty reports whether the working copy differs from the snapshot.
func (dc *dbctx) dirty() bool {
	for _, t := range dc.tables {
		for _, r := range t {
			if r.isNew != r.deleted && (r.isNew || r.ts.IsRoot) || !r.isNew && !r.deleted && len(r.changed) > 0 {
				return true
			}
		}
	}
	return false
}

// build records the working copy's changes in txn: first a verify of
// every changed column of an existing row (so that a concurrent change
// makes the transaction fail and the run start again, as Open vSwitch's
// IDL verify does), then inserts with uuid-names (references to new rows
// become named UUIDs), updates of changed columns and deletes. It
// returns the number of verify operations.
func (dc *dbctx) build(txn *client.Txn) int {
	named := map[model.UUID]client.NamedUUID{}
	var all []*row
	names := make([]string, 0, len(dc.tables))
	for n := range dc.tables {
		names = append(names, n)
	}
	sort.Strings(names)
	nVerify := 0
	for _, n := range names {
		for _, r := range dc.rows(n) {
			if !r.isNew && len(r.changed) > 0 {
				if orig := dc.snap.Row(n, r.uuid); orig != nil {
					cols := make([]string, 0, len(r.changed))
					for c := range r.changed {
						cols = append(cols, c)
					}
					sort.Strings(cols)
					txn.Verify(orig, cols...)
					nVerify++
				}
			}
		}
	}
	for _, n := range names {
		for _, r := range dc.rows(n) {
			if r.isNew {
				named[r.uuid] = client.NamedUUID(r.uuidName)
			}
			all = append(all, r)
		}
		for _, r := range dc.tables[n] {
			// As Open vSwitch's IDL does, rows of non-root tables are
			// never deleted explicitly: the server collects them once
			// nothing refers to them.
			if r.deleted && !r.isNew && r.ts.IsRoot {
				txn.Delete(n, client.UUIDIs(r.uuid))
			}
		}
	}
	conv := func(d model.Datum) model.Datum {
		out := model.Datum{Keys: make([]model.Atom, len(d.Keys))}
		for i, k := range d.Keys {
			out.Keys[i] = convAtom(k, named)
		}
		if d.Values != nil {
			out.Values = make([]model.Atom, len(d.Values))
			for i, v := range d.Values {
				out.Values[i] = convAtom(v, named)
			}
		}
		return out
	}
	for _, r := range all {
		switch {
		case r.isNew:
			data := map[string]any{}
			for c, d := range r.data {
				if cs, ok := r.ts.Column(c); ok && cs.Index >= 0 && !d.IsDefault(&cs.Type) {
					data[c] = conv(d)
				}
			}
			txn.Insert(r.ts.Name, r.uuidName, data)
		case len(r.changed) > 0:
			data := map[string]any{}
			for c := range r.changed {
				data[c] = conv(r.data[c])
			}
			txn.Update(r.ts.Name, data, client.UUIDIs(r.uuid))
		}
	}
	return nVerify
}

func convAtom(a model.Atom, named map[model.UUID]client.NamedUUID) model.Atom {
	if u, ok := a.(model.UUID); ok {
		if n, ok := named[u]; ok {
			return n
		}
	}
	return a
}

// checkSymbols reports a --id=@name that was used but never defined.
func (dc *dbctx) checkSymbols() error {
	names := make([]string, 0, len(dc.symbols))
	for n := range dc.symbols {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !dc.symbols[n].created {
			return fail("row id \"%s\" is referenced but never created (e.g. with \"-- --id=%s create ...\")", n, n)
		}
	}
	return nil
}

// symbol returns the symbol @name, creating an undefined one.
func (dc *dbctx) symbol(name string) *symbol {
	s := dc.symbols[name]
	if s == nil {
		s = &symbol{uuid: model.NewUUID()}
		dc.symbols[name] = s
	}
	return s
}

// warnf prints a warning in the vlog form ovs-vsctl uses.
func (dc *dbctx) warnf(module, format string, args ...any) {
	// ovs-vsctl's first log message (the connection, below the console
	// level) is number 1, so its first warning is number 2.
	dc.logSeq++
	fmt.Fprintf(dc.warn, "%s|%05d|%s|WARN|%s\n", time.Now().UTC().Format("2006-01-02T15:04:05Z"), dc.logSeq+1, module, fmt.Sprintf(format, args...))
}

// byName finds a live row of table whose column col equals name.
func (dc *dbctx) byName(table, col, name string) *row {
	for _, r := range dc.rows(table) {
		if r.str(col) == name {
			return r
		}
	}
	return nil
}

// referrer finds the live row of table whose reference column col holds id.
func (dc *dbctx) referrer(table, col string, id model.UUID) *row {
	for _, r := range dc.rows(table) {
		if r.get(col).Contains(id) {
			return r
		}
	}
	return nil
}

// Names for the vswitch tables ovs-vsctl's bridge commands use.
func (dc *dbctx) bridge(name string) *row { return dc.byName("Bridge", "name", name) }
func (dc *dbctx) port(name string) *row   { return dc.byName("Port", "name", name) }
func (dc *dbctx) iface(name string) *row  { return dc.byName("Interface", "name", name) }

// portBridge returns the bridge that holds port p.
func (dc *dbctx) portBridge(p *row) *row { return dc.referrer("Bridge", "ports", p.uuid) }

// removeRef returns d without id.
func removeRef(d model.Datum, id model.UUID) model.Datum {
	out := model.Datum{Keys: []model.Atom{}}
	for _, k := range d.Keys {
		if k != model.Atom(id) {
			out.Keys = append(out.Keys, k)
		}
	}
	return out
}

// addRef returns d with id added, in order.
func addRef(d model.Datum, id model.UUID) model.Datum {
	out := d.Clone()
	if out.Contains(id) {
		return out
	}
	out.Keys = append(out.Keys, id)
	sortDatum(&out)
	return out
}

// sortDatum orders a datum's keys (and values) as OVSDB does.
func sortDatum(d *model.Datum) {
	idx := make([]int, len(d.Keys))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return model.CompareAtoms(d.Keys[idx[a]], d.Keys[idx[b]]) < 0 })
	keys := make([]model.Atom, len(d.Keys))
	var vals []model.Atom
	if d.Values != nil {
		vals = make([]model.Atom, len(d.Values))
	}
	for i, j := range idx {
		keys[i] = d.Keys[j]
		if vals != nil {
			vals[i] = d.Values[j]
		}
	}
	d.Keys, d.Values = keys, vals
}
