package flow

import "testing"

// FuzzParse checks that ParseMatch never panics and that what it accepts
// prints in a form that parses back to the same match: exactly (up to the
// VLAN CFI mask the text cannot show) for the verbose form, and up to the
// key bits under a zero mask (and wildcarded Geneve option lengths) for
// the terse form. Seeds are the golden
// dump-flows lines (testdata/fuzz/FuzzParse holds further corpus entries).
func FuzzParse(f *testing.F) {
	for _, name := range []string{"terse.txt", "verbose.txt"} {
		for _, l := range goldenFlows(f, name) {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		m1, err := ParseMatch(s)
		if err != nil {
			return
		}
		v1 := m1.Format(true)
		m2, err := ParseMatch(v1)
		if err != nil {
			t.Fatalf("verbose form does not parse: %v\ninput:   %q\nverbose: %s", err, s, v1)
		}
		if canonCFIMask(m2) != canonCFIMask(m1) {
			t.Fatalf("verbose round trip changed the match\ninput:   %q\nverbose: %s\nagain:   %s", s, v1, m2.Format(true))
		}
		t1 := m1.Format(false)
		m3, err := ParseMatch(t1)
		if err != nil {
			t.Fatalf("terse form does not parse: %v\ninput: %q\nterse: %s", err, s, t1)
		}
		if t3 := m3.Format(false); t3 != t1 {
			t.Fatalf("terse form is not a fixed point\ninput: %q\nterse: %s\nagain: %s", s, t1, t3)
		}
		m1.Normalize()
		m3.Normalize()
		if canonTerse(m1) != canonTerse(m3) {
			t.Fatalf("terse round trip changed the masked match\ninput: %q\nterse: %s", s, t1)
		}
	})
}

// canonTerse drops what the terse form cannot show even under a non-zero
// mask: the CFI mask (see canonCFIMask) and the length of Geneve options
// whose len= is wildcarded ("{}").
func canonTerse(m Match) Match {
	m = canonCFIMask(m)
	m.Key.TunMeta, m.Mask.TunMeta = [len(m.Key.TunMeta)]byte{}, [len(m.Mask.TunMeta)]byte{}
	m.Key.TunMetaPresent, m.Mask.TunMetaPresent = 0, 0
	return m
}
