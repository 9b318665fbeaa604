package vsctl

import (
	"testing"
	"unicode/utf8"

	"github.com/gvs-project/gvs/ovsdb/model"
	"github.com/gvs-project/gvs/ovsdb/vswitch"
)

// columnType returns the type of a vswitch schema column.
func columnType(t testing.TB, table, column string) *model.ColumnType {
	t.Helper()
	s, err := vswitch.Schema()
	if err != nil {
		t.Fatal(err)
	}
	c, ok := s.Tables[table].Column(column)
	if !ok {
		t.Fatalf("no column %s.%s", table, column)
	}
	return &c.Type
}

func TestParseDatumFormatsAsOVSVsctl(t *testing.T) {
	cases := []struct {
		table, column, in, want string
	}{
		{"Bridge", "name", "br0", "br0"},
		{"Bridge", "name", `"a b"`, `"a b"`},
		{"Bridge", "datapath_type", `""`, `""`},
		{"Bridge", "fail_mode", "secure", "secure"},
		{"Bridge", "fail_mode", "[]", "[]"},
		{"Bridge", "protocols", "OpenFlow13", "[OpenFlow13]"},
		{"Bridge", "protocols", "OpenFlow14 OpenFlow13", "[OpenFlow13, OpenFlow14]"},
		{"Bridge", "protocols", "[OpenFlow14,OpenFlow13]", "[OpenFlow13, OpenFlow14]"},
		{"Bridge", "flood_vlans", "1-3,7", "[1, 2, 3, 7]"},
		{"Bridge", "other_config", "{b=2, a=1}", `{a="1", b="2"}`},
		{"Bridge", "other_config", "a=b,c=d", "{a=b, c=d}"},
		{"Bridge", "other_config", `{x="a b"}`, `{x="a b"}`},
		{"Bridge", "other_config", "{}", "{}"},
		{"Port", "tag", "4095", "4095"},
		{"Interface", "ofport_request", "[]", "[]"},
		{"Bridge", "stp_enable", "true", "true"},
		{"Bridge", "ports", "[]", "[]"},
		{"Bridge", "ports", "01234567-89ab-cdef-0123-456789abcdef", "[01234567-89ab-cdef-0123-456789abcdef]"},
	}
	for _, c := range cases {
		ct := columnType(t, c.table, c.column)
		d, err := valueParser{}.parseDatum(ct, c.in)
		if err != nil {
			t.Errorf("%s.%s=%s: %v", c.table, c.column, c.in, err)
			continue
		}
		if got := formatDatum(d, ct); got != c.want {
			t.Errorf("%s.%s=%s formats as %s, want %s", c.table, c.column, c.in, got, c.want)
		}
	}
}

func TestParseDatumRejectsAsOVSVsctl(t *testing.T) {
	cases := []struct {
		table, column, in, want string
	}{
		{"Bridge", "datapath_id", "00:11:22", `00:11:22: unexpected ":" parsing set of up to 1 strings`},
		{"Bridge", "datapath_type", "a b", "a b: 2 value(s) specified but the maximum number is 1"},
		{"Bridge", "datapath_type", "a=b", `a=b: unexpected "=" parsing string`},
		{"Bridge", "external_ids", "{x=a:b}", `{x=a:b}: unexpected ":" parsing map of (string, string) pairs`},
		{"Bridge", "external_ids", `{q="x y",r=[1]}`, `An empty string is not valid as input; use "" to represent the empty string`},
		{"Interface", "options", "{a=b,c}", `c}: syntax error at "}" expecting "="`},
		{"Interface", "options", "{a=b", `{a=b: missing "}" at end of data`},
		{"Bridge", "datapath_type", `"a`, `"a: quoted string extends past end of argument`},
		{"Interface", "ofport_request", "70000", "constraint violation: 70000 is not in the valid range 1 to 65279 (inclusive)"},
		{"Interface", "ofport_request", "abc", `"abc" is not a valid integer or range`},
		{"Bridge", "controller", "zz", `"zz" is not a valid UUID`},
		{"Bridge", "stp_enable", "True", `"True" is not a valid boolean (use "true" or "false")`},
		{"Port", "tag", "[1,2]", "[1,2]: 2 value(s) specified but the maximum number is 1"},
	}
	for _, c := range cases {
		_, err := valueParser{}.parseDatum(columnType(t, c.table, c.column), c.in)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s.%s=%s: error %v, want %q", c.table, c.column, c.in, err, c.want)
		}
	}
}

