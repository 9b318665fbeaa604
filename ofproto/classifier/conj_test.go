package classifier

import (
	"fmt"
	"testing"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/ofproto/mf"
)

type conjTable struct {
	c     *Classifier[int]
	names map[*Rule[int]]string
}

func newConjTable(t *testing.T) *conjTable {
	return &conjTable{c: mustNew(t, Options{}), names: map[*Rule[int]]string{}}
}

func (ct *conjTable) add(t *testing.T, name string, m mf.Match, pri uint16, conj ...Conjunction) *Rule[int] {
	t.Helper()
	r := mustRule(t, m, pri, conj, len(ct.names))
	if err := ct.c.Insert(r, 0); err != nil {
		t.Fatal(err)
	}
	ct.names[r] = name
	return r
}

func (ct *conjTable) lookup(fl *mf.Flow, wc *mf.Flow) string {
	if r := ct.c.Lookup(0, fl, wc); r != nil {
		return ct.names[r]
	}
	return "miss"
}

func conjIDMatch(id uint32) mf.Match {
	var m mf.Match
	m.Flow.ConjID, m.Mask.ConjID = id, ^uint32(0)
	return m
}

func tcpFlow(src, dst uint32, dport uint16) mf.Flow {
	var f mf.Flow
	f.EthType, f.NwProto = flow.EthTypeIPv4, 6
	f.NwSrc, f.NwDst, f.TpSrc, f.TpDst = src, dst, 33333, dport
	return f
}

func cj(id uint32, k, n uint8) Conjunction { return Conjunction{ID: id, Clause: k - 1, NClauses: n} }

// The example of ovs-fields(7), "Conjunctive Match Fields", extended with
// the third dimension (tcp_dst) it describes.
func TestConjunctionOVSFieldsExample(t *testing.T) {
	ct := newConjTable(t)
	const pri = 32768
	ct.add(t, "conj_id=1234", conjIDMatch(1234), pri)
	ct.add(t, "drop", mf.Match{}, 0)
	for _, d := range []byte{1, 4, 6, 7} {
		ct.add(t, fmt.Sprintf("ip_src=10.0.0.%d", d), ipMatch(ip4(10, 0, 0, d), 0, 32, 0), pri, cj(1234, 1, 3))
	}
	for _, d := range []byte{2, 5, 7, 8} {
		ct.add(t, fmt.Sprintf("ip_dst=10.0.0.%d", d), ipMatch(0, ip4(10, 0, 0, d), 0, 32), pri, cj(1234, 2, 3))
	}
	for _, p := range []uint16{80, 443} {
		var m mf.Match
		m.Flow.EthType, m.Mask.EthType = flow.EthTypeIPv4, 0xffff
		m.Flow.NwProto, m.Mask.NwProto = 6, 0xff
		m.Flow.TpDst, m.Mask.TpDst = p, 0xffff
		ct.add(t, fmt.Sprintf("tcp_dst=%d", p), m, pri, cj(1234, 3, 3))
	}
	cases := []struct {
		src, dst byte
		port     uint16
		want     string
	}{
		{1, 2, 80, "conj_id=1234"},
		{7, 7, 443, "conj_id=1234"},
		{6, 8, 80, "conj_id=1234"},
		{2, 2, 80, "drop"}, // ip_src not in the set
		{1, 3, 80, "drop"}, // ip_dst not in the set
		{1, 2, 22, "drop"}, // tcp_dst not in the set
		{3, 3, 22, "drop"}, // nothing
		{4, 5, 443, "conj_id=1234"},
	}
	for _, tc := range cases {
		fl := tcpFlow(ip4(10, 0, 0, tc.src), ip4(10, 0, 0, tc.dst), tc.port)
		var wc mf.Flow
		if got := ct.lookup(&fl, &wc); got != tc.want {
			t.Errorf("10.0.0.%d -> 10.0.0.%d:%d = %s, want %s", tc.src, tc.dst, tc.port, got, tc.want)
		}
		if fl.ConjID != 0 {
			t.Fatalf("lookup changed the flow's conj_id")
		}
	}
}

