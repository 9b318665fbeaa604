package client

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"

	"github.com/gvs-project/gvs/ovsdb/model"
)

// NamedUUID refers, inside a transaction, to the row that an Insert in
// the same transaction creates under that uuid-name. Use it wherever a
// uuid value is expected.
type NamedUUID string

// The Go values accepted for column values, conditions and mutations:
//
//   - model.Datum, encoded as a set or map according to the column;
//   - an atom: string (or a named string type), any integer type, float,
//     bool, model.UUID, NamedUUID, *Row (its UUID);
//   - a slice or array of atoms (other than model.UUID itself): a set;
//   - a Go map of atoms to atoms: a map column;
//   - nil: the empty set or map.

var uuidType = reflect.TypeFor[model.UUID]()

// encodeDatum appends v's JSON form as a value of column type ct.
// keysOnly encodes a set of the map's keys (for "delete" on a map).
func encodeDatum(dst []byte, ct *model.ColumnType, v any, keysOnly bool) ([]byte, error) {
	isMap := ct.IsMap() && !keysOnly
	if v == nil {
		if isMap {
			return append(dst, `["map",[]]`...), nil
		}
		return append(dst, `["set",[]]`...), nil
	}
	if d, ok := v.(model.Datum); ok {
		if isMap {
			if len(d.Values) != len(d.Keys) {
				return dst, fmt.Errorf("map value needs a value for every key")
			}
			return encodePairs(dst, ct, d.Keys, d.Values)
		}
		return encodeSet(dst, &ct.Key, d.Keys)
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.Type() == uuidType:
	case rv.Kind() == reflect.Map:
		if !isMap {
			return dst, fmt.Errorf("a %T cannot be a %s", v, describe(ct))
		}
		keys := make([]any, 0, rv.Len())
		vals := make([]any, 0, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			keys = append(keys, it.Key().Interface())
			vals = append(vals, it.Value().Interface())
		}
		return encodePairs(dst, ct, keys, vals)
	case rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array:
		if isMap {
			return dst, fmt.Errorf("a %T cannot be a %s", v, describe(ct))
		}
		elems := make([]any, rv.Len())
		for i := range elems {
			elems[i] = rv.Index(i).Interface()
		}
		return encodeSet(dst, &ct.Key, elems)
	}
	if isMap {
		return dst, fmt.Errorf("a %T cannot be a %s", v, describe(ct))
	}
	return encodeAtom(dst, &ct.Key, v)
}

func describe(ct *model.ColumnType) string {
	switch {
	case ct.IsMap():
		return "map of " + ct.Key.Type.String() + " to " + ct.Value.Type.String()
	case ct.IsScalar():
		return ct.Key.Type.String()
	}
	return "set of " + ct.Key.Type.String()
}

func encodeSet(dst []byte, bt *model.BaseType, elems []any) ([]byte, error) {
	dst = append(dst, `["set",[`...)
	for i, e := range elems {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = encodeAtom(dst, bt, e); err != nil {
			return dst, err
		}
	}
	return append(dst, "]]"...), nil
}

// encodePairs writes a map with its pairs in key order so that requests
// are deterministic.
func encodePairs(dst []byte, ct *model.ColumnType, keys, vals []any) ([]byte, error) {
	type pair struct{ k, v []byte }
	pairs := make([]pair, len(keys))
	for i := range keys {
		k, err := encodeAtom(nil, &ct.Key, keys[i])
		if err != nil {
			return dst, err
		}
		v, err := encodeAtom(nil, ct.Value, vals[i])
		if err != nil {
			return dst, err
		}
		pairs[i] = pair{k, v}
	}
	sort.Slice(pairs, func(i, j int) bool { return bytes.Compare(pairs[i].k, pairs[j].k) < 0 })
	dst = append(dst, `["map",[`...)
	for i, p := range pairs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		dst = append(dst, p.k...)
		dst = append(dst, ',')
		dst = append(dst, p.v...)
		dst = append(dst, ']')
	}
	return append(dst, "]]"...), nil
}

// encodeAtom appends one atom of base type bt.
func encodeAtom(dst []byte, bt *model.BaseType, a any) ([]byte, error) {
	switch x := a.(type) {
	case NamedUUID:
		if bt.Type != model.TypeUUID {
			return dst, fmt.Errorf("named-uuid %q given for a %s", string(x), bt.Type)
		}
		if !model.ValidID(string(x)) {
			return dst, fmt.Errorf("%q is not a valid uuid-name", string(x))
		}
		dst = append(dst, `["named-uuid",`...)
		dst = model.AppendString(dst, string(x))
		return append(dst, ']'), nil
	case model.UUID:
		if bt.Type != model.TypeUUID {
			return dst, fmt.Errorf("uuid given for a %s", bt.Type)
		}
		return model.AppendAtomJSON(dst, x), nil
	case *Row:
		if bt.Type != model.TypeUUID || x == nil {
			return dst, fmt.Errorf("row given for a %s", bt.Type)
		}
		return model.AppendAtomJSON(dst, x.UUID), nil
	}
	rv := reflect.ValueOf(a)
	if !rv.IsValid() {
		return dst, fmt.Errorf("nil given for a %s", bt.Type)
	}
	switch bt.Type {
	case model.TypeInteger:
		switch rv.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return model.AppendAtomJSON(dst, rv.Int()), nil
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			u := rv.Uint()
			if u > 1<<63-1 {
				return dst, fmt.Errorf("%d does not fit an OVSDB integer", u)
			}
			return model.AppendAtomJSON(dst, int64(u)), nil
		}
	case model.TypeReal:
		switch rv.Kind() {
		case reflect.Float32, reflect.Float64:
			return model.AppendAtomJSON(dst, rv.Float()), nil
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return model.AppendAtomJSON(dst, float64(rv.Int())), nil
		}
	case model.TypeBoolean:
		if rv.Kind() == reflect.Bool {
			return model.AppendAtomJSON(dst, rv.Bool()), nil
		}
	case model.TypeString:
		if rv.Kind() == reflect.String {
			return model.AppendString(dst, rv.String()), nil
		}
	}
	return dst, fmt.Errorf("%T given for a %s", a, bt.Type)
}

