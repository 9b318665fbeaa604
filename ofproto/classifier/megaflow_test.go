package classifier

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/ofproto/mf"
)

// The tables of Open vSwitch's classifier.at "prefix lookup" test: the
// tries un-wildcard only the address bits that decide the result. The
// expected masks are the Megaflow lines Open vSwitch 3.1's ofproto/trace
// printed for these flows (less the nw_frag and recirc_id that xlate adds).
func TestPrefixTriesUnwildcardOnlyDecidingBits(t *testing.T) {
	c := mustNew(t, Options{})
	add := func(m mf.Match, pri uint16, id int) {
		m.Flow.InPort, m.Mask.InPort = 1, ^uint32(0)
		if err := c.Insert(mustRule(t, m, pri, nil, id), 0); err != nil {
			t.Fatal(err)
		}
	}
	add(ipMatch(0, 0, 0, 0), 0, 1)
	add(ipMatch(0, ip4(10, 1, 0, 0), 0, 16), 16, 2)
	add(ipMatch(ip4(192, 168, 0, 0), ip4(10, 1, 2, 0), 16, 24), 32, 3)
	add(ipMatch(ip4(128, 192, 0, 0), ip4(10, 1, 2, 0), 16, 24), 33, 4)

	base := func(m mf.Match) mf.Flow {
		m.Mask.InPort, m.Mask.EthType = ^uint32(0), 0xffff
		return m.Mask
	}
	cases := []struct {
		name     string
		src, dst uint32
		want     int
		wc       mf.Flow
	}{
		{"miss at /16", ip4(192, 168, 0, 1), ip4(10, 0, 0, 1), 1, base(ipMatch(0, 0, 0, 16))},
		{"/16 hit, /24 miss", ip4(192, 168, 0, 1), ip4(10, 1, 3, 1), 2, base(ipMatch(0, 0, 0, 24))},
		{"/24 hit", ip4(192, 168, 0, 1), ip4(10, 1, 2, 1), 3, base(ipMatch(0, 0, 16, 24))},
		{"/24 hit, src differs in bit 1", ip4(128, 192, 7, 7), ip4(10, 1, 2, 1), 4, base(ipMatch(0, 0, 16, 24))},
		// The ip_dst trie does not rule the /24 subtable out, so it adds
		// nothing; the ip_src trie does, with 16 bits or with 1.
		{"/24 dst, src matches neither", ip4(192, 169, 0, 1), ip4(10, 1, 2, 1), 2, base(ipMatch(0, 0, 16, 16))},
		{"src decided at bit 0", ip4(1, 2, 3, 4), ip4(10, 1, 2, 1), 2, base(ipMatch(0, 0, 1, 16))},
	}
	for _, tc := range cases {
		var fl, wc mf.Flow
		fl.InPort, fl.EthType, fl.NwSrc, fl.NwDst, fl.NwProto, fl.TpDst = 1, flow.EthTypeIPv4, tc.src, tc.dst, 6, 80
		r := c.Lookup(0, &fl, &wc)
		if r == nil || r.Payload != tc.want {
			t.Errorf("%s: got %s, want rule %d", tc.name, desc(r), tc.want)
		}
		if wc != tc.wc {
			t.Errorf("%s: wildcards nw_src=%08x nw_dst=%08x in_port=%x dl_type=%x, want nw_src=%08x nw_dst=%08x (in_port, dl_type exact)",
				tc.name, wc.NwSrc, wc.NwDst, wc.InPort, wc.EthType, tc.wc.NwSrc, tc.wc.NwDst)
		}
	}
}

// A subtable miss in an early stage un-wildcards only that stage's fields.
// The expected masks are those of Open vSwitch 3.1's ofproto/trace with
// Flow_Table prefixes=none (less the dl_type, nw_frag and recirc_id that
// xlate adds).
func TestStagedLookupUnwildcardsOnlyCheckedStages(t *testing.T) {
	c := mustNew(t, Options{PrefixFields: []string{"none"}})
	var m mf.Match
	m.Flow.InPort, m.Mask.InPort = 1, ^uint32(0)
	m.Flow.EthType, m.Mask.EthType = flow.EthTypeIPv4, 0xffff
	m.Flow.NwDst, m.Mask.NwDst = ip4(10, 0, 0, 1), ^uint32(0)
	m.Flow.NwProto, m.Mask.NwProto = 6, 0xff
	m.Flow.TpDst, m.Mask.TpDst = 80, 0xffff
	if err := c.Insert(mustRule(t, m, 10, nil, 1), 0); err != nil {
		t.Fatal(err)
	}
	type want struct {
		inPort  uint32
		ethType uint16
		nwDst   uint32
		nwProto uint8
		tpDst   uint16
	}
	cases := []struct {
		name string
		mod  func(*mf.Flow)
		hit  bool
		w    want
	}{
		{"hit", func(*mf.Flow) {}, true, want{^uint32(0), 0xffff, ^uint32(0), 0xff, 0xffff}},
		{"metadata miss", func(f *mf.Flow) { f.InPort = 2 }, false, want{inPort: ^uint32(0)}},
		{"L2 miss", func(f *mf.Flow) { f.EthType = flow.EthTypeIPv6 }, false, want{inPort: ^uint32(0), ethType: 0xffff}},
		{"L3 miss", func(f *mf.Flow) { f.NwDst++ }, false, want{^uint32(0), 0xffff, ^uint32(0), 0xff, 0}},
		// The final stage holds only ports: the ports trie decides with
		// the bits up to the first difference (80 = 0x50, 81 = 0x51).
		{"L4 miss", func(f *mf.Flow) { f.TpDst = 81 }, false, want{^uint32(0), 0xffff, ^uint32(0), 0xff, 0xffff}},
		{"L4 miss early bit", func(f *mf.Flow) { f.TpDst = 0x8050 }, false, want{^uint32(0), 0xffff, ^uint32(0), 0xff, 0x8000}},
	}
	for _, tc := range cases {
		var fl, wc mf.Flow
		fl.InPort, fl.EthType, fl.NwDst, fl.NwProto, fl.TpSrc, fl.TpDst = 1, flow.EthTypeIPv4, ip4(10, 0, 0, 1), 6, 1234, 80
		tc.mod(&fl)
		r := c.Lookup(0, &fl, &wc)
		if (r != nil) != tc.hit {
			t.Errorf("%s: got %s, want hit=%v", tc.name, desc(r), tc.hit)
		}
		got := want{wc.InPort, wc.EthType, wc.NwDst, wc.NwProto, wc.TpDst}
		if got != tc.w {
			t.Errorf("%s: wildcards %+v, want %+v", tc.name, got, tc.w)
		}
		wc.InPort, wc.EthType, wc.NwDst, wc.NwProto, wc.TpDst = 0, 0, 0, 0, 0
		if wc != (mf.Flow{}) {
			t.Errorf("%s: other bits un-wildcarded: %+v", tc.name, wc)
		}
	}
}

