package server

import (
	"sort"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ovsdb/model"
)

func appendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// refsOf calls fn for every reference of the given kind in column c of r.
func refsOf(c *model.ColumnSchema, d model.Datum, kind model.RefType, fn func(table string, id model.UUID)) {
	if bt := &c.Type.Key; bt.RefTable != "" && bt.RefType == kind {
		for _, k := range d.Keys {
			fn(bt.RefTable, k.(model.UUID))
		}
	}
	if bt := c.Type.Value; bt != nil && bt.RefTable != "" && bt.RefType == kind {
		for _, v := range d.Values {
			fn(bt.RefTable, v.(model.UUID))
		}
	}
}

func hasRefs(ts *model.TableSchema, kind model.RefType) bool {
	for _, c := range ts.Columns {
		if bt := &c.Type.Key; bt.RefTable != "" && bt.RefType == kind {
			return true
		}
		if bt := c.Type.Value; bt != nil && bt.RefTable != "" && bt.RefType == kind {
			return true
		}
	}
	return false
}

func sortedTables(m map[*dbTable]map[model.UUID]*change) []*dbTable {
	ts := make([]*dbTable, 0, len(m))
	for t := range m {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Schema.Name < ts[j].Schema.Name })
	return ts
}

// precommit completes the transaction's effects and checks the database's
// invariants, in ovsdb-server's order: strong references, garbage
// collection, row limits, weak references, unique indexes.
func (tx *txn) precommit() *model.Error {
	tx.dropNoops()
	delta := tx.strongDelta()
	if err := tx.checkStrongRefs(delta); err != nil {
		return err
	}
	tx.collectGarbage(delta)
	if err := tx.checkMaxRows(); err != nil {
		return err
	}
	if err := tx.removeWeakRefs(); err != nil {
		return err
	}
	tx.dropNoops()
	return tx.checkIndexes()
}

// dropNoops forgets modifications that changed nothing.
func (tx *txn) dropNoops() {
	for t, chs := range tx.changes {
		for id, ch := range chs {
			if ch.old == nil || ch.new == nil {
				continue
			}
			same := true
			for i := range ch.old.Data {
				if !ch.old.Data[i].Equal(ch.new.Data[i]) {
					same = false
					break
				}
			}
			if same {
				delete(chs, id)
			}
		}
		if len(chs) == 0 {
			delete(tx.changes, t)
		}
	}
}

func (tx *txn) checkStrongRefs(delta map[model.UUID]int) *model.Error {
	for _, t := range sortedTables(tx.changes) {
		chs := tx.changes[t]
		for _, id := range sortedUUIDs(chs) {
			ch := chs[id]
			if ch.new == nil {
				continue
			}
			for _, c := range t.Schema.Columns {
				// References the committed row already held point at
				// committed rows; if the transaction deleted one, the
				// deletion check below reports it.
				if ch.old != nil && ch.old.Data[c.Index].Equal(ch.new.Data[c.Index]) {
					continue
				}
				var err *model.Error
				refsOf(c, ch.new.Data[c.Index], model.RefStrong, func(table string, ref model.UUID) {
					if err == nil && tx.get(tx.db.tables[table], ref) == nil {
						err = model.Errorf(model.ErrReferential,
							"Table %s column %s row %s references nonexistent row %s in table %s.",
							t.Schema.Name, c.Name, id, ref, table)
					}
				})
				if err != nil {
					return err
				}
			}
		}
	}
	// Rows deleted by the transaction must not be referenced any more.
	deleted := map[model.UUID]*dbTable{}
	for t, chs := range tx.changes {
		for id, ch := range chs {
			if ch.new == nil {
				deleted[id] = t
			}
		}
	}
	if len(deleted) == 0 {
		return nil
	}
	for _, id := range sortedUUIDs(deleted) {
		tx.db.commitVisits++
		if n := tx.db.strongRefs[id] + delta[id]; n > 0 {
			return model.Errorf(model.ErrReferential, "cannot delete %s row %s because of %d remaining reference(s)",
				deleted[id].Schema.Name, id, n)
		}
	}
	return nil
}

