package model

import (
	"encoding/json"
	"regexp"
	"testing"
	"unicode/utf8"
)

// FuzzDatumFromJSON decodes arbitrary bytes as JSON and parses them as a
// datum of several column types, then checks constraints. Nothing may
// panic; a \u0000 never decodes; a datum that passes its constraints
// holds only valid UTF-8 strings and re-encodes to JSON that parses back
// to an equal datum.
// nulEscape finds a \u0000 escape in JSON text: one preceded by an even
// number of backslashes (an escaped backslash followed by "u0000" is not).
var nulEscape = regexp.MustCompile(`(^|[^\\])(\\\\)*\\u0000`)

func FuzzDatumFromJSON(f *testing.F) {
	for _, s := range []string{
		`"abc"`,
		`"a\u0000b"`,
		"\"a\xffb\"",
		"\"a\xc3b\"",
		"\"\xed\xa0\x80\"",
		`"\udc00"`,
		`"\ud83d\ude00"`,
		`["map",[["k","v"],["k2","\u0001"]]]`,
		"[\"map\",[[\"k\",\"\xf4\x90\x80\x80\"]]]",
		`["set",["a","b","a"]]`,
		`["set",[1,2,3]]`,
		`["uuid","5a7b23dd-c3b0-4f29-8b2e-9466beb79de0"]`,
		`["map",[[1,"x"],[2,"y"]]]`,
		`12`, `-0.5e3`, `true`, `[[[[`, `{"a":`,
	} {
		f.Add([]byte(s))
	}
	var types []ColumnType
	for _, js := range []string{
		`"string"`,
		`{"key":"string","min":0,"max":"unlimited"}`,
		`{"key":"string","value":"string","min":0,"max":"unlimited"}`,
		`{"key":{"type":"string","minLength":1,"maxLength":3}}`,
		`{"key":"integer","value":"string","min":0,"max":"unlimited"}`,
		`{"key":{"type":"string","enum":["set",["a","b"]]},"min":0,"max":2}`,
		`"uuid"`, `"real"`, `"boolean"`,
	} {
		v, err := DecodeJSON([]byte(js))
		if err != nil {
			f.Fatal(err)
		}
		ct, err := ParseColumnType(v)
		if err != nil {
			f.Fatalf("%s: %v", js, err)
		}
		types = append(types, ct)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := DecodeJSON(data)
		if err != nil {
			return
		}
		if nulEscape.MatchString(JSONText(v)) {
			t.Fatalf("%q decoded with a NUL", data)
		}
		for i := range types {
			ct := &types[i]
			d, perr := DatumFromJSON(ct, v, nil)
			if perr != nil || d.CheckConstraints(ct) != nil {
				continue
			}
			for j, k := range d.Keys {
				for _, a := range []Atom{k, valueAt(d, j)} {
					if s, ok := a.(string); ok && !utf8.ValidString(s) {
						t.Fatalf("%q: invalid UTF-8 %q passed the constraints", data, s)
					}
				}
			}
			enc := d.AppendJSON(nil, ct)
			v2, err := DecodeJSON(enc)
			if err != nil {
				t.Fatalf("%s: re-encoded %s does not decode: %v", data, enc, err)
			}
			d2, perr := DatumFromJSON(ct, v2, nil)
			if perr != nil || !d.Equal(d2) {
				t.Fatalf("%s: round trip %s gave %v, %v", data, enc, d2, perr)
			}
		}
	})
}

func valueAt(d Datum, i int) Atom {
	if i < len(d.Values) {
		return d.Values[i]
	}
	return nil
}

// TestDecodeJSONKeepsBytesAndRefusesNul: strings keep their bytes
// (invalid UTF-8 included, for the constraint check to refuse) and an
// unpaired trailing surrogate escape its three bytes, as Open vSwitch's
// parser; \u0000 is refused.
func TestDecodeJSONKeepsBytesAndRefusesNul(t *testing.T) {
	for in, want := range map[string]string{
		"\"a\xffb\"":       "a\xffb",
		`"\udc00x"`:        "\xed\xb0\x80x",
		`"\ud83d\ude00"`:   "\U0001F600",
		`"\u00e9\n\"\\\/"`: "é\n\"\\/",
		"\"\xe2\x82\xac\"": "€",
	} {
		v, err := DecodeJSON([]byte(in))
		if err != nil || v != want {
			t.Errorf("DecodeJSON(%q) = %q, %v; want %q", in, v, err, want)
		}
	}
	for _, in := range []string{`"a\u0000"`, "\"a\x01\"", `"\ud800"`, `"\ud800\u0041"`, `[1,]`, `01`, `{"a" 1}`, `"x" "y"`} {
		if v, err := DecodeJSON([]byte(in)); err == nil {
			t.Errorf("DecodeJSON(%q) = %q, want an error", in, v)
		}
	}
	var n json.Number
	if v, _ := DecodeJSON([]byte(`-1.5e3`)); v != any(json.Number("-1.5e3")) {
		t.Errorf("number decoded as %#v (%T)", v, n)
	}
}

// TestStringConstraintNamesTheInvalidUTF8Bytes uses ovsdb-server's
// words ("not a valid UTF-8 string: invalid UTF-8 sequence 0xc3 0x62").
func TestStringConstraintNamesTheInvalidUTF8Bytes(t *testing.T) {
	bt := BaseType{Type: TypeString, MaxLength: 1 << 30}
	for in, want := range map[string]string{
		"a\xffb":           "invalid UTF-8 sequence 0xff",
		"a\xc3b":           "invalid UTF-8 sequence 0xc3 0x62",
		"\xc3":             "invalid UTF-8 sequence 0xc3 0x00",
		"\xe0\x80\x80":     "invalid UTF-8 sequence 0xe0 0x80",
		"\xed\xa0\x80":     "invalid UTF-8 sequence 0xed 0xa0",
		"\xf4\x90\x80\x80": "invalid UTF-8 sequence 0xf4 0x90",
		"\xe2\x82x":        "invalid UTF-8 sequence 0xe2 0x82 0x78",
	} {
		err := bt.CheckAtom(in)
		if err == nil || err.Name != ErrConstraint || err.Details != "not a valid UTF-8 string: "+want {
			t.Errorf("CheckAtom(%q) = %v, want %q", in, err, want)
		}
	}
	if err := bt.CheckAtom("é€\U0001F600"); err != nil {
		t.Errorf("valid UTF-8 refused: %v", err)
	}
}