// Readers never block and see every published version atomically: a
// bundle that replaces the only rule matching a flow is never observed
// half-done.
func TestConcurrentLookupsSeeAtomicVersions(t *testing.T) {
	c := mustNew(t, Options{})
	g := &gen{rng: rand.New(rand.NewPCG(1, 2))}
	for id := range 500 { // background rules with lower priorities
		if r := mustRule(t, g.match(), uint16(g.pick(50)), nil, -id-1); c.Insert(r, 0) != nil {
			continue
		}
	}
	key := ipMatch(ip4(10, 0, 0, 1), 0, 32, 0)
	cur := mustRule(t, key, 1000, nil, 0)
	if err := c.Insert(cur, 0); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var lookups atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan string, 2)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var fl mf.Flow
			fl.EthType, fl.NwSrc, fl.NwProto = flow.EthTypeIPv4, ip4(10, 0, 0, 1), 6
			for !stop.Load() {
				v := c.Version()
				var wc mf.Flow
				r := c.Lookup(v, &fl, &wc)
				lookups.Add(1)
				switch {
				case r != nil && r.priority == 1000 && r.Payload != int(v):
					errs <- "version " + itoa(v) + " returned the rule of version " + itoa(Version(r.Payload))
					return
				case (r == nil || r.priority != 1000) && c.Version() <= v+1:
					// Sweep deletes only rules removed at versions below
					// the previous one, so a reader this recent must
					// find its version's rule.
					errs <- "lookup at version " + itoa(v) + " missed the replaced rule"
					return
				}
			}
		}()
	}
	for v := Version(1); v <= 2000; v++ {
		next := mustRule(t, key, 1000, nil, int(v))
		if err := c.Remove(cur, v); err != nil {
			t.Fatal(err)
		}
		if err := c.Insert(next, v); err != nil {
			t.Fatal(err)
		}
		// Unrelated churn in the same bundle.
		churn := mustRule(t, g.match(), uint16(g.pick(50)), nil, -1000)
		if c.Insert(churn, v) == nil {
			_ = c.Remove(churn, v+1)
		}
		c.Publish(v)
		c.Sweep(v - 1)
		cur = next
	}
	for lookups.Load() < 1000 {
		runtime.Gosched()
	}
	stop.Store(true)
	wg.Wait()
	select {
	case e := <-errs:
		t.Fatal(e)
	default:
	}
}

func itoa(v Version) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for ; v > 0; v /= 10 {
		b = append([]byte{byte('0' + v%10)}, b...)
	}
	return string(b)
}

func TestLookupDoesNotAllocate(t *testing.T) {
	c := mustNew(t, Options{})
	g := &gen{rng: rand.New(rand.NewPCG(4, 4))}
	for id := range 2000 {
		_ = c.Insert(mustRule(t, g.match(), uint16(g.pick(40)), nil, id), 0)
	}
	ct := newConjTable(t)
	ct.c = c
	ct.add(t, "conj", conjIDMatch(7), 60)
	ct.add(t, "a", ipMatch(ip4(10, 0, 0, 1), 0, 32, 0), 50, cj(7, 1, 2))
	ct.add(t, "b", ipMatch(0, ip4(10, 0, 0, 2), 0, 32), 50, cj(7, 2, 2))
	flows := make([]mf.Flow, 64)
	for i := range flows {
		flows[i] = g.flow()
	}
	flows[0] = tcpFlow(ip4(10, 0, 0, 1), ip4(10, 0, 0, 2), 80)
	if got := ct.lookup(&flows[0], nil); got != "conj" {
		t.Fatalf("conjunctive flow = %s", got)
	}
	i := 0
	var wc mf.Flow
	allocs := testing.AllocsPerRun(1000, func() {
		c.Lookup(0, &flows[i%len(flows)], &wc)
		c.Lookup(0, &flows[i%len(flows)], nil)
		i++
	})
	if allocs != 0 {
		t.Fatalf("Lookup allocates %.1f times per call", allocs)
	}
}
