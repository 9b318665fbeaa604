package ofswitch

import (
	"testing"
)

func TestParseSubfieldReadsGroupsColumnSyntax(t *testing.T) {
	for _, c := range []struct {
		in         string
		field      string
		ofs, nbits int
	}{
		{"NXM_OF_IN_PORT[]", "in_port", 0, 16},
		{"NXM_OF_ETH_SRC[8..15]", "eth_src", 8, 8},
		{"NXM_NX_REG0[3]", "reg0", 3, 1},
		{"in_port", "in_port", 0, 16},
	} {
		sf, err := parseSubfield(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if sf.Field.Name != c.field || sf.Ofs != c.ofs || sf.NBits != c.nbits {
			t.Errorf("%s: got %s[%d+%d], want %s[%d+%d]", c.in, sf.Field.Name, sf.Ofs, sf.NBits, c.field, c.ofs, c.nbits)
		}
	}
	for _, bad := range []string{"NXM_NO_SUCH[]", "NXM_OF_IN_PORT[16]", "NXM_OF_IN_PORT[3..1]", "NXM_OF_IN_PORT[x]", "NXM_OF_IN_PORT[1"} {
		if _, err := parseSubfield(bad); err == nil {
			t.Errorf("%s: parsed", bad)
		}
	}
}

func TestTableNameOVSDBOverridesOpenFlowAndUnsetsOnlyItsOwn(t *testing.T) {
	var n tableNameCfg
	n.set("xyzzy", nameLevelOpenFlow)
	n.set("zero", nameLevelOVSDB)
	n.set("other", nameLevelOpenFlow) // ignored: OVSDB set it
	if n.name != "zero" {
		t.Fatalf("name %q, want zero", n.name)
	}
	n.set("", nameLevelOVSDB)
	if n.name != "" || n.level != 0 {
		t.Fatalf("after OVSDB unset: %+v", n)
	}
	n.set("foobar", nameLevelOpenFlow)
	n.set("", nameLevelOVSDB) // OVSDB never named it: keeps OpenFlow's
	if n.name != "foobar" {
		t.Fatalf("name %q, want foobar", n.name)
	}
}

func FuzzParseSubfield(f *testing.F) {
	for _, s := range []string{"NXM_OF_IN_PORT[]", "NXM_OF_ETH_SRC[8..15]", "reg0[3]", "in_port", "x[", "reg0[..]", "reg0[-1..2]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sf, err := parseSubfield(s)
		if err != nil {
			return
		}
		if sf.Ofs < 0 || sf.NBits < 1 || sf.Ofs+sf.NBits > sf.Field.Bits {
			t.Fatalf("%q: bits %d+%d outside %d-bit field", s, sf.Ofs, sf.NBits, sf.Field.Bits)
		}
	})
}
