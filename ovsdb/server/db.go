package server

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/gvs-project/gvs/ovsdb/model"
	"github.com/gvs-project/gvs/ovsdb/storage"
)

// row is a committed row. Committed rows are never changed in place: a
// transaction copies a row before changing it.
type row struct {
	UUID    model.UUID
	Version model.UUID
	Data    []model.Datum // indexed by ColumnSchema.Index
}

// Get implements model.RowReader.
func (r *row) Get(c *model.ColumnSchema) model.Datum {
	switch c.Index {
	case model.ColUUID:
		return model.Scalar(r.UUID)
	case model.ColVersion:
		return model.Scalar(r.Version)
	}
	return r.Data[c.Index]
}

func (r *row) clone() *row {
	c := *r
	c.Data = append([]model.Datum(nil), r.Data...)
	return &c
}

func newRow(t *model.TableSchema, id model.UUID) *row {
	r := &row{UUID: id, Version: model.NewUUID(), Data: make([]model.Datum, len(t.Columns))}
	for i, c := range t.Columns {
		r.Data[i] = model.DefaultDatum(&c.Type)
	}
	return r
}

// dbTable is a table's committed rows and its unique indexes.
type dbTable struct {
	Schema *model.TableSchema
	Rows   map[model.UUID]*row
	// indexes[i] maps the encoded key of index i to the row holding it.
	indexes []map[string]model.UUID
}

func newTable(ts *model.TableSchema) *dbTable {
	t := &dbTable{Schema: ts, Rows: map[model.UUID]*row{}}
	for range ts.Indexes {
		t.indexes = append(t.indexes, map[string]model.UUID{})
	}
	return t
}

// indexKey encodes row's values of the index's columns.
func indexKey(ts *model.TableSchema, cols []int, r *row) string {
	var b []byte
	for _, c := range cols {
		b = r.Data[c].AppendJSON(b, &ts.Columns[c].Type)
		b = append(b, 0)
	}
	return string(b)
}

// Database is one in-memory database, optionally backed by a log file.
// Once added to a Server it is reached only through the Server; its rows
// are not accessible otherwise.
type Database struct {
	// Schema is read-only.
	Schema *model.DatabaseSchema
	tables map[string]*dbTable
	// readOnly marks _Server: clients may read but not write it.
	readOnly bool

	// strongRefs counts, per row UUID, the strong references other rows
	// of the committed database hold to it, and weakReferrers lists the
	// rows holding weak references to it. Both follow every applied row
	// change so that commits look only at what they changed.
	strongRefs    map[model.UUID]int
	weakReferrers map[model.UUID]map[refKey]int
	// commitVisits counts rows examined by precommit's reference checks;
	// tests use it to show commit cost does not grow with database size.
	commitVisits int

	log            *storage.File
	compactMinSize int64
	now            func() time.Time
}

// NewDatabase creates an empty in-memory database.
func NewDatabase(s *model.DatabaseSchema) *Database {
	db := &Database{Schema: s, tables: map[string]*dbTable{}, now: time.Now, compactMinSize: DefaultCompactMinSize,
		strongRefs: map[model.UUID]int{}, weakReferrers: map[model.UUID]map[refKey]int{}}
	for name, ts := range s.Tables {
		db.tables[name] = newTable(ts)
	}
	return db
}

// DefaultCompactMinSize is the log size below which no compaction happens
// (ovsdb-server uses the same 10 MB floor).
const DefaultCompactMinSize = 10 << 20

// CreateDatabaseFile creates a new database file holding only schema, as
// `ovsdb-tool create` does, and returns the database opened on it.
func CreateDatabaseFile(path string, schemaJSON []byte) (*Database, error) {
	s, err := model.ParseSchema(schemaJSON)
	if err != nil {
		return nil, err
	}
	f, err := storage.Create(path, s.Raw)
	if err != nil {
		return nil, err
	}
	db := NewDatabase(s)
	db.log = f
	return db, nil
}

// OpenDatabaseFile opens a database file written by ovsdb-tool,
// ovsdb-server or gvs, replays its transactions and truncates a torn tail.
func OpenDatabaseFile(path string) (*Database, storage.OpenInfo, error) {
	return openDatabaseFile(path, storage.Open)
}

