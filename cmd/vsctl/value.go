package vsctl

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ovsdb/model"
)

// formatDatum renders d as ovs-vsctl does: sets in [...] and maps in
// {...} unless the column holds at most one value and d has one.
func formatDatum(d model.Datum, t *model.ColumnType) string {
	var b strings.Builder
	brackets := t.Max > 1 || len(d.Keys) == 0
	if brackets {
		b.WriteByte("[{"[btoi(t.IsMap())])
	}
	for i, k := range d.Keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(model.AtomString(k))
		if t.IsMap() && i < len(d.Values) {
			b.WriteByte('=')
			b.WriteString(model.AtomString(d.Values[i]))
		}
	}
	if brackets {
		b.WriteByte("]}"[btoi(t.IsMap())])
	}
	return b.String()
}

// formatBare renders d without brackets or quotes, elements separated by
// spaces (--data=bare).
func formatBare(d model.Datum, t *model.ColumnType) string {
	parts := make([]string, len(d.Keys))
	for i, k := range d.Keys {
		parts[i] = bareAtom(k)
		if t.IsMap() && i < len(d.Values) {
			parts[i] += "=" + bareAtom(d.Values[i])
		}
	}
	return strings.Join(parts, " ")
}

func bareAtom(a model.Atom) string {
	if s, ok := a.(string); ok {
		return s
	}
	return model.AtomString(a)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// valueParser parses ovs-vsctl's textual data: atoms, [set, of, atoms]
// and {key=value, ...} maps; @name refers to a --id symbol.
type valueParser struct {
	dc *dbctx
}

// parseAtom parses one atom of type bt from a whole argument or token.
func (p valueParser) parseAtom(bt *model.BaseType, s string) (model.Atom, error) {
	switch bt.Type {
	case model.TypeString:
		if strings.HasPrefix(s, `"`) {
			var v string
			if err := json.Unmarshal([]byte(s), &v); err != nil {
				return nil, fail("%s: quoted string extends past end of argument", s)
			}
			return v, nil
		}
		return s, nil
	case model.TypeInteger:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fail("\"%s\" is not a valid integer or range", s)
		}
		return n, nil
	case model.TypeReal:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fail("\"%s\" is not a valid real number", s)
		}
		return f, nil
	case model.TypeBoolean:
		switch s {
		case "true", "yes", "on", "1":
			return true, nil
		case "false", "no", "off", "0":
			return false, nil
		}
		return nil, fail("\"%s\" is not a valid boolean (use \"true\" or \"false\")", s)
	case model.TypeUUID:
		if strings.HasPrefix(s, "@") && p.dc != nil {
			return p.dc.symbol(s).uuid, nil
		}
		u, err := model.ParseUUID(s)
		if err != nil {
			return nil, fail("\"%s\" is not a valid UUID", s)
		}
		return u, nil
	}
	return nil, fail("unsupported type")
}

// delimiters end an unquoted token in a datum.
const delimiters = ":=, []{}\t\n"

// token reads one atom token at s[i:]: a quoted string or a run of
// non-delimiters. It returns the token text (quotes kept) and the index
// after it.
func token(s string, i int) (string, int, error) {
	if i < len(s) && s[i] == '"' {
		j := i + 1
		for ; j < len(s) && s[j] != '"'; j++ {
			if s[j] == '\\' {
				j++
			}
		}
		if j >= len(s) {
			return "", 0, fail("%s: quoted string extends past end of argument", s[i:])
		}
		return s[i : j+1], j + 1, nil
	}
	j := i
	for j < len(s) && !strings.ContainsRune(delimiters, rune(s[j])) {
		j++
	}
	if j == i {
		return "", 0, fail("An empty string is not valid as input; use \"\" to represent the empty string")
	}
	return s[i:j], j, nil
}

// typeEnglish describes a column type in ovs-vsctl's words.
func typeEnglish(t *model.ColumnType) string {
	k := t.Key.Type.String()
	if t.IsMap() {
		return fmt.Sprintf("map of (%s, %s) pairs", k, t.Value.Type.String())
	}
	switch {
	case t.Min == 1 && t.Max == 1:
		return k
	case t.Min == 0 && t.Max == model.Unlimited:
		return "set of " + k + "s"
	case t.Max == model.Unlimited:
		return fmt.Sprintf("set of %d or more %ss", t.Min, k)
	case t.Min == 0:
		return fmt.Sprintf("set of up to %d %ss", t.Max, k)
	}
	return fmt.Sprintf("set of %d to %d %ss", t.Min, t.Max, k)
}

