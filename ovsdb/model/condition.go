package model

// Function is a condition function: "<", "<=", "==", "!=", ">=", ">",
// "includes" or "excludes".
type Function uint8

// Condition functions.
const (
	FuncLT Function = iota + 1
	FuncLE
	FuncEQ
	FuncNE
	FuncGE
	FuncGT
	FuncIncludes
	FuncExcludes
)

var functionNames = map[string]Function{
	"<": FuncLT, "<=": FuncLE, "==": FuncEQ, "!=": FuncNE,
	">=": FuncGE, ">": FuncGT, "includes": FuncIncludes, "excludes": FuncExcludes,
}

// RowReader gives a condition access to a row's columns.
type RowReader interface {
	Get(c *ColumnSchema) Datum
}

// Condition is one clause of a "where": a column compared with a value, or
// a constant (the OVS extension true/false, used by monitor_cond).
type Condition struct {
	Column *ColumnSchema // nil for a constant
	Func   Function
	Value  Datum
	Const  bool
}

// ParseConditions parses a "where" array against table t.
func ParseConditions(t *TableSchema, where any, resolve Resolver) ([]Condition, *Error) {
	arr, ok := where.([]any)
	if !ok {
		return nil, SyntaxErrorf(where, "array expected")
	}
	conds := make([]Condition, 0, len(arr))
	for _, cv := range arr {
		c, err := parseCondition(t, cv, resolve)
		if err != nil {
			return nil, err
		}
		conds = append(conds, c)
	}
	return conds, nil
}

func parseCondition(t *TableSchema, cv any, resolve Resolver) (Condition, *Error) {
	if b, ok := cv.(bool); ok {
		return Condition{Const: b}, nil
	}
	a, ok := cv.([]any)
	if !ok || len(a) != 3 {
		return Condition{}, SyntaxErrorf(cv, "Parse error in condition.")
	}
	name, ok1 := a[0].(string)
	fname, ok2 := a[1].(string)
	if !ok1 || !ok2 {
		return Condition{}, SyntaxErrorf(cv, "Parse error in condition.")
	}
	col, ok := t.Column(name)
	if !ok {
		return Condition{}, &Error{Name: ErrSyntax, Details: "No column " + name + " in table " + t.Name + ".", Syntax: JSONText(cv)}
	}
	f, ok := functionNames[fname]
	if !ok {
		return Condition{}, Errorf(ErrUnknownFunction, "No function named %s.", fname)
	}
	vt := col.Type
	switch f {
	case FuncLT, FuncLE, FuncGE, FuncGT:
		if vt.IsMap() || vt.Max != 1 || (vt.Key.Type != TypeInteger && vt.Key.Type != TypeReal) {
			return Condition{}, SyntaxErrorf(cv, "Type mismatch: \"%s\" operator may not be applied to column %s of type %s.",
				fname, name, typeName(&col.Type))
		}
		vt.Min = 1
	default:
		if !vt.IsScalar() {
			vt.Min, vt.Max = 0, Unlimited
		}
	}
	d, err := DatumFromJSON(&vt, a[2], resolve)
	if err != nil {
		return Condition{}, err
	}
	return Condition{Column: col, Func: f, Value: d}, nil
}

func typeName(t *ColumnType) string {
	switch {
	case t.IsMap():
		return "map of " + t.Key.Type.String() + "-" + t.Value.Type.String()
	case t.IsScalar():
		return t.Key.Type.String()
	}
	return "set of " + t.Key.Type.String()
}

// Match reports whether row satisfies every condition.
func Match(conds []Condition, row RowReader) bool {
	for i := range conds {
		if !conds[i].Eval(row) {
			return false
		}
	}
	return true
}

// Eval evaluates one clause.
func (c *Condition) Eval(row RowReader) bool {
	if c.Column == nil {
		return c.Const
	}
	d := row.Get(c.Column)
	switch c.Func {
	case FuncEQ:
		return d.Equal(c.Value)
	case FuncNE:
		return !d.Equal(c.Value)
	case FuncIncludes:
		return includes(d, c.Value)
	case FuncExcludes:
		return excludes(d, c.Value)
	}
	if len(d.Keys) != 1 || len(c.Value.Keys) != 1 {
		return false
	}
	return ordered(c.Func, CompareAtoms(d.Keys[0], c.Value.Keys[0]))
}

func ordered(f Function, c int) bool {
	switch f {
	case FuncLT:
		return c < 0
	case FuncLE:
		return c <= 0
	case FuncGE:
		return c >= 0
	case FuncGT:
		return c > 0
	}
	return false
}

// includes reports whether every element (pair, for maps) of b is in a.
func includes(a, b Datum) bool {
	for i, k := range b.Keys {
		j := a.find(k)
		if j < 0 {
			return false
		}
		if b.Values != nil && (a.Values == nil || CompareAtoms(a.Values[j], b.Values[i]) != 0) {
			return false
		}
	}
	return true
}

// excludes reports whether no element (pair, for maps) of b is in a.
func excludes(a, b Datum) bool {
	for i, k := range b.Keys {
		j := a.find(k)
		if j < 0 {
			continue
		}
		if b.Values == nil || a.Values != nil && CompareAtoms(a.Values[j], b.Values[i]) == 0 {
			return false
		}
	}
	return true
}