// encodeRow appends a <row> object for table ts.
func encodeRow(dst []byte, ts *model.TableSchema, row map[string]any) ([]byte, error) {
	dst = append(dst, '{')
	for i, name := range sortedKeys(row) {
		col, ok := ts.Column(name)
		if !ok || col.Index < 0 {
			return dst, fmt.Errorf("table %s has no column %q", ts.Name, name)
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = model.AppendString(dst, name)
		dst = append(dst, ':')
		var err error
		if dst, err = encodeDatum(dst, &col.Type, row[name], false); err != nil {
			return dst, fmt.Errorf("column %s: %w", name, err)
		}
	}
	return append(dst, '}'), nil
}

// Condition is one clause of a "where": column, function ("==", "!=",
// "<", "<=", ">", ">=", "includes", "excludes") and value.
type Condition struct {
	Column   string
	Function string
	Value    any
}

// Where builds a condition.
func Where(column, function string, value any) Condition {
	return Condition{Column: column, Function: function, Value: value}
}

// UUIDIs is the condition that selects one row.
func UUIDIs(id model.UUID) Condition { return Condition{"_uuid", "==", id} }

var conditionFuncs = map[string]bool{
	"==": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true,
	"includes": true, "excludes": true,
}

func encodeWhere(dst []byte, ts *model.TableSchema, where []Condition) ([]byte, error) {
	dst = append(dst, '[')
	for i, c := range where {
		col, ok := ts.Column(c.Column)
		if !ok {
			return dst, fmt.Errorf("table %s has no column %q", ts.Name, c.Column)
		}
		if !conditionFuncs[c.Function] {
			return dst, fmt.Errorf("unknown condition function %q", c.Function)
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		dst = model.AppendString(dst, c.Column)
		dst = append(dst, ',')
		dst = model.AppendString(dst, c.Function)
		dst = append(dst, ',')
		ct := col.Type
		if !ct.IsScalar() {
			ct.Min, ct.Max = 0, model.Unlimited
		}
		var err error
		if dst, err = encodeDatum(dst, &ct, c.Value, false); err != nil {
			return dst, fmt.Errorf("condition on %s: %w", c.Column, err)
		}
		dst = append(dst, ']')
	}
	return append(dst, ']'), nil
}

// Mutation is one <mutation>: column, mutator ("+=", "-=", "*=", "/=",
// "%=", "insert", "delete") and value. For "delete" on a map column the
// value may be a set of keys.
type Mutation struct {
	Column  string
	Mutator string
	Value   any
}

func encodeMutations(dst []byte, ts *model.TableSchema, muts []Mutation) ([]byte, error) {
	dst = append(dst, '[')
	for i, m := range muts {
		col, ok := ts.Column(m.Column)
		if !ok || col.Index < 0 {
			return dst, fmt.Errorf("table %s has no column %q", ts.Name, m.Column)
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		dst = model.AppendString(dst, m.Column)
		dst = append(dst, ',')
		dst = model.AppendString(dst, m.Mutator)
		dst = append(dst, ',')
		var err error
		switch m.Mutator {
		case "+=", "-=", "*=", "/=", "%=":
			dst, err = encodeAtom(dst, &col.Type.Key, m.Value)
		case "insert", "delete":
			ct := col.Type
			ct.Min, ct.Max = 0, model.Unlimited
			keysOnly := false
			if ct.IsMap() && m.Mutator == "delete" {
				keysOnly = !isMapValue(m.Value)
			}
			dst, err = encodeDatum(dst, &ct, m.Value, keysOnly)
		default:
			err = fmt.Errorf("unknown mutator %q", m.Mutator)
		}
		if err != nil {
			return dst, fmt.Errorf("mutation of %s: %w", m.Column, err)
		}
		dst = append(dst, ']')
	}
	return append(dst, ']'), nil
}

// isMapValue reports whether v holds key-value pairs (rather than keys).
func isMapValue(v any) bool {
	if d, ok := v.(model.Datum); ok {
		return d.Values != nil
	}
	return v != nil && reflect.ValueOf(v).Kind() == reflect.Map
}
