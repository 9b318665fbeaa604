package classifier

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/ofproto/mf"
)

func mustNew(t testing.TB, opts Options) *Classifier[int] {
	t.Helper()
	c, err := New[int](opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustRule(t testing.TB, m mf.Match, pri uint16, conj []Conjunction, id int) *Rule[int] {
	t.Helper()
	r, err := NewRule(&m, pri, conj, id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func desc(r *Rule[int]) string {
	if r == nil {
		return "<nil>"
	}
	return fmt.Sprintf("rule %d (pri %d, conj %v)", r.Payload, r.priority, r.conj)
}

func descAll(rs []*Rule[int]) string {
	var s []string
	for _, r := range rs {
		s = append(s, desc(r))
	}
	return fmt.Sprint(s)
}

// checkAgainstRef looks up n random flows in c and checks each result, and
// the megaflow property of its wildcards, against the naive model.
func checkAgainstRef(t *testing.T, c *Classifier[int], rf *ref, g *gen, n int, maxVersion Version) {
	t.Helper()
	ruleBits := rf.ruleBits()
	for i := range n {
		fl := g.flow()
		v := Version(g.pick(int(maxVersion) + 1))
		want := rf.candidates(v, &fl, true)
		if got := c.Lookup(v, &fl, nil); !validResult(got, want) {
			t.Fatalf("flow %d version %d: lookup without wildcards = %s, want one of %s", i, v, desc(got), descAll(want))
		}
		var wc mf.Flow
		got := c.Lookup(v, &fl, &wc)
		if !validResult(got, want) {
			t.Fatalf("flow %d version %d: lookup = %s, want one of %s", i, v, desc(got), descAll(want))
		}
		// The megaflow (fl & wc) must select the same rule for every flow
		// in it.
		for j := range 30 {
			o := g.around(&fl, &wc, ruleBits)
			if w := rf.candidates(v, &o, true); !validResult(got, w) {
				t.Fatalf("flow %d version %d probe %d: megaflow of %s also covers a flow whose result is %s\nwc=%+v\nflow=%+v\nprobe=%+v",
					i, v, j, desc(got), descAll(w), wc, fl, o)
			}
		}
	}
}

func validResult(got *Rule[int], want []*Rule[int]) bool {
	if got == nil {
		return len(want) == 0
	}
	return slices.Contains(want, got)
}

func TestLookupMatchesNaiveModelWithMegaflowProperty(t *testing.T) {
	for _, prefixes := range [][]string{nil, {"none"}, {"ip_src"}, {"ipv6_dst", "ip_dst", "tun_id"}} {
		t.Run(fmt.Sprint(prefixes), func(t *testing.T) {
			for seed := range uint64(6) {
				g := &gen{rng: rand.New(rand.NewPCG(seed, 77))}
				c := mustNew(t, Options{PrefixFields: prefixes})
				rf := &ref{}
				for id := range 150 + g.pick(300) {
					m := g.match()
					r := mustRule(t, m, uint16(g.pick(40)), nil, id)
					if err := c.Insert(r, Version(g.pick(3))); err != nil {
						if errors.Is(err, ErrDuplicate) {
							continue
						}
						t.Fatal(err)
					}
					rf.rules = append(rf.rules, r)
					if g.pick(5) == 0 {
						if err := c.Remove(r, r.AddVersion()+Version(g.pick(3))); err != nil {
							t.Fatal(err)
						}
					}
				}
				checkAgainstRef(t, c, rf, g, 300, 4)
				// Delete a third of the rules and check again.
				for i := 0; i < len(rf.rules); {
					if g.pick(3) == 0 {
						if err := c.Delete(rf.rules[i]); err != nil {
							t.Fatal(err)
						}
						rf.rules = slices.Delete(rf.rules, i, i+1)
						continue
					}
					i++
				}
				if c.Count() != len(rf.rules) {
					t.Fatalf("Count = %d, want %d", c.Count(), len(rf.rules))
				}
				checkAgainstRef(t, c, rf, g, 200, 4)
			}
		})
	}
}

func TestSetPrefixFieldsKeepsResults(t *testing.T) {
	g := &gen{rng: rand.New(rand.NewPCG(9, 9))}
	c := mustNew(t, Options{})
	rf := &ref{}
	for id := range 300 {
		r := mustRule(t, g.match(), uint16(g.pick(40)), nil, id)
		if c.Insert(r, 0) == nil {
			rf.rules = append(rf.rules, r)
		}
	}
	for _, p := range [][]string{{"ip_src", "ip_dst", "ipv6_dst"}, {}, {"tun_id"}, DefaultPrefixFields} {
		if err := c.SetPrefixFields(p...); err != nil {
			t.Fatal(err)
		}
		checkAgainstRef(t, c, rf, g, 100, 0)
	}
	if got := c.PrefixFields(); !slices.Equal(got, []string{"ip_dst", "ip_src"}) {
		t.Fatalf("PrefixFields = %v", got)
	}
	for _, bad := range [][]string{{"eth_src"}, {"ip_src", "nw_src"}, {"ip_src", "ip_dst", "ipv6_src", "ipv6_dst"}} {
		if err := c.SetPrefixFields(bad...); !errors.Is(err, ErrPrefixFields) {
			t.Errorf("SetPrefixFields(%v) = %v, want ErrPrefixFields", bad, err)
		}
	}
}

func TestConjunctiveRandomAgainstNaiveModel(t *testing.T) {
	conjHits := 0
	defer func() {
		// The random flows must actually reach conjunctive results.
		if conjHits == 0 {
			t.Errorf("no lookup resolved through a conjunction")
		}
	}()
	for seed := range uint64(8) {
		g := &gen{rng: rand.New(rand.NewPCG(seed, 3))}
		c := mustNew(t, Options{})
		rf := &ref{}
		add := func(r *Rule[int]) {
			if err := c.Insert(r, 0); err == nil {
				rf.rules = append(rf.rules, r)
			}
		}
		id := 0
		for range 100 {
			id++
			add(mustRule(t, g.match(), uint16(g.pick(20)), nil, id))
		}
		// Two-dimensional conjunctions on ip_src and tp_dst, and the
		// conj_id flows they lead to.
		for conj := uint32(1); conj <= 3; conj++ {
			pri := uint16(10 + g.pick(15))
			for range 3 {
				var m mf.Match
				m.Flow.EthType, m.Mask.EthType = flow.EthTypeIPv4, 0xffff
				m.Flow.NwSrc, m.Mask.NwSrc = g.ip(), ^uint32(0)
				id++
				add(mustRule(t, m, pri, []Conjunction{{ID: conj, Clause: 0, NClauses: 2}}, id))
				var m2 mf.Match
				m2.Flow.EthType, m2.Mask.EthType = flow.EthTypeIPv4, 0xffff
				m2.Flow.NwProto, m2.Mask.NwProto = 6, 0xff
				m2.Flow.TpDst, m2.Mask.TpDst = g.port(), 0xffff
				id++
				add(mustRule(t, m2, pri, []Conjunction{{ID: conj, Clause: 1, NClauses: 2}}, id))
			}
			var cm mf.Match
			cm.Flow.ConjID, cm.Mask.ConjID = conj, ^uint32(0)
			id++
			add(mustRule(t, cm, uint16(g.pick(30)), nil, id))
		}
		checkAgainstRef(t, c, rf, g, 400, 0)
		for range 400 {
			fl := g.flow()
			if r := c.Lookup(0, &fl, nil); r != nil && r.Match().Mask.ConjID != 0 {
				conjHits++
			}
		}
	}
}

func ipMatch(src, dst uint32, srcLen, dstLen int) mf.Match {
	var m mf.Match
	m.Flow.EthType, m.Mask.EthType = flow.EthTypeIPv4, 0xffff
	m.Flow.NwSrc, m.Mask.NwSrc = src&prefix32(srcLen), prefix32(srcLen)
	m.Flow.NwDst, m.Mask.NwDst = dst&prefix32(dstLen), prefix32(dstLen)
	return m
}

func ip4(a, b, c, d byte) uint32 { return uint32(a)<<24 | uint32(b)<<16 | uint32(c)<<8 | uint32(d) }

func TestVersionedInsertAndRemoveAreInvisibleUntilTheirVersion(t *testing.T) {
	c := mustNew(t, Options{})
	old := mustRule(t, ipMatch(0, ip4(10, 0, 0, 0), 0, 8), 100, nil, 1)
	if err := c.Insert(old, 1); err != nil {
		t.Fatal(err)
	}
	c.Publish(1)
	// A bundle replaces the rule at version 2 and adds another.
	repl := mustRule(t, ipMatch(0, ip4(10, 0, 0, 0), 0, 8), 100, nil, 2)
	extra := mustRule(t, ipMatch(ip4(192, 168, 0, 1), 0, 32, 0), 200, nil, 3)
	if err := c.Remove(old, 2); err != nil {
		t.Fatal(err)
	}
	if err := c.Insert(repl, 2); err != nil {
		t.Fatalf("insert of a replacement for a rule scheduled for removal: %v", err)
	}
	if err := c.Insert(extra, 2); err != nil {
		t.Fatal(err)
	}
	fl := mf.Flow{}
	fl.EthType, fl.NwSrc, fl.NwDst = flow.EthTypeIPv4, ip4(192, 168, 0, 1), ip4(10, 1, 2, 3)
	cases := []struct {
		v    Version
		want int
	}{{0, 0}, {1, 1}, {2, 3}, {3, 3}}
	for _, tc := range cases {
		got := c.Lookup(tc.v, &fl, nil)
		gotID := 0
		if got != nil {
			gotID = got.Payload
		}
		if gotID != tc.want {
			t.Errorf("version %d: got rule %d, want %d", tc.v, gotID, tc.want)
		}
	}
	// Without extra, version 2 sees the replacement.
	if err := c.Remove(extra, 2); err != nil {
		t.Fatal(err)
	}
	if got := c.Lookup(2, &fl, nil); got != repl {
		t.Errorf("version 2 after removing extra: got %s, want the replacement", desc(got))
	}
	// Abort: the old rule comes back, the replacement goes away.
	c.RestoreVisibility(old)
	if err := c.Remove(repl, repl.AddVersion()); err != nil {
		t.Fatal(err)
	}
	if got := c.Lookup(2, &fl, nil); got != old {
		t.Errorf("after abort: got %s, want the old rule", desc(got))
	}
	if n := len(c.Sweep(2)); n != 2 || c.Count() != 1 {
		t.Errorf("Sweep deleted %d rules, %d left; want 2 deleted, 1 left", n, c.Count())
	}
	if got := c.FindExact(ptr(ipMatch(0, ip4(10, 0, 0, 0), 0, 8)), 100, 5); got != old {
		t.Errorf("FindExact = %s, want the old rule", desc(got))
	}
	if err := c.Remove(old, 0); !errors.Is(err, ErrBadVersion) {
		t.Errorf("Remove before add version = %v, want ErrBadVersion", err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestInsertRejectsDuplicatesAndReplaceSwapsThem(t *testing.T) {
	c := mustNew(t, Options{})
	a := mustRule(t, ipMatch(ip4(1, 2, 3, 4), 0, 32, 0), 5, nil, 1)
	b := mustRule(t, ipMatch(ip4(1, 2, 3, 4), 0, 32, 0), 5, nil, 2)
	if err := c.Insert(a, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Insert(a, 0); !errors.Is(err, ErrInserted) {
		t.Errorf("second Insert of the same rule = %v, want ErrInserted", err)
	}
	if err := c.Insert(b, 0); !errors.Is(err, ErrDuplicate) {
		t.Errorf("Insert of an identical rule = %v, want ErrDuplicate", err)
	}
	old, err := c.Replace(b, 0)
	if err != nil || old != a {
		t.Fatalf("Replace = %s, %v; want the first rule", desc(old), err)
	}
	fl := mf.Flow{}
	fl.EthType, fl.NwSrc = flow.EthTypeIPv4, ip4(1, 2, 3, 4)
	if got := c.Lookup(0, &fl, nil); got != b || c.Count() != 1 {
		t.Errorf("after Replace: lookup %s, count %d", desc(got), c.Count())
	}
	if err := c.Delete(a); !errors.Is(err, ErrNotInserted) {
		t.Errorf("Delete of a replaced rule = %v, want ErrNotInserted", err)
	}
	if err := c.Delete(b); err != nil || !c.IsEmpty() {
		t.Errorf("Delete = %v, empty %v", err, c.IsEmpty())
	}
}

func TestRulesSelectsAtLeastAsSpecificMatches(t *testing.T) {
	c := mustNew(t, Options{})
	rules := []*Rule[int]{
		mustRule(t, ipMatch(ip4(10, 0, 0, 1), 0, 32, 0), 1, nil, 1),
		mustRule(t, ipMatch(ip4(10, 0, 0, 0), 0, 24, 0), 1, nil, 2),
		mustRule(t, ipMatch(ip4(10, 0, 0, 0), 0, 8, 0), 1, nil, 3),
		mustRule(t, ipMatch(ip4(10, 0, 0, 1), ip4(1, 1, 1, 1), 32, 32), 7, nil, 4),
		mustRule(t, ipMatch(ip4(11, 0, 0, 1), 0, 32, 0), 1, nil, 5),
		mustRule(t, mf.Match{}, 0, nil, 6),
	}
	for _, r := range rules {
		if err := c.Insert(r, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Remove(rules[0], 1); err != nil {
		t.Fatal(err)
	}
	ids := func(v Version, target *mf.Match) []int {
		var out []int
		for r := range c.Rules(v, target) {
			out = append(out, r.Payload)
		}
		slices.Sort(out)
		return out
	}
	cases := []struct {
		v      Version
		target *mf.Match
		want   []int
	}{
		{0, nil, []int{1, 2, 3, 4, 5, 6}},
		{1, nil, []int{2, 3, 4, 5, 6}},
		{0, ptr(ipMatch(ip4(10, 0, 0, 0), 0, 8, 0)), []int{1, 2, 3, 4}},
		{0, ptr(ipMatch(ip4(10, 0, 0, 0), 0, 24, 0)), []int{1, 2, 4}},
		{1, ptr(ipMatch(ip4(10, 0, 0, 1), 0, 32, 0)), []int{4}},
		{0, ptr(ipMatch(0, 0, 0, 0)), []int{1, 2, 3, 4, 5}},
	}
	for _, tc := range cases {
		if got := ids(tc.v, tc.target); !slices.Equal(got, tc.want) {
			t.Errorf("Rules(%d, %v) = %v, want %v", tc.v, tc.target != nil, got, tc.want)
		}
	}
	// Stopping early stops the iteration.
	n := 0
	for range c.Rules(0, nil) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("iteration did not stop")
	}
}

func TestCheckOverlapFollowsOpenFlowRules(t *testing.T) {
	c := mustNew(t, Options{})
	if err := c.Insert(mustRule(t, ipMatch(ip4(10, 0, 0, 0), 0, 8, 0), 10, nil, 1), 0); err != nil {
		t.Fatal(err)
	}
	future := mustRule(t, ipMatch(ip4(20, 0, 0, 0), 0, 8, 0), 10, nil, 2)
	if err := c.Insert(future, 5); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		m    mf.Match
		pri  uint16
		v    Version
		want bool
	}{
		{"narrower at same priority", ipMatch(ip4(10, 1, 0, 0), 0, 16, 0), 10, 0, true},
		{"other field at same priority", ipMatch(0, ip4(1, 1, 1, 1), 0, 32), 10, 0, true},
		{"disjoint", ipMatch(ip4(11, 0, 0, 0), 0, 8, 0), 10, 0, false},
		{"other priority", ipMatch(ip4(10, 1, 0, 0), 0, 16, 0), 11, 0, false},
		{"invisible rule", ipMatch(ip4(20, 1, 0, 0), 0, 16, 0), 10, 0, false},
		{"visible in its version", ipMatch(ip4(20, 1, 0, 0), 0, 16, 0), 10, 5, true},
	}
	for _, tc := range cases {
		if got := c.CheckOverlap(&tc.m, tc.pri, tc.v); got != tc.want {
			t.Errorf("%s: CheckOverlap = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Sweeping every rule at once (del-flows) empties the classifier in one
// step; refilled, it answers as the naive model again, prefix tries and
// stage indices included.
func TestSweepOfEveryRuleEmptiesAndRefillsCorrectly(t *testing.T) {
	for _, prefixes := range [][]string{nil, {"ipv6_dst", "ip_dst", "tun_id"}} {
		t.Run(fmt.Sprint(prefixes), func(t *testing.T) {
			g := &gen{rng: rand.New(rand.NewPCG(3, 77))}
			c := mustNew(t, Options{PrefixFields: prefixes})
			fill := func(v Version) *ref {
				rf := &ref{}
				for id := range 300 {
					r := mustRule(t, g.match(), uint16(g.pick(40)), nil, id)
					if err := c.Insert(r, v); err != nil {
						if errors.Is(err, ErrDuplicate) {
							continue
						}
						t.Fatal(err)
					}
					rf.rules = append(rf.rules, r)
				}
				return rf
			}
			rf := fill(1)
			// Removing all but one leaves a partial sweep.
			for _, r := range rf.rules[1:] {
				if err := c.Remove(r, 2); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(c.Sweep(2)); n != len(rf.rules)-1 || c.Count() != 1 {
				t.Fatalf("partial sweep deleted %d, %d left", n, c.Count())
			}
			if err := c.Remove(rf.rules[0], 3); err != nil {
				t.Fatal(err)
			}
			if n := len(c.Sweep(3)); n != 1 || c.Count() != 0 {
				t.Fatalf("sweep of the last rule deleted %d, %d left", n, c.Count())
			}
			rf = fill(4)
			for _, r := range rf.rules {
				if err := c.Remove(r, 5); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(c.Sweep(5)); n != len(rf.rules) || c.Count() != 0 {
				t.Fatalf("sweep of every rule deleted %d of %d, %d left", n, len(rf.rules), c.Count())
			}
			var fl mf.Flow
			if r := c.Lookup(5, &fl, nil); r != nil {
				t.Fatalf("lookup in the emptied classifier found %s", desc(r))
			}
			rf = fill(6)
			checkAgainstRef(t, c, rf, g, 300, 7)
		})
	}
}

// Rules keep their matches compressed: every rule of a subtable shares one
// shape (its mask), whether made by the classifier's NewRule (which
// reuses the last inserted rule's) or the package's (adopted on insert),
// and each expands back to exactly the match it was made from.
func TestRulesShareTheirSubtablesMaskAndKeepTheirMatch(t *testing.T) {
	c := mustNew(t, Options{})
	ms := []mf.Match{ipMatch(ip4(10, 0, 0, 1), 0, 32, 0), ipMatch(ip4(10, 0, 0, 2), 0, 32, 0), ipMatch(0, ip4(10, 1, 0, 0), 0, 16), ipMatch(ip4(10, 0, 0, 3), 0, 32, 0)}
	var rs []*Rule[int]
	for i, m := range ms {
		var r *Rule[int]
		var err error
		if i == 3 {
			r, err = NewRule(&m, 10, nil, i)
		} else {
			r, err = c.NewRule(&m, 10, nil, i)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Insert(r, 1); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	if rs[0].shape != rs[1].shape || rs[0].shape != rs[3].shape {
		t.Errorf("rules with one mask have shapes %p %p %p, want one", rs[0].shape, rs[1].shape, rs[3].shape)
	}
	if rs[2].shape == rs[0].shape {
		t.Errorf("a /16 destination rule shares the /32 source rules' shape")
	}
	for i, r := range rs {
		if got := r.Match(); got != ms[i] {
			t.Errorf("rule %d: match %+v, want %+v", i, got, ms[i])
		}
	}
}