// collectGarbage deletes rows of non-root tables that the transaction
// inserted or left unreferenced, and then what they alone referenced.
func (tx *txn) collectGarbage(delta map[model.UUID]int) {
	candidates := map[model.UUID]*dbTable{}
	for t, chs := range tx.changes {
		for id, ch := range chs {
			if ch.new != nil && !t.Schema.IsRoot {
				candidates[id] = t
			}
			if ch.old != nil {
				tx.addDroppedTargets(t, ch.old, ch.new, candidates)
			}
		}
	}
	type garbage struct {
		t *dbTable
		r *row
	}
	for len(candidates) > 0 {
		// Judge a round's candidates on the counts from its start, so
		// that removing one does not free another before the next round.
		var dead []garbage
		for id, t := range candidates {
			tx.db.commitVisits++
			if r := tx.get(t, id); r != nil && tx.db.strongRefs[id]+delta[id] <= 0 {
				dead = append(dead, garbage{t, r})
			}
		}
		next := map[model.UUID]*dbTable{}
		for _, g := range dead {
			tx.remove(g.t, g.r.UUID)
			forRefDiff(g.t.Schema, g.r, nil, model.RefStrong, func(_ string, ref model.UUID, n int) { delta[ref] += n })
			tx.addTargets(g.t, g.r, next)
		}
		candidates = next
	}
}

// addDroppedTargets adds the non-root rows that old strongly referenced and
// new (nil for a deletion) no longer does: only they can have become
// garbage, so unchanged references cost nothing.
func (tx *txn) addDroppedTargets(t *dbTable, old, new *row, set map[model.UUID]*dbTable) {
	for _, c := range t.Schema.Columns {
		var kept map[model.UUID]bool
		if new != nil {
			if old.Data[c.Index].Equal(new.Data[c.Index]) {
				continue
			}
			if c.Type.Value == nil && c.Type.Key.RefTable != "" {
				// A set: its sorted keys give the dropped references
				// without a map of the kept ones. Skipping a reference
				// to the row itself loses nothing: a root row is never
				// collected and a changed non-root row is a candidate.
				if c.Type.Key.RefType == model.RefStrong {
					mergeRefDiff(c.Type.Key.RefTable, old.Data[c.Index].Keys, new.Data[c.Index].Keys, old.UUID,
						func(table string, ref model.UUID, n int) {
							if rt := tx.db.tables[table]; n < 0 && !rt.Schema.IsRoot && tx.get(rt, ref) != nil {
								set[ref] = rt
							}
						})
				}
				continue
			}
			kept = map[model.UUID]bool{}
			refsOf(c, new.Data[c.Index], model.RefStrong, func(_ string, ref model.UUID) { kept[ref] = true })
		}
		refsOf(c, old.Data[c.Index], model.RefStrong, func(table string, ref model.UUID) {
			if kept[ref] {
				return
			}
			rt := tx.db.tables[table]
			if !rt.Schema.IsRoot && tx.get(rt, ref) != nil {
				set[ref] = rt
			}
		})
	}
}

// addTargets adds the non-root rows that r strongly references.
func (tx *txn) addTargets(t *dbTable, r *row, set map[model.UUID]*dbTable) {
	for _, c := range t.Schema.Columns {
		refsOf(c, r.Data[c.Index], model.RefStrong, func(table string, ref model.UUID) {
			rt := tx.db.tables[table]
			if !rt.Schema.IsRoot && tx.get(rt, ref) != nil {
				set[ref] = rt
			}
		})
	}
}

// strongDelta returns how the transaction changes each row's count of
// strong references from other rows; added to Database.strongRefs it gives
// the counts as the transaction sees them.
func (tx *txn) strongDelta() map[model.UUID]int {
	delta := map[model.UUID]int{}
	for t, chs := range tx.changes {
		if !hasRefs(t.Schema, model.RefStrong) {
			continue
		}
		for _, ch := range chs {
			tx.db.commitVisits++
			forRefDiff(t.Schema, ch.old, ch.new, model.RefStrong, func(_ string, ref model.UUID, n int) { delta[ref] += n })
		}
	}
	return delta
}

func (tx *txn) checkMaxRows() *model.Error {
	for _, t := range sortedTables(tx.changes) {
		if t.Schema.MaxRows == 0 {
			continue
		}
		n := len(t.Rows)
		for _, ch := range tx.changes[t] {
			switch {
			case ch.old == nil && ch.new != nil:
				n++
			case ch.old != nil && ch.new == nil:
				n--
			}
		}
		if n > t.Schema.MaxRows {
			return model.Errorf(model.ErrConstraint,
				"transaction causes \"%s\" table to contain %d rows, greater than the schema-defined limit of %d row(s)",
				t.Schema.Name, n, t.Schema.MaxRows)
		}
	}
	return nil
}