func TestParseColumnArgSplitsColumnKeyOperatorValue(t *testing.T) {
	s, err := vswitch.Schema()
	if err != nil {
		t.Fatal(err)
	}
	ts := s.Tables["Interface"]
	cases := []struct {
		in, col, key string
		hasKey       bool
		op, value    string
	}{
		{"type=dummy", "type", "", false, "=", "dummy"},
		{"options:peer=p1", "options", "peer", true, "=", "p1"},
		{`options:"a b"=c`, "options", "a b", true, "=", "c"},
		{"ofport_request!=5", "ofport_request", "", false, "!=", "5"},
		{"options{>=}{a=b}", "options", "", false, "{>=}", "{a=b}"},
		{"ofport_r<=3", "ofport_request", "", false, "<=", "3"},
	}
	for _, c := range cases {
		ca, err := parseColumnArg(ts, c.in, findOps)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if ca.col.Name != c.col || ca.key != c.key || ca.hasK != c.hasKey || ca.op != c.op || ca.value != c.value {
			t.Errorf("%s: got %s %q %v %s %q", c.in, ca.col.Name, ca.key, ca.hasK, ca.op, ca.value)
		}
	}
	for in, want := range map[string]string{
		"type=":         `type=: argument does not end in "=" followed by a value.`,
		"foo=1":         `Interface does not contain a column whose name matches "foo"`,
		"options:a b=c": `options:a b=c: argument does not end in "=" followed by a value.`,
	} {
		if _, err := parseColumnArg(ts, in, []string{"="}); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", in, err, want)
		}
	}
}

// FuzzParseDatum checks that no argument makes the value parser panic and
// that whatever it accepts formats to text it parses back to the same
// value.
func FuzzParseDatum(f *testing.F) {
	for _, s := range []string{"br0", `"a b"`, "[1,2]", "1-3", "{a=b, c=d}", "a=b,c=d", `{q="x y",r=[1]}`,
		"{a=b", "[]", "{}", "00:11:22", `"\u00e9\n"`, "@x", "01234567-89ab-cdef-0123-456789abcdef", "1.5", "true"} {
		f.Add(s)
	}
	types := []*model.ColumnType{
		columnType(f, "Bridge", "name"), columnType(f, "Bridge", "protocols"), columnType(f, "Bridge", "other_config"),
		columnType(f, "Bridge", "flood_vlans"), columnType(f, "Port", "tag"), columnType(f, "Bridge", "ports"),
		columnType(f, "Bridge", "stp_enable"), columnType(f, "Queue", "dscp"), columnType(f, "Interface", "statistics"),
		columnType(f, "Interface", "bfd_status"), columnType(f, "Controller", "max_backoff"),
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, ct := range types {
			d, err := valueParser{}.parseDatum(ct, s)
			if err != nil || !utf8.ValidString(s) {
				continue
			}
			text := formatDatum(d, ct)
			d2, err := valueParser{}.parseDatum(ct, text)
			if err != nil {
				t.Fatalf("%q parsed, formatted as %q, which does not parse: %v", s, text, err)
			}
			if !d.Equal(d2) {
				t.Fatalf("%q -> %q -> %v, want %v", s, text, d2, d)
			}
		}
	})
}

// FuzzParseColumnArg checks that no column argument makes the parser panic.
func FuzzParseColumnArg(f *testing.F) {
	for _, s := range []string{"type=dummy", "options:peer=p1", `options:"a`, "x{>=}y", ":", "=", "options:"} {
		f.Add(s)
	}
	s, err := vswitch.Schema()
	if err != nil {
		f.Fatal(err)
	}
	ts := s.Tables["Interface"]
	f.Fuzz(func(t *testing.T, arg string) {
		parseColumnArg(ts, arg, findOps)
		parseColumnArg(ts, arg, nil)
	})
}