// Two conjunctions at different priorities, a rule in two conjunctions,
// and soft matches that hide lower-priority rules with the same match, in
// the style of Open vSwitch's ofproto-dpif conjunctive-match tests.
func TestConjunctionPrioritiesAndFallback(t *testing.T) {
	ct := newConjTable(t)
	ct.add(t, "conj1", conjIDMatch(1), 10)
	ct.add(t, "conj2", conjIDMatch(2), 10)
	ct.add(t, "default", mf.Match{}, 0)
	// conjunction 1 at priority 5: src in {1,2} x dst in {1,2,3}
	ct.add(t, "s1", ipMatch(ip4(10, 0, 0, 1), 0, 32, 0), 5, cj(1, 1, 2))
	ct.add(t, "s2", ipMatch(ip4(10, 0, 0, 2), 0, 32, 0), 5, cj(1, 1, 2))
	for _, d := range []byte{1, 2, 3} {
		ct.add(t, "d", ipMatch(0, ip4(10, 0, 0, d), 0, 32), 5, cj(1, 2, 2))
	}
	// conjunction 2 at priority 4: src in {3,4} x dst in {5,6,7}; dst 3
	// also takes part through a rule carrying two conjunctions.
	ct.add(t, "s3", ipMatch(ip4(10, 0, 0, 3), 0, 32, 0), 4, cj(2, 1, 2))
	ct.add(t, "s4", ipMatch(ip4(10, 0, 0, 4), 0, 32, 0), 4, cj(2, 1, 2))
	ct.add(t, "d5", ipMatch(0, ip4(10, 0, 0, 5), 0, 32), 4, cj(2, 2, 2))
	ct.add(t, "d/24", ipMatch(0, ip4(10, 0, 0, 6), 0, 24), 4, cj(2, 2, 2), cj(3, 2, 2))
	// A hard rule under the priority-5 clause with the same match: it is
	// hidden while the clause is considered and wins when the conjunction
	// fails.
	ct.add(t, "hard-under-s1", ipMatch(ip4(10, 0, 0, 1), 0, 32, 0), 3)
	// A hard rule between the two conjunction priorities.
	ct.add(t, "hard-4.5", ipMatch(ip4(10, 0, 0, 9), 0, 32, 0), 4)
	cases := []struct {
		src, dst byte
		want     string
	}{
		{1, 1, "conj1"},
		{2, 3, "conj1"},
		{3, 5, "conj2"},
		{4, 7, "conj2"},         // dst 10.0.0.7 matches the /24 rule in conjunctions 2 and 3
		{1, 5, "hard-under-s1"}, // conjunction 1 lacks dst; the hidden rule wins
		{3, 1, "conj2"},         // the /24 clause of conjunction 2 covers 10.0.0.1
		{9, 1, "hard-4.5"},
		{5, 5, "default"},
	}
	for _, tc := range cases {
		fl := tcpFlow(ip4(10, 0, 0, tc.src), ip4(10, 0, 0, tc.dst), 80)
		var wc mf.Flow
		if got := ct.lookup(&fl, &wc); got != tc.want {
			t.Errorf("10.0.0.%d -> 10.0.0.%d = %s, want %s", tc.src, tc.dst, got, tc.want)
		}
	}
	// Conjunction 2 lacks a destination and conjunction 1 a source.
	fl := tcpFlow(ip4(10, 0, 0, 3), ip4(10, 0, 1, 1), 80)
	if got := ct.lookup(&fl, nil); got != "default" {
		t.Errorf("10.0.0.3 -> 10.0.1.1 = %s, want default", got)
	}
}

func TestNewRuleRejectsBadConjunctions(t *testing.T) {
	for _, c := range []Conjunction{{ID: 1, Clause: 2, NClauses: 2}, {ID: 1, Clause: 0, NClauses: 0}, {ID: 1, Clause: 0, NClauses: 65}} {
		if _, err := NewRule(&mf.Match{}, 1, []Conjunction{c}, 0); err == nil {
			t.Errorf("NewRule accepted %+v", c)
		}
	}
}