// removeWeakRefs drops weak references to rows that do not exist after the
// transaction, from changed rows and from rows referring to deleted ones
// (found through Database.weakReferrers, not by scanning).
func (tx *txn) removeWeakRefs() *model.Error {
	referrers := map[*dbTable]map[model.UUID]bool{}
	for _, chs := range tx.changes {
		for id, ch := range chs {
			if ch.new != nil {
				continue
			}
			for k := range tx.db.weakReferrers[id] {
				m := referrers[k.t]
				if m == nil {
					m = map[model.UUID]bool{}
					referrers[k.t] = m
				}
				m[k.id] = true
			}
		}
	}
	for _, t := range tx.db.tablesSorted() {
		if !hasRefs(t.Schema, model.RefWeak) {
			continue
		}
		ids := referrers[t]
		if ids == nil {
			ids = map[model.UUID]bool{}
		}
		for id, ch := range tx.changes[t] {
			if ch.new != nil {
				ids[id] = true
			}
		}
		var rows []*row
		for _, id := range sortedUUIDs(ids) {
			tx.db.commitVisits++
			if r := tx.get(t, id); r != nil {
				rows = append(rows, r)
			}
		}
		for _, r := range rows {
			for _, c := range t.Schema.Columns {
				d := r.Data[c.Index]
				keep, removed := tx.filterWeak(c, d)
				if removed == 0 {
					continue
				}
				if keep.Len() < c.Type.Min {
					return model.Errorf(model.ErrConstraint,
						"Deletion of %d weak reference(s) to deleted (or never-existing) rows from column \"%s\" in \"%s\" row %s caused this column to become empty, but constraints on this column disallow an empty column.",
						removed, c.Name, t.Schema.Name, r.UUID)
				}
				tx.modify(t, r).Data[c.Index] = keep
			}
		}
	}
	return nil
}

func (tx *txn) filterWeak(c *model.ColumnSchema, d model.Datum) (model.Datum, int) {
	kt, vt := &c.Type.Key, c.Type.Value
	weakKey := kt.RefTable != "" && kt.RefType == model.RefWeak
	weakVal := vt != nil && vt.RefTable != "" && vt.RefType == model.RefWeak
	if !weakKey && !weakVal {
		return d, 0
	}
	exists := func(bt *model.BaseType, a model.Atom) bool {
		return tx.get(tx.db.tables[bt.RefTable], a.(model.UUID)) != nil
	}
	removed := 0
	out := model.Datum{Keys: []model.Atom{}}
	if d.Values != nil {
		out.Values = []model.Atom{}
	}
	for i, k := range d.Keys {
		if weakKey && !exists(kt, k) || weakVal && !exists(vt, d.Values[i]) {
			removed++
			continue
		}
		out.Keys = append(out.Keys, k)
		if d.Values != nil {
			out.Values = append(out.Values, d.Values[i])
		}
	}
	if removed == 0 {
		return d, 0
	}
	return out, removed
}

func (db *Database) tablesSorted() []*dbTable {
	out := make([]*dbTable, 0, len(db.tables))
	for _, n := range db.tableNames() {
		out = append(out, db.tables[n])
	}
	return out
}

