package model

import "math"

// Mutator is a mutation operator.
type Mutator uint8

// Mutators.
const (
	MutAdd Mutator = iota + 1
	MutSub
	MutMul
	MutDiv
	MutMod
	MutInsert
	MutDelete
)

var mutatorNames = map[string]Mutator{
	"+=": MutAdd, "-=": MutSub, "*=": MutMul, "/=": MutDiv, "%=": MutMod,
	"insert": MutInsert, "delete": MutDelete,
}

// Mutation is one parsed <mutation>.
type Mutation struct {
	Column  *ColumnSchema
	Mutator Mutator
	Name    string
	// Value is the operand: one atom for arithmetic, a set or map for
	// insert and delete (a set of keys may delete from a map).
	Value Datum
}

// ParseMutations parses a "mutations" array against table t.
func ParseMutations(t *TableSchema, v any, resolve Resolver) ([]Mutation, *Error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, SyntaxErrorf(v, "array expected")
	}
	out := make([]Mutation, 0, len(arr))
	for _, mv := range arr {
		a, ok := mv.([]any)
		if !ok || len(a) != 3 {
			return nil, SyntaxErrorf(mv, "Parse error in mutation.")
		}
		name, ok1 := a[0].(string)
		mname, ok2 := a[1].(string)
		if !ok1 || !ok2 {
			return nil, SyntaxErrorf(mv, "Parse error in mutation.")
		}
		col, ok := t.Column(name)
		if !ok {
			return nil, &Error{Name: ErrSyntax, Details: "No column " + name + " in table " + t.Name + ".", Syntax: JSONText(mv)}
		}
		if !col.Mutable || col.Index < 0 {
			return nil, &Error{Name: ErrConstraint, Details: "Cannot mutate immutable column " + name + " in table " + t.Name + ".", Syntax: JSONText(mv)}
		}
		m, ok := mutatorNames[mname]
		if !ok {
			return nil, Errorf(ErrUnknownMutator, "No mutator named %s.", mname)
		}
		mismatch := func() *Error {
			return SyntaxErrorf(mv, "Type mismatch: \"%s\" operator may not be applied to column %s of type %s.",
				mname, name, typeName(&col.Type))
		}
		var vt ColumnType
		var errp *Error
		var d Datum
		switch m {
		case MutAdd, MutSub, MutMul, MutDiv, MutMod:
			kt := col.Type.Key.Type
			if col.Type.IsMap() || (kt != TypeInteger && kt != TypeReal) || (m == MutMod && kt != TypeInteger) {
				return nil, mismatch()
			}
			vt = ColumnType{Key: col.Type.Key, Min: 1, Max: 1}
			vt.Key.Enum = nil
			// ovsdb-server checks the result, not the operand.
			d, errp = DatumFromJSON(&vt, a[2], resolve)
		case MutInsert, MutDelete:
			if col.Type.IsScalar() {
				return nil, mismatch()
			}
			vt = col.Type
			vt.Min, vt.Max = 0, Unlimited
			d, errp = DatumFromJSON(&vt, a[2], resolve)
			if errp != nil && m == MutDelete && vt.IsMap() {
				// "delete" on a map also takes a set of keys.
				kt := ColumnType{Key: vt.Key, Min: 0, Max: Unlimited}
				d, errp = DatumFromJSON(&kt, a[2], resolve)
			}
			if errp == nil && m == MutInsert {
				errp = d.CheckConstraints(&vt)
			}
		}
		if errp != nil {
			return nil, errp
		}
		out = append(out, Mutation{Column: col, Mutator: m, Name: mname, Value: d})
	}
	return out, nil
}

// Apply returns the result of mutating d, checked against the column's
// type.
func (m *Mutation) Apply(d Datum) (Datum, *Error) {
	t := &m.Column.Type
	var out Datum
	switch m.Mutator {
	case MutInsert:
		out = d.Clone()
		for i, k := range m.Value.Keys {
			if out.find(k) >= 0 {
				continue
			}
			out.Keys = append(out.Keys, k)
			if t.IsMap() {
				out.Values = append(out.Values, m.Value.Values[i])
			}
		}
		out.dedupe()
	case MutDelete:
		out = Datum{Keys: []Atom{}}
		if t.IsMap() {
			out.Values = []Atom{}
		}
		for i, k := range d.Keys {
			j := m.Value.find(k)
			if j >= 0 && (m.Value.Values == nil || CompareAtoms(m.Value.Values[j], d.Values[i]) == 0) {
				continue
			}
			out.Keys = append(out.Keys, k)
			if t.IsMap() {
				out.Values = append(out.Values, d.Values[i])
			}
		}
	default:
		out = d.Clone()
		operand := m.Value.Keys[0]
		for i, k := range out.Keys {
			r, err := arith(m.Mutator, k, operand)
			if err != nil {
				return d, err
			}
			if err := t.Key.CheckAtom(r); err != nil {
				return d, err
			}
			out.Keys[i] = r
		}
		if out.sortUnique() {
			return d, Errorf(ErrConstraint, "Result of \"%s\" operation contains duplicate values.", m.Name)
		}
	}
	if n := len(out.Keys); n < t.Min || n > t.Max {
		if n > t.Max {
			return d, Errorf(ErrConstraint, "Attempted to store %d elements in %s but only %d are allowed.", n, typeName(t), t.Max)
		}
		return d, Errorf(ErrConstraint, "Attempted to store %d elements in %s but at least %d are required.", n, typeName(t), t.Min)
	}
	return out, nil
}

func arith(m Mutator, a, b Atom) (Atom, *Error) {
	switch x := a.(type) {
	case int64:
		y := b.(int64)
		switch m {
		case MutAdd:
			r := x + y
			if (r > x) != (y > 0) {
				return nil, Errorf(ErrRange, "Result of \"+=\" operation is out of range.")
			}
			return r, nil
		case MutSub:
			r := x - y
			if (r < x) != (y > 0) {
				return nil, Errorf(ErrRange, "Result of \"-=\" operation is out of range.")
			}
			return r, nil
		case MutMul:
			if x != 0 && y != 0 {
				r := x * y
				if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
					return nil, Errorf(ErrRange, "Result of \"*=\" operation is out of range.")
				}
				return r, nil
			}
			return int64(0), nil
		case MutDiv, MutMod:
			if y == 0 {
				return nil, Errorf(ErrDomain, "Division by zero.")
			}
			if x == math.MinInt64 && y == -1 {
				return nil, Errorf(ErrRange, "Result of \"/=\" operation is out of range.")
			}
			if m == MutDiv {
				return x / y, nil
			}
			return x % y, nil
		}
	case float64:
		y := b.(float64)
		var r float64
		switch m {
		case MutAdd:
			r = x + y
		case MutSub:
			r = x - y
		case MutMul:
			r = x * y
		case MutDiv:
			if y == 0 {
				return nil, Errorf(ErrDomain, "Division by zero.")
			}
			r = x / y
		}
		if math.IsInf(r, 0) || math.IsNaN(r) {
			return nil, Errorf(ErrRange, "Result of operation is out of range.")
		}
		return r, nil
	}
	return nil, Errorf(ErrGeneric, "invalid arithmetic")
}