func openDatabaseFile(path string, open func(string) (*storage.File, [][]byte, storage.OpenInfo, error)) (*Database, storage.OpenInfo, error) {
	f, recs, info, err := open(path)
	if err != nil {
		return nil, info, err
	}
	s, err := model.ParseSchema(recs[0])
	if err != nil {
		f.Close()
		return nil, info, fmt.Errorf("%s: %w", path, err)
	}
	db := NewDatabase(s)
	for i, rec := range recs[1:] {
		if err := db.replay(rec); err != nil {
			if errors.Is(err, model.ErrNulString) {
				// A NUL that an older gvs stored: Open vSwitch cannot read
				// this record and ignores it and every one after it, so
				// gvs drops them too (decoding failed before anything of
				// the record was applied) and the file is readable again.
				if err := f.KeepRecords(i+1, recs); err != nil {
					f.Close()
					return nil, info, err
				}
				info.Dropped = len(recs) - 1 - i
				break
			}
			f.Close()
			return nil, info, fmt.Errorf("%s: record %d: %w", path, i+1, err)
		}
	}
	db.log = f
	return db, info, nil
}

// SetCompactMinSize sets the log size that must be reached before the log
// is compacted (it must also have quadrupled since the last compaction).
func (db *Database) SetCompactMinSize(n int64) { db.compactMinSize = n }

// Close closes the database's log file, if any.
func (db *Database) Close() error {
	if db.log == nil {
		return nil
	}
	return db.log.Close()
}

// replay applies one transaction or snapshot record.
func (db *Database) replay(rec []byte) error {
	v, err := model.DecodeJSON(rec)
	if err != nil {
		return err
	}
	o, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("record is not an object")
	}
	isDiff, _ := o["_is_diff"].(bool)
	for tname, tv := range o {
		if len(tname) > 0 && tname[0] == '_' {
			continue
		}
		t, ok := db.tables[tname]
		if !ok {
			return fmt.Errorf("unknown table %q", tname)
		}
		rows, ok := tv.(map[string]any)
		if !ok {
			return fmt.Errorf("table %s: not an object", tname)
		}
		for us, rv := range rows {
			id, err := model.ParseUUID(us)
			if err != nil {
				return fmt.Errorf("table %s: %w", tname, err)
			}
			old := t.Rows[id]
			if rv == nil {
				if old != nil {
					t.removeIndex(old)
					delete(t.Rows, id)
					db.updateRefs(t, old, nil)
				}
				continue
			}
			cols, ok := rv.(map[string]any)
			if !ok {
				return fmt.Errorf("table %s row %s: not an object", tname, us)
			}
			var r *row
			if old != nil {
				r = old.clone()
				r.Version = model.NewUUID()
				t.removeIndex(old)
			} else {
				r = newRow(t.Schema, id)
			}
			for cn, cv := range cols {
				c, ok := t.Schema.Column(cn)
				if !ok || c.Index < 0 {
					continue // ovsdb-tool tolerates columns a newer schema dropped
				}
				d, perr := model.DatumFromJSON(&c.Type, cv, nil)
				if perr != nil {
					// A diff may hold more elements than the type allows.
					loose := c.Type
					loose.Min, loose.Max = 0, model.Unlimited
					d, perr = model.DatumFromJSON(&loose, cv, nil)
					if perr != nil {
						return fmt.Errorf("table %s row %s column %s: %v", tname, us, cn, perr)
					}
				}
				if isDiff && old != nil {
					d = model.ApplyDiff(&c.Type, r.Data[c.Index], d)
				}
				r.Data[c.Index] = d
			}
			t.Rows[id] = r
			t.addIndex(r)
			db.updateRefs(t, old, r)
		}
	}
	return nil
}

// refKey names a row that holds references.
type refKey struct {
	t  *dbTable
	id model.UUID
}

// updateRefs moves the reference bookkeeping from old to new, either of
// which may be nil (insert, delete).
func (db *Database) updateRefs(t *dbTable, old, new *row) {
	forRefDiff(t.Schema, old, new, model.RefStrong, func(_ string, ref model.UUID, n int) {
		if c := db.strongRefs[ref] + n; c != 0 {
			db.strongRefs[ref] = c
		} else {
			delete(db.strongRefs, ref)
		}
	})
	forRefDiff(t.Schema, old, new, model.RefWeak, func(_ string, ref model.UUID, n int) {
		m := db.weakReferrers[ref]
		if m == nil {
			m = map[refKey]int{}
			db.weakReferrers[ref] = m
		}
		k := refKey{t, rowID(old, new)}
		if c := m[k] + n; c != 0 {
			m[k] = c
		} else {
			delete(m, k)
			if len(m) == 0 {
				delete(db.weakReferrers, ref)
			}
		}
	})
}