func (tx *txn) checkIndexes() *model.Error {
	for _, t := range sortedTables(tx.changes) {
		if len(t.Schema.Indexes) == 0 {
			continue
		}
		chs := tx.changes[t]
		for i, cols := range t.Schema.Indexes {
			freed := map[string]bool{}
			for _, ch := range chs {
				if ch.old != nil {
					freed[indexKey(t.Schema, cols, ch.old)] = true
				}
			}
			added := map[string]model.UUID{}
			for _, id := range sortedUUIDs(chs) {
				ch := chs[id]
				if ch.new == nil {
					continue
				}
				k := indexKey(t.Schema, cols, ch.new)
				other, dup := added[k]
				otherDesc := ""
				if dup {
					otherDesc = describeIndexRow(chs[other])
				} else if o, ok := t.indexes[i][k]; ok && !freed[k] && o != id {
					other, dup = o, true
					otherDesc = "existed in the database before this transaction and was not modified by the transaction"
				}
				if dup {
					names := make([]string, len(cols))
					vals := make([]string, len(cols))
					for j, c := range cols {
						col := t.Schema.Columns[c]
						names[j] = "\"" + col.Name + "\""
						vals[j] = ch.new.Data[c].String()
					}
					return model.Errorf(model.ErrConstraint,
						"Transaction causes multiple rows in \"%s\" table to have identical values (%s) for index on column%s %s.  First row, with UUID %s, %s.  Second row, with UUID %s, %s.",
						t.Schema.Name, strings.Join(vals, " and "), plural(len(cols)), strings.Join(names, " and "),
						other, otherDesc, id, describeIndexRow(ch))
				}
				added[k] = id
			}
		}
	}
	return nil
}

// describeIndexRow words how a row in an index conflict came to be.
func describeIndexRow(ch *change) string {
	if ch.old == nil {
		return "was inserted by this transaction"
	}
	return "was modified by this transaction"
}

func plural(n int) string {
	if n > 1 {
		return "s"
	}
	return ""
}

// hasChanges reports whether committing would change anything.
func (tx *txn) hasChanges() bool { return len(tx.changes) > 0 }

// logRecord renders the transaction as a log record in ovsdb-server's
// "_is_diff" form: inserted rows' non-default columns, modified columns as
// diffs, deleted rows as null. Ephemeral columns are not persisted, so a
// transaction that changed only those yields nil and nothing is written
// (ovs-vswitchd rewrites Interface statistics every few seconds).
func (tx *txn) logRecord(dateMillis int64) []byte {
	b := []byte{'{'}
	wrote := false
	for _, t := range sortedTables(tx.changes) {
		start := len(b)
		b = model.AppendString(b, t.Schema.Name)
		b = append(b, ":{"...)
		chs := tx.changes[t]
		n := 0
		for _, id := range sortedUUIDs(chs) {
			ch := chs[id]
			var body []byte
			switch {
			case ch.new == nil:
				body = []byte("null")
			case ch.old == nil:
				body = appendRowNonDefault(nil, t.Schema, ch.new, true)
			default:
				body = appendRowDiff(nil, t.Schema, ch.old, ch.new, nil, true)
				if len(body) == 2 { // "{}": only ephemeral columns changed
					continue
				}
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = model.AppendString(b, id.String())
			b = append(b, ':')
			b = append(b, body...)
		}
		if n == 0 {
			b = b[:start]
			continue
		}
		wrote = true
		b = append(b, "},"...)
	}
	if !wrote {
		return nil
	}
	b = append(b, `"_date":`...)
	b = appendInt(b, dateMillis)
	if len(tx.comments) > 0 {
		b = append(b, `,"_comment":`...)
		b = model.AppendString(b, strings.Join(tx.comments, "\n"))
	}
	return append(b, `,"_is_diff":true}`...)
}

// appendRowDiff writes the diffs of the columns (all, or those in cols)
// that differ between old and new.
func appendRowDiff(b []byte, ts *model.TableSchema, old, new *row, cols []*model.ColumnSchema, persist bool) []byte {
	if cols == nil {
		cols = ts.Columns
	}
	b = append(b, '{')
	first := true
	for _, c := range cols {
		if persist && c.Ephemeral || c.Index < 0 {
			continue
		}
		o, n := old.Data[c.Index], new.Data[c.Index]
		if o.Equal(n) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = model.AppendString(b, c.Name)
		b = append(b, ':')
		b = model.Diff(&c.Type, o, n).AppendJSON(b, &c.Type)
	}
	return append(b, '}')
}

// apply makes the transaction's changes the committed state.
func (tx *txn) apply() {
	for t, chs := range tx.changes {
		for _, ch := range chs {
			if ch.old != nil {
				t.removeIndex(ch.old)
			}
		}
	}
	for t, chs := range tx.changes {
		for id, ch := range chs {
			tx.db.updateRefs(t, ch.old, ch.new)
			if ch.new == nil {
				delete(t.Rows, id)
				continue
			}
			t.Rows[id] = ch.new
			t.addIndex(ch.new)
		}
	}
}