// parseDatum parses s as a value of column type t: atoms separated by
// commas or spaces, optionally in [...] (sets) or {...} (maps, as
// key=value). Constraints (ranges, enums, set sizes) are checked.
func (p valueParser) parseDatum(t *model.ColumnType, s string) (model.Datum, error) {
	d, err := p.parseUnchecked(t, s)
	if err != nil {
		return d, err
	}
	if err := checkDatum(t, &d); err != nil {
		return d, err
	}
	if n := len(d.Keys); n > t.Max {
		return d, fail("%s: %d value(s) specified but the maximum number is %d", s, n, t.Max)
	} else if n < t.Min {
		return d, fail("%s: %d value(s) specified but the minimum number is %d", s, n, t.Min)
	}
	return d, nil
}

func checkDatum(t *model.ColumnType, d *model.Datum) error {
	sortDatum(d)
	for i := 1; i < len(d.Keys); i++ {
		if model.CompareAtoms(d.Keys[i-1], d.Keys[i]) == 0 {
			if t.IsMap() {
				return fail("map contains duplicate key")
			}
			return fail("set contains duplicate value")
		}
	}
	if e := d.CheckConstraints(t); e != nil {
		return fail("%s", e.Error())
	}
	return nil
}

func (p valueParser) parseUnchecked(t *model.ColumnType, s string) (model.Datum, error) {
	d := model.Datum{Keys: []model.Atom{}}
	if t.IsMap() {
		d.Values = []model.Atom{}
	}
	inner, off := s, 0
	if strings.HasPrefix(s, "[") || strings.HasPrefix(s, "{") {
		close := "]"
		if s[0] == '{' {
			close = "}"
		}
		if !strings.HasSuffix(s, close) || len(s) < 2 {
			return d, fail("%s: missing \"%s\" at end of data", s, close)
		}
		inner, off = s[1:len(s)-1], 1
	}
	unexpected := func(i int) error {
		return fail("%s: unexpected \"%c\" parsing %s", s, inner[i], typeEnglish(t))
	}
	skip := func(i int) int {
		for i < len(inner) && (inner[i] == ' ' || inner[i] == '\t' || inner[i] == '\n') {
			i++
		}
		return i
	}
	keyStart := 0
	for i := skip(0); i < len(inner); {
		if inner[i] != '"' && strings.ContainsRune(delimiters, rune(inner[i])) {
			return d, unexpected(i)
		}
		tok, j, err := token(inner, i)
		if err != nil {
			return d, err
		}
		if t.Key.Type == model.TypeInteger && !t.IsMap() && t.Max > 1 {
			if lo, hi, ok := intRange(tok); ok {
				if hi < lo {
					return d, fail("\"%s\" is not a valid range. Range end cannot be before start.", tok)
				}
				for v := lo; v <= hi; v++ {
					d.Keys = append(d.Keys, v)
				}
				i = j
				goto next
			}
		}
		keyStart = i
		{
			ka, err := p.parseAtom(&t.Key, tok)
			if err != nil {
				return d, err
			}
			d.Keys = append(d.Keys, ka)
			i = j
		}
		if t.IsMap() {
			i = skip(i)
			if i >= len(inner) || inner[i] != '=' {
				if off+i >= len(s) {
					return d, fail("%s: syntax error at end of input expecting \"=\"", s)
				}
				return d, fail("%s: syntax error at \"%c\" expecting \"=\"", s[off+keyStart:], s[off+i])
			}
			i = skip(i + 1)
			vt, j, err := token(inner, i)
			if err != nil {
				return d, err
			}
			va, err := p.parseAtom(t.Value, vt)
			if err != nil {
				return d, err
			}
			d.Values = append(d.Values, va)
			i = j
		}
	next:
		i = skip(i)
		if i < len(inner) && inner[i] == ',' {
			i = skip(i + 1)
		}
	}
	return d, nil
}