func rowID(old, new *row) model.UUID {
	if old != nil {
		return old.UUID
	}
	return new.UUID
}

// forRefDiff calls fn with -1 for each reference of the given kind that
// old holds and +1 for each that new holds (either may be nil), skipping
// columns the two rows share and references of a row to itself, which
// never keep it alive.
func forRefDiff(ts *model.TableSchema, old, new *row, kind model.RefType, fn func(table string, ref model.UUID, n int)) {
	if !hasRefs(ts, kind) {
		return
	}
	self := rowID(old, new)
	for _, c := range ts.Columns {
		if old != nil && new != nil {
			o, n := old.Data[c.Index], new.Data[c.Index]
			if o.Equal(n) {
				continue
			}
			if c.Type.Value == nil && c.Type.Key.RefTable != "" {
				// A set of references (Bridge.ports): merge the sorted
				// keys so that adding one of many costs no map updates
				// for the others.
				if c.Type.Key.RefType == kind {
					mergeRefDiff(c.Type.Key.RefTable, o.Keys, n.Keys, self, fn)
				}
				continue
			}
		}
		for _, side := range [2]struct {
			r *row
			n int
		}{{old, -1}, {new, 1}} {
			if side.r == nil {
				continue
			}
			refsOf(c, side.r.Data[c.Index], kind, func(table string, ref model.UUID) {
				if ref != self {
					fn(table, ref, side.n)
				}
			})
		}
	}
}

// mergeRefDiff reports the references only in old (-1) and only in new
// (+1), given both sorted.
func mergeRefDiff(table string, old, new []model.Atom, self model.UUID, fn func(table string, ref model.UUID, n int)) {
	emit := func(a model.Atom, n int) {
		if ref := a.(model.UUID); ref != self {
			fn(table, ref, n)
		}
	}
	i, j := 0, 0
	for i < len(old) || j < len(new) {
		switch {
		case j == len(new) || i < len(old) && model.CompareAtoms(old[i], new[j]) < 0:
			emit(old[i], -1)
			i++
		case i == len(old) || model.CompareAtoms(old[i], new[j]) > 0:
			emit(new[j], 1)
			j++
		default:
			i++
			j++
		}
	}
}

func (t *dbTable) removeIndex(r *row) {
	for i, cols := range t.Schema.Indexes {
		k := indexKey(t.Schema, cols, r)
		if t.indexes[i][k] == r.UUID {
			delete(t.indexes[i], k)
		}
	}
}

func (t *dbTable) addIndex(r *row) {
	for i, cols := range t.Schema.Indexes {
		t.indexes[i][indexKey(t.Schema, cols, r)] = r.UUID
	}
}

// snapshot renders every row as one log record.
func (db *Database) snapshot() []byte {
	b := []byte(`{`)
	names := db.tableNames()
	first := true
	for _, name := range names {
		t := db.tables[name]
		if len(t.Rows) == 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = model.AppendString(b, name)
		b = append(b, ":{"...)
		for i, id := range sortedUUIDs(t.Rows) {
			if i > 0 {
				b = append(b, ',')
			}
			b = model.AppendString(b, id.String())
			b = append(b, ':')
			b = appendRowNonDefault(b, t.Schema, t.Rows[id], true)
		}
		b = append(b, '}')
	}
	if !first {
		b = append(b, ',')
	}
	b = append(b, `"_date":`...)
	b = appendInt(b, db.now().UnixMilli())
	return append(b, '}')
}

func (db *Database) tableNames() []string {
	names := make([]string, 0, len(db.tables))
	for n := range db.tables {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func sortedUUIDs[V any](m map[model.UUID]V) []model.UUID {
	ids := make([]model.UUID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 })
	return ids
}

// appendRowNonDefault writes the row's columns that differ from their
// defaults, skipping ephemeral columns when persisting.
func appendRowNonDefault(b []byte, ts *model.TableSchema, r *row, persist bool) []byte {
	b = append(b, '{')
	first := true
	for _, c := range ts.Columns {
		if persist && c.Ephemeral {
			continue
		}
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
