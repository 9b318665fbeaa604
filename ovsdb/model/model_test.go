package model

import (
	"strings"
	"testing"
)

func mustType(t *testing.T, js string) ColumnType {
	t.Helper()
	v, err := DecodeJSON([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	ct, err := ParseColumnType(v)
	if err != nil {
		t.Fatal(err)
	}
	return ct
}

func parse(t *testing.T, ct *ColumnType, js string) (Datum, *Error) {
	t.Helper()
	v, err := DecodeJSON([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return DatumFromJSON(ct, v, func(name string) UUID { return UUID{1} })
}

func TestDatumJSONRoundTripsInOVSDBForm(t *testing.T) {
	tests := []struct {
		typ, in, out string
	}{
		{`"integer"`, `5`, `5`},
		{`"real"`, `1.5`, `1.5`},
		{`"real"`, `2`, `2`},
		{`"boolean"`, `true`, `true`},
		{`"string"`, `"a\"b<"`, `"a\"b<"`},
		{`{"key":"string","min":0,"max":"unlimited"}`, `["set",["b","a"]]`, `["set",["a","b"]]`},
		{`{"key":"string","min":0,"max":"unlimited"}`, `["set",["a"]]`, `"a"`},
		{`{"key":"string","min":0,"max":"unlimited"}`, `"a"`, `"a"`},
		{`{"key":"string","min":0,"max":1}`, `["set",[]]`, `["set",[]]`},
		{`{"key":"string","value":"integer","min":0,"max":"unlimited"}`, `["map",[["z",1],["a",2]]]`, `["map",[["a",2],["z",1]]]`},
		{`{"key":"uuid","min":0,"max":"unlimited"}`, `["uuid","5a7b23dd-c3b0-4f29-8b2e-9466beb79de0"]`, `["uuid","5a7b23dd-c3b0-4f29-8b2e-9466beb79de0"]`},
		{`{"key":"uuid"}`, `["named-uuid","x"]`, `["uuid","01000000-0000-0000-0000-000000000000"]`},
	}
	for _, tc := range tests {
		ct := mustType(t, tc.typ)
		d, err := parse(t, &ct, tc.in)
		if err != nil {
			t.Errorf("%s %s: %v", tc.typ, tc.in, err)
			continue
		}
		if got := string(d.AppendJSON(nil, &ct)); got != tc.out {
			t.Errorf("%s %s => %s, want %s", tc.typ, tc.in, got, tc.out)
		}
	}
}

func TestDatumFromJSONRejectsLikeOVSDBServer(t *testing.T) {
	tests := []struct {
		typ, in, name, details string
	}{
		{`"string"`, `5`, ErrSyntax, "expected string"},
		{`"integer"`, `1.5`, ErrSyntax, "expected integer"},
		{`{"key":"string","min":0,"max":1}`, `["set",["a","b"]]`, ErrSyntax, "set must have 0 to 1 members but 2 are present"},
		{`"string"`, `["set",["a","b"]]`, ErrSyntax, "set must have exactly one member but 2 are present"},
		{`{"key":"string","value":"string","min":0,"max":"unlimited"}`, `["map",[["a","b"],["a","c"]]]`, ErrGeneric, "map contains duplicate key"},
		{`{"key":"uuid"}`, `["uuid","nope"]`, ErrSyntax, `"nope" is not a valid UUID`},
	}
	for _, tc := range tests {
		ct := mustType(t, tc.typ)
		_, err := parse(t, &ct, tc.in)
		if err == nil || err.Name != tc.name || err.Details != tc.details {
			t.Errorf("%s %s: got %v, want %s: %s", tc.typ, tc.in, err, tc.name, tc.details)
		}
	}
}

func TestConstraintsWordedLikeOVSDBServer(t *testing.T) {
	tests := []struct {
		typ, in, details string
	}{
		{`{"key":{"type":"integer","minInteger":1,"maxInteger":65279}}`, `0`, "0 is not in the valid range 1 to 65279 (inclusive)"},
		{`{"key":{"type":"integer","minInteger":1}}`, `0`, "0 is less than minimum allowed value 1"},
		{`{"key":{"type":"string","enum":["set",["secure","standalone"]]}}`, `"bogus"`, "bogus is not one of the allowed values ([secure, standalone])"},
		{`{"key":{"type":"string","enum":["set",["a","b"]]}}`, `""`, `"" is not one of the allowed values ([a, b])`},
		{`{"key":{"type":"string","maxLength":2}}`, `"abc"`, `"abc" length 3 is greater than maximum allowed length 2`},
	}
	for _, tc := range tests {
		ct := mustType(t, tc.typ)
		d, perr := parse(t, &ct, tc.in)
		if perr != nil {
			t.Fatal(perr)
		}
		err := d.CheckConstraints(&ct)
		if err == nil || err.Name != ErrConstraint || err.Details != tc.details {
			t.Errorf("%s %s: got %v, want %s", tc.typ, tc.in, err, tc.details)
		}
	}
}

func TestDiffThenApplyDiffRestoresNew(t *testing.T) {
	tests := []struct{ typ, old, new, diff string }{
		{`{"key":"string","value":"string","min":0,"max":"unlimited"}`,
			`["map",[["a","1"],["b","2"],["c","3"]]]`, `["map",[["a","1"],["b","9"],["d","4"]]]`,
			`["map",[["b","9"],["c","3"],["d","4"]]]`},
		{`{"key":"integer","min":0,"max":"unlimited"}`, `["set",[1,2,3]]`, `["set",[2,3,4]]`, `["set",[1,4]]`},
		{`{"key":"string","min":0,"max":1}`, `"a"`, `"b"`, `"b"`},
		{`{"key":"string","min":0,"max":1}`, `"a"`, `["set",[]]`, `["set",[]]`},
		{`{"key":"string","min":0,"max":2}`, `"a"`, `"b"`, `["set",["a","b"]]`},
		{`"string"`, `"a"`, `"b"`, `"b"`},
	}
	for _, tc := range tests {
		ct := mustType(t, tc.typ)
		o, _ := parse(t, &ct, tc.old)
		n, _ := parse(t, &ct, tc.new)
		d := Diff(&ct, o, n)
		if got := string(d.AppendJSON(nil, &ct)); got != tc.diff {
			t.Errorf("Diff(%s, %s) = %s, want %s", tc.old, tc.new, got, tc.diff)
		}
		if got := ApplyDiff(&ct, o, d); !got.Equal(n) {
			t.Errorf("ApplyDiff(%s, %s) = %s, want %s", tc.old, tc.diff, got.AppendJSON(nil, &ct), tc.new)
		}
	}
}

type fakeRow map[string]Datum

func (r fakeRow) Get(c *ColumnSchema) Datum { return r[c.Name] }

func testSchema(t *testing.T) *TableSchema {
	t.Helper()
	s, err := ParseSchema([]byte(`{"name":"T","version":"1.0.0","tables":{"t":{"columns":{
		"n":{"type":"integer"},
		"s":{"type":{"key":"string","min":0,"max":"unlimited"}},
		"m":{"type":{"key":"string","value":"string","min":0,"max":"unlimited"}},
		"o":{"type":{"key":"integer","min":0,"max":1}},
		"k":{"type":"string","mutable":false}},"isRoot":true,"indexes":[["k"]]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	return s.Tables["t"]
}

func TestConditionsEvaluate(t *testing.T) {
	ts := testSchema(t)
	row := fakeRow{
		"n": Scalar(int64(5)),
		"s": Datum{Keys: []Atom{"a", "b"}},
		"m": Datum{Keys: []Atom{"x"}, Values: []Atom{"1"}},
		"o": Datum{Keys: []Atom{}},
	}
	tests := []struct {
		where string
		want  bool
	}{
		{`[["n","==",5]]`, true},
		{`[["n","<",5]]`, false},
		{`[["n",">=",5],["n","<=",5]]`, true},
		{`[["s","includes","a"]]`, true},
		{`[["s","includes",["set",["a","c"]]]]`, false},
		{`[["s","excludes",["set",["c"]]]]`, true},
		{`[["s","==",["set",["b","a"]]]]`, true},
		{`[["m","includes",["map",[["x","1"]]]]]`, true},
		{`[["m","includes",["map",[["x","2"]]]]]`, false},
		{`[["m","excludes",["map",[["x","2"]]]]]`, true},
		{`[["o","<",3]]`, false},
		{`[["o","==",["set",[]]]]`, true},
		{`[true]`, true},
		{`[false]`, false},
	}
	for _, tc := range tests {
		v, _ := DecodeJSON([]byte(tc.where))
		conds, err := ParseConditions(ts, v, nil)
		if err != nil {
			t.Errorf("%s: %v", tc.where, err)
			continue
		}
		if got := Match(conds, row); got != tc.want {
			t.Errorf("%s = %v, want %v", tc.where, got, tc.want)
		}
	}
	v, _ := DecodeJSON([]byte(`[["s","<","a"]]`))
	if _, err := ParseConditions(ts, v, nil); err == nil || err.Name != ErrSyntax {
		t.Errorf("< on a set: %v, want syntax error", err)
	}
}

func TestMutationsApply(t *testing.T) {
	ts := testSchema(t)
	base := fakeRow{
		"n": Scalar(int64(7)),
		"s": Datum{Keys: []Atom{"a", "b"}},
		"m": Datum{Keys: []Atom{"x", "y"}, Values: []Atom{"1", "2"}},
	}
	tests := []struct{ mut, col, want string }{
		{`[["n","+=",3]]`, "n", `10`},
		{`[["n","%=",4]]`, "n", `3`},
		{`[["s","insert",["set",["c","a"]]]]`, "s", `["set",["a","b","c"]]`},
		{`[["s","delete","a"]]`, "s", `"b"`},
		{`[["m","insert",["map",[["x","9"],["z","3"]]]]]`, "m", `["map",[["x","1"],["y","2"],["z","3"]]]`},
		{`[["m","delete",["map",[["x","9"],["y","2"]]]]]`, "m", `["map",[["x","1"]]]`},
		{`[["m","delete",["set",["x"]]]]`, "m", `["map",[["y","2"]]]`},
	}
	for _, tc := range tests {
		v, _ := DecodeJSON([]byte(tc.mut))
		muts, err := ParseMutations(ts, v, nil)
		if err != nil {
			t.Errorf("%s: %v", tc.mut, err)
			continue
		}
		c, _ := ts.Column(tc.col)
		d, err := muts[0].Apply(base[tc.col])
		if err != nil {
			t.Errorf("%s: %v", tc.mut, err)
			continue
		}
		if got := string(d.AppendJSON(nil, &c.Type)); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.mut, got, tc.want)
		}
	}
	errs := []struct{ mut, name string }{
		{`[["n","/=",0]]`, ErrDomain},
		{`[["k","insert","x"]]`, ErrConstraint},
		{`[["s","+=",1]]`, ErrSyntax},
		{`[["nope","+=",1]]`, ErrSyntax},
	}
	for _, tc := range errs {
		v, _ := DecodeJSON([]byte(tc.mut))
		muts, err := ParseMutations(ts, v, nil)
		if err == nil {
			_, err = muts[0].Apply(base["n"])
		}
		if err == nil || err.Name != tc.name {
			t.Errorf("%s: %v, want %s", tc.mut, err, tc.name)
		}
	}
}

func TestUUIDParseFormat(t *testing.T) {
	s := "5a7b23dd-c3b0-4f29-8b2e-9466beb79de0"
	u, err := ParseUUID(s)
	if err != nil || u.String() != s {
		t.Fatalf("ParseUUID(%s) = %v, %v", s, u, err)
	}
	for _, bad := range []string{"", "5a7b23dd-c3b0-4f29-8b2e-9466beb79de", "5a7b23ddxc3b0-4f29-8b2e-9466beb79de0", "ga7b23dd-c3b0-4f29-8b2e-9466beb79de0"} {
		if _, err := ParseUUID(bad); err == nil {
			t.Errorf("ParseUUID(%q) accepted", bad)
		}
	}
	n := NewUUID()
	if n.String()[14] != '4' || !strings.ContainsRune("89ab", rune(n.String()[19])) {
		t.Errorf("NewUUID %s is not version 4", n)
	}
}

func TestParseVswitchLikeSchema(t *testing.T) {
	ts := testSchema(t)
	if len(ts.Columns) != 5 || ts.Columns[0].Name != "k" || ts.Columns[0].Mutable || !ts.IsRoot {
		t.Errorf("columns %v", ts.Columns)
	}
	if len(ts.Indexes) != 1 || ts.Indexes[0][0] != 0 {
		t.Errorf("indexes %v", ts.Indexes)
	}
	if _, err := ParseSchema([]byte(`{"name":"x","tables":{"t":{"columns":{"r":{"type":{"key":{"type":"uuid","refTable":"missing"}}}}}}}`)); err == nil {
		t.Error("schema with dangling refTable accepted")
	}
}