// intRange parses "lo-hi".
func intRange(s string) (lo, hi int64, ok bool) {
	a, b, found := strings.Cut(s, "-")
	if !found || a == "" {
		return 0, 0, false
	}
	lo, err1 := strconv.ParseInt(a, 10, 64)
	hi, err2 := strconv.ParseInt(b, 10, 64)
	return lo, hi, err1 == nil && err2 == nil
}

// unbounded returns t with no limit on the number of elements, for
// parsing the operands of add and remove.
func unbounded(t *model.ColumnType) *model.ColumnType {
	c := *t
	c.Min, c.Max = 0, model.Unlimited
	return &c
}

// columnArg is a parsed "column[:key][op value]" argument.
type columnArg struct {
	col   *model.ColumnSchema
	key   string
	hasK  bool
	op    string
	value string
}

var findOps = []string{"{!=}", "{<=}", "{>=}", "{=}", "{<}", "{>}", "!=", "<=", ">=", "=", "<", ">"}

// parseColumnArg splits arg into column, optional key, operator and
// value. ops lists the allowed operators (nil: none, only a column).
func parseColumnArg(ts *model.TableSchema, arg string, ops []string) (*columnArg, error) {
	// The column name ends at ':' or at an operator.
	end := len(arg)
	for i := 0; i < len(arg); i++ {
		if arg[i] == ':' || strings.ContainsRune("=!<>{", rune(arg[i])) {
			end = i
			break
		}
	}
	col, err := findColumn(ts, arg[:end])
	if err != nil {
		return nil, err
	}
	ca := &columnArg{col: col}
	rest := arg[end:]
	if strings.HasPrefix(rest, ":") {
		rest = rest[1:]
		var key string
		if strings.HasPrefix(rest, `"`) {
			j := 1
			for ; j < len(rest) && rest[j] != '"'; j++ {
				if rest[j] == '\\' {
					j++
				}
			}
			if j >= len(rest) {
				return nil, fail("%s: quoted string extends past end of argument", rest)
			}
			if err := json.Unmarshal([]byte(rest[:j+1]), &key); err != nil {
				return nil, fail("%s: invalid quoted string", rest[:j+1])
			}
			rest = rest[j+1:]
		} else {
			k := len(rest)
			for i := 0; i < len(rest); i++ {
				if strings.ContainsRune("=!<>{:,[]} \t\n", rune(rest[i])) {
					k = i
					break
				}
			}
			key, rest = rest[:k], rest[k:]
		}
		ca.key, ca.hasK = key, true
	}
	if ops == nil {
		if rest != "" {
			return nil, fail("%s: trailing garbage \"%s\" in argument", arg, rest)
		}
		return ca, nil
	}
	for _, op := range ops {
		if strings.HasPrefix(rest, op) && len(rest) > len(op) {
			ca.op, ca.value = op, rest[len(op):]
			return ca, nil
		}
	}
	return nil, fail("%s: argument does not end in \"%s\" followed by a value.", arg, ops[len(ops)-1])
}

// findColumn matches a column name: exact, else a unique prefix.
func findColumn(ts *model.TableSchema, name string) (*model.ColumnSchema, error) {
	if c, ok := ts.Column(name); ok {
		return c, nil
	}
	var match *model.ColumnSchema
	for _, c := range ts.Columns {
		if strings.HasPrefix(c.Name, name) && name != "" {
			if match != nil {
				return nil, fail("%s contains more than one column whose name matches \"%s\"", ts.Name, name)
			}
			match = c
		}
	}
	if match == nil {
		return nil, fail("%s does not contain a column whose name matches \"%s\"", ts.Name, name)
	}
	return match, nil
}

// keyOf parses the key of a "column:key" argument.
func (p valueParser) keyOf(ca *columnArg) (model.Atom, error) {
	if !ca.col.Type.IsMap() {
		return nil, fail("cannot specify key to get for non-map column %s", ca.col.Name)
	}
	return p.parseAtom(&ca.col.Type.Key, ca.key)
}

func describeCount(n int, t *model.ColumnType) string {
	noun := "values"
	if t.IsMap() {
		noun = "pairs"
	}
	if n == 1 {
		noun = noun[:len(noun)-1]
	}
	return fmt.Sprintf("%d %s", n, noun)
}
