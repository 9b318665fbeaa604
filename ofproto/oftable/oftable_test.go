package oftable_test

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ofproto/classifier"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
)

// clock is a settable Config.Now.
type clock struct{ t time.Time }

func (c *clock) now() time.Time            { return c.t }
func (c *clock) advance(d time.Duration)   { c.t = c.t.Add(d) }
func newClock() *clock                     { return &clock{t: time.Unix(1_700_000_000, 0)} }
func be16(v uint16) []byte                 { return binary.BigEndian.AppendUint16(nil, v) }
func be32(v uint32) []byte                 { return binary.BigEndian.AppendUint32(nil, v) }
func output(port uint32) ofp.Action        { return ofp.Action{Type: ofp.ActOutput, Port: port} }
func outputs(ports ...uint32) []ofp.Action { return mapSlice(ports, output) }

func mapSlice[T, U any](s []T, f func(T) U) []U {
	out := make([]U, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

// outputsTo is the out_port filter over plain output actions (the switch
// supplies the full ofpacts_output_to_port).
func outputsTo(acts []ofp.Action, port, _ uint32) bool {
	for _, a := range acts {
		if a.Type == ofp.ActOutput && a.Port == port {
			return true
		}
	}
	return false
}

func newTables(t testing.TB, c *clock) *oftable.Tables {
	t.Helper()
	tb, err := oftable.New(oftable.Config{OutputsTo: outputsTo, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// fv is one field of a match: value and mask in network order (nil mask:
// exact).
type fv struct {
	name        string
	value, mask []byte
}

func match(t testing.TB, fields ...fv) mf.Match {
	t.Helper()
	var m mf.Match
	for _, f := range fields {
		fd := mf.ByName(f.name)
		if fd == nil {
			t.Fatalf("no field %q", f.name)
		}
		mask := f.mask
		if mask == nil {
			mask = make([]byte, len(f.value))
			for i := range mask {
				mask[i] = 0xff
			}
		}
		if err := m.SetMasked(fd, f.value, mask); err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
	}
	return m
}

// ipDst matches IPv4 destination a.b.c.d/plen.
func ipDst(t testing.TB, addr uint32, plen int) mf.Match {
	return match(t, fv{"eth_type", be16(0x0800), nil}, fv{"ip_dst", be32(addr), be32(^uint32(0) << (32 - plen))})
}

// ipFlow is an IPv4 packet to addr.
func ipFlow(addr uint32) *mf.Flow {
	var f mf.Flow
	f.EthType = 0x0800
	f.NwDst = addr
	return &f
}

func apply(t testing.TB, tb *oftable.Tables, fms ...*oftable.FlowMod) []oftable.Removal {
	t.Helper()
	x := tb.Begin()
	for _, fm := range fms {
		if err := x.Apply(fm); err != nil {
			x.Abort()
			t.Fatalf("apply %+v: %v", fm, err)
		}
	}
	return x.Commit()
}

func add(m mf.Match, pri uint16, cookie uint64, acts ...ofp.Action) *oftable.FlowMod {
	return &oftable.FlowMod{Command: ofp.FlowAdd, Match: m, Priority: pri, NewCookie: cookie, Actions: acts,
		OutPort: oftable.PortAny, OutGroup: oftable.GroupAny}
}

func cmd(c uint8, table uint8, m mf.Match, pri uint16, acts ...ofp.Action) *oftable.FlowMod {
	return &oftable.FlowMod{Command: c, Table: table, Match: m, Priority: pri, NewCookie: oftable.CookieUnchanged,
		Actions: acts, OutPort: oftable.PortAny, OutGroup: oftable.GroupAny}
}

func lookup(tb *oftable.Tables, table uint8, f *mf.Flow) *oftable.Rule {
	var wc mf.Flow
	return tb.Lookup(tb.Version(), table, f, &wc)
}

func ports(r *oftable.Rule) []uint32 {
	if r == nil {
		return nil
	}
	return mapSlice(r.Actions, func(a ofp.Action) uint32 { return a.Port })
}

func wantCode(t *testing.T, err error, code ofp.ErrCode) {
	t.Helper()
	if !errors.Is(err, &ofp.Error{Code: code}) {
		t.Fatalf("error = %v, want %v", err, code)
	}
}

const net10 = 10 << 24

func TestAddNewRuleIsVisibleOnlyAfterCommit(t *testing.T) {
	c := newClock()
	tb := newTables(t, c)
	v0 := tb.Version()
	x := tb.Begin()
	if err := x.Apply(add(ipDst(t, net10, 8), 10, 0x42, output(2))); err != nil {
		t.Fatal(err)
	}
	var wc mf.Flow
	if r := tb.Lookup(tb.Version(), 0, ipFlow(net10|1), &wc); r != nil {
		t.Fatalf("staged rule visible before commit: %+v", r)
	}
	if rem := x.Commit(); rem != nil {
		t.Fatalf("removals = %v, want none", rem)
	}
	if tb.Version() != v0+1 {
		t.Fatalf("version %d, want %d", tb.Version(), v0+1)
	}
	r := lookup(tb, 0, ipFlow(net10|1))
	if r == nil || r.Cookie != 0x42 || r.Priority != 10 || r.Table != 0 || !slices.Equal(ports(r), []uint32{2}) {
		t.Fatalf("lookup = %+v", r)
	}
	if !r.CreatedAt().Equal(c.t) || !r.ModifiedAt().Equal(c.t) {
		t.Fatalf("created %v modified %v, want %v", r.CreatedAt(), r.ModifiedAt(), c.t)
	}
	if r := lookup(tb, 0, ipFlow(11<<24)); r != nil {
		t.Fatalf("11.0.0.0 matched %+v", r)
	}
	if tb.Count() != 1 || tb.Stats(0).Active != 1 {
		t.Fatalf("count %d active %d", tb.Count(), tb.Stats(0).Active)
	}
	// A lookup at the version before the commit still misses.
	if r := tb.Lookup(v0, 0, ipFlow(net10|1), &wc); r != nil {
		t.Fatalf("old version sees new rule")
	}
}

func TestAddTable255GoesToTable0(t *testing.T) {
	tb := newTables(t, newClock())
	fm := add(ipDst(t, net10, 8), 10, 0, output(1))
	fm.Table = 0xff
	apply(t, tb, fm)
	if r := lookup(tb, 0, ipFlow(net10)); r == nil || r.Table != 0 {
		t.Fatalf("rule = %+v, want it in table 0", r)
	}
}

func TestTable254IsReadOnly(t *testing.T) {
	tb := newTables(t, newClock())
	// ovs-ofctl -O OpenFlow13 {add-flow,mod-flows,del-flows} br0 table=254,...
	// all fail with OFPBRC_EPERM in Open vSwitch 3.1.
	for _, c := range []uint8{ofp.FlowAdd, ofp.FlowModify, ofp.FlowModifyStrict, ofp.FlowDelete, ofp.FlowDeleteStrict} {
		x := tb.Begin()
		err := x.Apply(cmd(c, oftable.TableInternal, mf.Match{}, 0, output(1)))
		x.Abort()
		wantCode(t, err, ofp.OFPBRC_EPERM)
	}
	if tb.Count() != 0 {
		t.Fatalf("count %d", tb.Count())
	}
}

func TestAddIdenticalReplacesAndKeepsCounters(t *testing.T) {
	c := newClock()
	tb := newTables(t, c)
	m := ipDst(t, net10, 8)
	apply(t, tb, add(m, 10, 1, output(1)))
	old := lookup(tb, 0, ipFlow(net10))
	old.Stats.Add(3, 300, c.t)
	c.advance(5 * time.Second)

	rem := apply(t, tb, add(m, 10, 2, output(2)))
	if len(rem) != 0 {
		t.Fatalf("replaced rule reported as removed: %+v", rem)
	}
	r := lookup(tb, 0, ipFlow(net10))
	if r == old || r.Cookie != 2 || !slices.Equal(ports(r), []uint32{2}) {
		t.Fatalf("after replace: %+v", r)
	}
	if r.Stats.Packets.Load() != 3 || r.Stats.Bytes.Load() != 300 {
		t.Fatalf("counters %d/%d, want 3/300", r.Stats.Packets.Load(), r.Stats.Bytes.Load())
	}
	if !r.CreatedAt().Equal(c.t) {
		t.Fatalf("created %v, want the replacing add's time %v", r.CreatedAt(), c.t)
	}
	if tb.Count() != 1 {
		t.Fatalf("count %d", tb.Count())
	}

	fm := add(m, 10, 3, output(3))
	fm.Flags = oftable.FlagResetCounts
	apply(t, tb, fm)
	r = lookup(tb, 0, ipFlow(net10))
	if r.Stats.Packets.Load() != 0 || r.Stats.Bytes.Load() != 0 || r.Flags != oftable.FlagResetCounts {
		t.Fatalf("reset_counts: %d/%d flags %#x", r.Stats.Packets.Load(), r.Stats.Bytes.Load(), r.Flags)
	}
}

func TestAddIdenticalTwiceInOneTransaction(t *testing.T) {
	tb := newTables(t, newClock())
	m := ipDst(t, net10, 8)
	if rem := apply(t, tb, add(m, 10, 1, output(1)), add(m, 10, 2, output(2))); len(rem) != 0 {
		t.Fatalf("removals %+v", rem)
	}
	if r := lookup(tb, 0, ipFlow(net10)); r == nil || r.Cookie != 2 {
		t.Fatalf("rule %+v, want the second add", r)
	}
	if tb.Count() != 1 {
		t.Fatalf("count %d", tb.Count())
	}
}

func TestCheckOverlap(t *testing.T) {
	tb := newTables(t, newClock())
	ip := match(t, fv{"eth_type", be16(0x0800), nil})
	tcp := match(t, fv{"eth_type", be16(0x0800), nil}, fv{"nw_proto", []byte{6}, nil})
	apply(t, tb, add(ip, 5, 0, output(1)))

	// Same priority, overlapping match: refused, nothing staged.
	x := tb.Begin()
	fm := add(tcp, 5, 0, output(2))
	fm.Flags = oftable.FlagCheckOverlap
	wantCode(t, x.Apply(fm), ofp.OFPFMFC_OVERLAP)
	x.Commit()
	if tb.Count() != 1 {
		t.Fatalf("count %d after refused add", tb.Count())
	}
	// Another priority does not overlap.
	fm = add(tcp, 6, 0, output(2))
	fm.Flags = oftable.FlagCheckOverlap
	apply(t, tb, fm)
	// An identical flow is replaced, not an overlap (as Open vSwitch:
	// add-flow priority=5,ip,check_overlap,actions=output:2 succeeds).
	fm = add(ip, 5, 9, output(2))
	fm.Flags = oftable.FlagCheckOverlap
	apply(t, tb, fm)
	r := tb.FindStrict(0, &ip, 5)
	if r == nil || r.Cookie != 9 || r.Flags != oftable.FlagCheckOverlap {
		t.Fatalf("identical replace: %+v", r)
	}
	if tb.Count() != 2 {
		t.Fatalf("count %d", tb.Count())
	}
}

func TestModifyLooseReplacesActionsKeepsCookieAndCounters(t *testing.T) {
	c := newClock()
	tb := newTables(t, c)
	a := ipDst(t, net10, 8)
	b := ipDst(t, net10|1<<16, 16)
	other := ipDst(t, 11<<24, 8)
	fa := add(a, 10, 1, output(1))
	fa.IdleTimeout, fa.HardTimeout, fa.Flags = 60, 120, oftable.FlagSendFlowRem
	apply(t, tb, fa, add(b, 20, 2, output(1)), add(other, 10, 3, output(1)))
	ra := tb.FindStrict(0, &a, 10)
	ra.Stats.Add(7, 700, c.t)
	created := c.t
	c.advance(time.Second)

	// modify nw_dst=10.0.0.0/8 selects both 10/8 and 10.1/16.
	if rem := apply(t, tb, cmd(ofp.FlowModify, 0, a, 0, output(4))); len(rem) != 0 {
		t.Fatalf("modify reported removals %+v", rem)
	}
	na, nb, no := tb.FindStrict(0, &a, 10), tb.FindStrict(0, &b, 20), tb.FindStrict(0, &other, 10)
	if !slices.Equal(ports(na), []uint32{4}) || !slices.Equal(ports(nb), []uint32{4}) || !slices.Equal(ports(no), []uint32{1}) {
		t.Fatalf("actions: %v %v %v", ports(na), ports(nb), ports(no))
	}
	if na.Cookie != 1 || nb.Cookie != 2 {
		t.Fatalf("cookies changed: %#x %#x", na.Cookie, nb.Cookie)
	}
	if na.Stats.Packets.Load() != 7 || na.Stats.Bytes.Load() != 700 {
		t.Fatalf("counters not kept: %d/%d", na.Stats.Packets.Load(), na.Stats.Bytes.Load())
	}
	if na.IdleTimeout != 60 || na.HardTimeout != 120 || na.Flags != oftable.FlagSendFlowRem {
		t.Fatalf("modify changed timeouts/flags: %+v", na)
	}
	if !na.CreatedAt().Equal(created) || !na.ModifiedAt().Equal(c.t) {
		t.Fatalf("created %v modified %v", na.CreatedAt(), na.ModifiedAt())
	}
	if tb.Count() != 3 {
		t.Fatalf("count %d", tb.Count())
	}

	// A new cookie is set when given; reset_counts zeroes the counters.
	fm := cmd(ofp.FlowModify, 0, a, 0, output(5))
	fm.NewCookie = 0x99
	fm.Flags = oftable.FlagResetCounts
	apply(t, tb, fm)
	na = tb.FindStrict(0, &a, 10)
	if na.Cookie != 0x99 || na.Stats.Packets.Load() != 0 || !slices.Equal(ports(na), []uint32{5}) {
		t.Fatalf("modify cookie/reset: %+v packets %d", na, na.Stats.Packets.Load())
	}
}

func TestModifyStrictSelectsOnlyExactMatchAndPriority(t *testing.T) {
	tb := newTables(t, newClock())
	a := ipDst(t, net10, 8)
	b := ipDst(t, net10|1<<16, 16)
	apply(t, tb, add(a, 10, 0, output(1)), add(a, 11, 0, output(1)), add(b, 10, 0, output(1)))
	apply(t, tb, cmd(ofp.FlowModifyStrict, 0, a, 10, output(9)))
	got := []uint32{ports(tb.FindStrict(0, &a, 10))[0], ports(tb.FindStrict(0, &a, 11))[0], ports(tb.FindStrict(0, &b, 10))[0]}
	if !slices.Equal(got, []uint32{9, 1, 1}) {
		t.Fatalf("outputs %v, want [9 1 1]", got)
	}
}

func TestModifySelectingNothingAddsOnlyWithModifyMayAdd(t *testing.T) {
	tb := newTables(t, newClock())
	a := ipDst(t, net10, 8)
	apply(t, tb, cmd(ofp.FlowModify, 0, a, 10, output(1)))
	if tb.Count() != 0 {
		t.Fatalf("modify added without ModifyMayAdd")
	}
	fm := cmd(ofp.FlowModifyStrict, 0, a, 10, output(1))
	fm.ModifyMayAdd = true
	fm.NewCookie = 7
	apply(t, tb, fm)
	if r := tb.FindStrict(0, &a, 10); r == nil || r.Cookie != 7 {
		t.Fatalf("modify-may-add: %+v", r)
	}
}

func TestModifyAndDeleteFilterByCookieMask(t *testing.T) {
	tb := newTables(t, newClock())
	var fms []*oftable.FlowMod
	for i := range uint32(4) {
		fms = append(fms, add(ipDst(t, net10|i<<16, 16), 10, 0x100|uint64(i), output(1)))
	}
	apply(t, tb, fms...)
	// Cookie 0x102 under mask 0xff0f: 0x102 only (0x100, 0x101, 0x103 differ in the low nibble).
	fm := cmd(ofp.FlowModify, 0xff, mf.Match{}, 0, output(3))
	fm.Cookie, fm.CookieMask = 0x102, 0xff0f
	apply(t, tb, fm)
	var mod []uint64
	for r := range tb.Rules(0xff, nil) {
		if ports(r)[0] == 3 {
			mod = append(mod, r.Cookie)
		}
	}
	if !slices.Equal(mod, []uint64{0x102}) {
		t.Fatalf("modified cookies %#x", mod)
	}
	// Delete cookie=0x100/0x102 (bit 1 clear): 0x100 and 0x101.
	fm = cmd(ofp.FlowDelete, 0xff, mf.Match{}, 0)
	fm.Cookie, fm.CookieMask = 0x100, 0x102
	rem := apply(t, tb, fm)
	var del []uint64
	for _, r := range rem {
		if r.Reason != oftable.RemovedDelete {
			t.Fatalf("reason %d", r.Reason)
		}
		del = append(del, r.Rule.Cookie)
	}
	slices.Sort(del)
	if !slices.Equal(del, []uint64{0x100, 0x101}) || tb.Count() != 2 {
		t.Fatalf("deleted %#x, count %d", del, tb.Count())
	}
}

func TestDeleteLooseAndStrict(t *testing.T) {
	tb := newTables(t, newClock())
	a := ipDst(t, net10, 8)
	b := ipDst(t, net10|1<<16, 16)
	o := ipDst(t, 11<<24, 8)
	f1 := add(a, 10, 1, output(1))
	f2 := add(b, 10, 2, output(1))
	f2.Table = 3
	apply(t, tb, f1, f2, add(o, 10, 3, output(1)), add(a, 20, 4, output(1)))

	// Strict: exact match and priority only.
	rem := apply(t, tb, cmd(ofp.FlowDeleteStrict, 0, a, 20))
	if len(rem) != 1 || rem[0].Rule.Cookie != 4 || rem[0].Reason != oftable.RemovedDelete {
		t.Fatalf("strict delete removed %+v", rem)
	}
	// Loose over all tables: everything at least as specific as 10/8.
	rem = apply(t, tb, cmd(ofp.FlowDelete, 0xff, a, 0))
	var cookies []uint64
	for _, r := range rem {
		cookies = append(cookies, r.Rule.Cookie)
	}
	slices.Sort(cookies)
	if !slices.Equal(cookies, []uint64{1, 2}) {
		t.Fatalf("loose delete removed cookies %v", cookies)
	}
	if tb.Count() != 1 || tb.Stats(3).Active != 0 || lookup(tb, 0, ipFlow(11<<24)) == nil {
		t.Fatalf("count %d", tb.Count())
	}
	// Delete of a catch-all in one table removes that table only.
	apply(t, tb, add(a, 1, 5, output(1)))
	f := cmd(ofp.FlowDelete, 1, mf.Match{}, 0)
	if rem := apply(t, tb, f); len(rem) != 0 {
		t.Fatalf("delete in empty table 1 removed %+v", rem)
	}
}

// A flow that was visible before a transaction and is modified (or
// replaced) then deleted inside it is gone after the commit: its deletion
// must be reported, with the reason of the delete.
func TestDeleteOfAFlowModifiedInTheSameTransactionIsReported(t *testing.T) {
	for _, first := range []string{"modify", "replace"} {
		tb := newTables(t, newClock())
		m := ipDst(t, net10, 8)
		fm := add(m, 10, 5, output(1))
		fm.Flags = oftable.FlagSendFlowRem
		apply(t, tb, fm)
		change := cmd(ofp.FlowModify, 0, m, 0, output(2))
		if first == "replace" {
			change = add(m, 10, 5, output(2))
		}
		rem := apply(t, tb, change, cmd(ofp.FlowDeleteStrict, 0, m, 10))
		if len(rem) != 1 || rem[0].Reason != oftable.RemovedDelete || rem[0].Rule.Cookie != 5 || tb.Count() != 0 {
			t.Errorf("%s then delete: removals %+v, count %d", first, rem, tb.Count())
		}
	}
	// A flow added and deleted in one transaction was never visible.
	tb := newTables(t, newClock())
	m := ipDst(t, net10, 8)
	if rem := apply(t, tb, add(m, 10, 5, output(1)), cmd(ofp.FlowDeleteStrict, 0, m, 10)); len(rem) != 0 {
		t.Errorf("add then delete: removals %+v", rem)
	}
}

func TestDeleteFiltersByOutPort(t *testing.T) {
	tb := newTables(t, newClock())
	apply(t, tb, add(ipDst(t, net10, 8), 10, 1, output(1)),
		add(ipDst(t, 11<<24, 8), 10, 2, output(2), output(3)),
		add(ipDst(t, 12<<24, 8), 10, 3, output(3)))
	fm := cmd(ofp.FlowDelete, 0xff, mf.Match{}, 0)
	fm.OutPort = 3
	rem := apply(t, tb, fm)
	var cookies []uint64
	for _, r := range rem {
		cookies = append(cookies, r.Rule.Cookie)
	}
	slices.Sort(cookies)
	if !slices.Equal(cookies, []uint64{2, 3}) || tb.Count() != 1 {
		t.Fatalf("out_port=3 deleted %v (count %d)", cookies, tb.Count())
	}
	// Strict modify with a non-matching out_port selects nothing.
	m := ipDst(t, net10, 8)
	fm = cmd(ofp.FlowModifyStrict, 0, m, 10, output(7))
	fm.OutPort = 2
	apply(t, tb, fm)
	if p := ports(tb.FindStrict(0, &m, 10)); !slices.Equal(p, []uint32{1}) {
		t.Fatalf("out_port filtered modify changed actions to %v", p)
	}
}

func TestAbortLeavesNothingVisibleAndRestoresRemovedRules(t *testing.T) {
	tb := newTables(t, newClock())
	a, b := ipDst(t, net10, 8), ipDst(t, 11<<24, 8)
	apply(t, tb, add(a, 10, 1, output(1)))
	v := tb.Version()
	calls := 0
	tb.OnChange(func() { calls++ })

	x := tb.Begin()
	for _, fm := range []*oftable.FlowMod{
		add(b, 10, 2, output(2)),                  // new
		add(a, 10, 3, output(3)),                  // replaces
		cmd(ofp.FlowModify, 0, b, 0, output(4)),   // modifies the staged rule
		cmd(ofp.FlowDeleteStrict, 0, a, 10),       // deletes the replacement
		add(ipDst(t, 12<<24, 8), 5, 4, output(5)), // new
	} {
		if err := x.Apply(fm); err != nil {
			t.Fatal(err)
		}
	}
	x.Abort()
	if tb.Version() != v || calls != 0 {
		t.Fatalf("abort published: version %d (was %d), OnChange calls %d", tb.Version(), v, calls)
	}
	if tb.Count() != 1 || tb.Stats(0).Active != 1 {
		t.Fatalf("count %d after abort", tb.Count())
	}
	r := lookup(tb, 0, ipFlow(net10))
	if r == nil || r.Cookie != 1 || !slices.Equal(ports(r), []uint32{1}) {
		t.Fatalf("original rule after abort: %+v", r)
	}
	if r := lookup(tb, 0, ipFlow(11<<24)); r != nil {
		t.Fatalf("aborted add visible: %+v", r)
	}
	// The table still works: the same changes commit cleanly.
	apply(t, tb, add(b, 10, 2, output(2)), add(a, 10, 3, output(3)))
	if tb.Count() != 2 || lookup(tb, 0, ipFlow(net10)).Cookie != 3 || calls != 1 {
		t.Fatalf("after abort+commit: count %d calls %d", tb.Count(), calls)
	}
	// A finished transaction refuses more work.
	x = tb.Begin()
	x.Commit()
	if err := x.Apply(add(a, 1, 0)); !errors.Is(err, oftable.ErrTxnDone) {
		t.Fatalf("apply after commit: %v", err)
	}
}

func TestOldVersionSeesOldRulesWhileATranslationHoldsReadLock(t *testing.T) {
	c := newClock()
	tb := newTables(t, c)
	m := ipDst(t, net10, 8)
	apply(t, tb, add(m, 10, 1, output(1)))

	// A translation in progress loaded version v1.
	tb.ReadLock()
	v1 := tb.Version()
	x := tb.Begin()
	if err := x.Apply(cmd(ofp.FlowModify, 0, m, 0, output(2))); err != nil {
		t.Fatal(err)
	}
	// Staged but not published: the published version has the old rule.
	if p := ports(lookup(tb, 0, ipFlow(net10))); !slices.Equal(p, []uint32{1}) {
		t.Fatalf("before commit: %v", p)
	}
	done := make(chan []oftable.Removal)
	go func() { done <- x.Commit() }()
	deadline := time.Now().Add(5 * time.Second)
	for tb.Version() == v1 {
		if time.Now().After(deadline) {
			t.Fatal("commit did not publish")
		}
		time.Sleep(time.Millisecond)
	}
	var wc mf.Flow
	if p := ports(tb.Lookup(v1, 0, ipFlow(net10), &wc)); !slices.Equal(p, []uint32{1}) {
		t.Fatalf("old version after publish: %v, want [1]", p)
	}
	if p := ports(tb.Lookup(tb.Version(), 0, ipFlow(net10), &wc)); !slices.Equal(p, []uint32{2}) {
		t.Fatalf("new version: %v, want [2]", p)
	}
	select {
	case <-done:
		t.Fatal("commit freed removed rules while a translation held ReadLock")
	case <-time.After(20 * time.Millisecond):
	}
	tb.ReadUnlock()
	if rem := <-done; len(rem) != 0 {
		t.Fatalf("modify reported removals %+v", rem)
	}
	// The commit swept the old rule once the translation ended.
	if r := tb.Lookup(v1, 0, ipFlow(net10), &wc); r != nil {
		t.Fatalf("old rule still present after the commit's sweep: %v", ports(r))
	}
	tb.Sweep()
	if p := ports(lookup(tb, 0, ipFlow(net10))); !slices.Equal(p, []uint32{2}) {
		t.Fatalf("sweep removed the live rule: %v", p)
	}
}

func TestExpireIdleAndHardTimeouts(t *testing.T) {
	c := newClock()
	tb := newTables(t, c)
	idle := add(ipDst(t, net10, 8), 10, 1, output(1))
	idle.IdleTimeout = 10
	hard := add(ipDst(t, 11<<24, 8), 10, 2, output(1))
	hard.HardTimeout = 20
	both := add(ipDst(t, 12<<24, 8), 10, 3, output(1))
	both.IdleTimeout, both.HardTimeout = 5, 30
	apply(t, tb, idle, hard, both, add(ipDst(t, 13<<24, 8), 10, 4, output(1)))
	start := c.t

	// Traffic at 8s keeps "both" alive past its idle timeout.
	tb.FindStrict(0, ptr(ipDst(t, 12<<24, 8)), 10).Stats.Add(1, 60, start.Add(8*time.Second))
	if rem := tb.Expire(start.Add(9 * time.Second)); len(rem) != 0 {
		t.Fatalf("expired early: %+v", rem)
	}
	rem := tb.Expire(start.Add(10 * time.Second))
	if len(rem) != 1 || rem[0].Rule.Cookie != 1 || rem[0].Reason != oftable.RemovedIdleTimeout {
		t.Fatalf("at 10s: %+v", rem)
	}
	rem = tb.Expire(start.Add(20 * time.Second))
	slices.SortFunc(rem, func(a, b oftable.Removal) int { return int(a.Rule.Cookie) - int(b.Rule.Cookie) })
	if len(rem) != 2 || rem[0].Rule.Cookie != 2 || rem[0].Reason != oftable.RemovedHardTimeout ||
		rem[1].Rule.Cookie != 3 || rem[1].Reason != oftable.RemovedIdleTimeout {
		t.Fatalf("at 20s: %+v", rem)
	}
	if tb.Count() != 1 || lookup(tb, 0, ipFlow(13<<24)) == nil {
		t.Fatalf("permanent rule gone; count %d", tb.Count())
	}
}

func TestExpireHardTimeoutCountsFromModification(t *testing.T) {
	c := newClock()
	tb := newTables(t, c)
	m := ipDst(t, net10, 8)
	fm := add(m, 10, 1, output(1))
	fm.HardTimeout = 10
	apply(t, tb, fm)
	c.advance(8 * time.Second)
	apply(t, tb, cmd(ofp.FlowModify, 0, m, 0, output(2)))
	if rem := tb.Expire(c.t.Add(5 * time.Second)); len(rem) != 0 {
		t.Fatalf("expired 13s after add but 5s after modify: %+v", rem)
	}
	if rem := tb.Expire(c.t.Add(10 * time.Second)); len(rem) != 1 || rem[0].Reason != oftable.RemovedHardTimeout {
		t.Fatalf("not expired 10s after modify: %+v", rem)
	}
}

// Open vSwitch 3.1: add-flow priority=5,ip,idle_timeout=3 ; 2s later
// mod-flows priority=5,ip,actions=output:2 ; the flow is gone 3s after the
// add: a modify does not restart the idle timer (stats.used carries over),
// and neither does an add that replaces the flow without reset_counts.
func TestExpireIdleTimeoutIsNotRestartedByModifyOrReplace(t *testing.T) {
	c := newClock()
	tb := newTables(t, c)
	m := ipDst(t, net10, 8)
	fm := add(m, 10, 1, output(1))
	fm.IdleTimeout = 3
	apply(t, tb, fm)
	start := c.t
	c.advance(2 * time.Second)
	apply(t, tb, cmd(ofp.FlowModify, 0, m, 0, output(2)))
	if r := tb.FindStrict(0, &m, 10); !r.LastUsed().Equal(start) {
		t.Fatalf("LastUsed %v, want the add's time %v", r.LastUsed(), start)
	}
	if rem := tb.Expire(start.Add(3 * time.Second)); len(rem) != 1 || rem[0].Reason != oftable.RemovedIdleTimeout {
		t.Fatalf("modified flow not idle-expired 3s after its add: %+v", rem)
	}

	apply(t, tb, fm)
	start = c.t
	c.advance(2 * time.Second)
	apply(t, tb, fm) // identical add, counters (and idle time) carried over
	if rem := tb.Expire(start.Add(3 * time.Second)); len(rem) != 1 {
		t.Fatalf("replaced flow not idle-expired: %+v", rem)
	}

	apply(t, tb, fm)
	c.advance(2 * time.Second)
	reset := *fm
	reset.Flags = oftable.FlagResetCounts
	apply(t, tb, &reset) // reset_counts starts the idle time again
	if rem := tb.Expire(c.t.Add(2 * time.Second)); len(rem) != 0 {
		t.Fatalf("reset_counts replacement expired early: %+v", rem)
	}
	if rem := tb.Expire(c.t.Add(3 * time.Second)); len(rem) != 1 {
		t.Fatalf("reset_counts replacement not expired: %+v", rem)
	}
}

func ptr[T any](v T) *T { return &v }

// Table statistics count packets credited with CountLookups (by the
// switch, per packet), not lookups: a lookup alone counts nothing.
func TestStatsCountLookupsAndMatches(t *testing.T) {
	tb := newTables(t, newClock())
	f := add(ipDst(t, net10, 8), 10, 1, output(1))
	f.Table = 2
	apply(t, tb, f)
	for _, fl := range []uint32{net10, net10 | 5, 11 << 24} {
		r := lookup(tb, 2, ipFlow(fl))
		tb.CountLookups(2, r != nil, 1)
	}
	if s := tb.Stats(2); s != (oftable.TableStats{Active: 1, Lookups: 3, Matched: 2}) {
		t.Fatalf("table 2 stats %+v", s)
	}
	if s := tb.Stats(0); s != (oftable.TableStats{}) {
		t.Fatalf("table 0 stats %+v", s)
	}
	if r := tb.Lookup(tb.Version(), 255, ipFlow(net10), new(mf.Flow)); r != nil {
		t.Fatalf("lookup in table 255 returned a rule")
	}
	// Table 255 is "all tables" elsewhere; Stats must not panic on it.
	_ = tb.Stats(255)
}

func TestRulesIteratesTargetMatch(t *testing.T) {
	tb := newTables(t, newClock())
	var fms []*oftable.FlowMod
	for i, pl := range []int{8, 16, 24} {
		f := add(ipDst(t, net10|1<<16|2<<8, pl), 10, uint64(pl), output(1))
		f.Table = uint8(i % 2)
		fms = append(fms, f)
	}
	fms = append(fms, add(ipDst(t, 11<<24, 8), 10, 99, output(1)), add(mf.Match{}, 0, 100, output(1)))
	apply(t, tb, fms...)
	cookies := func(table uint8, target *mf.Match) []uint64 {
		var out []uint64
		for r := range tb.Rules(table, target) {
			out = append(out, r.Cookie)
		}
		slices.Sort(out)
		return out
	}
	tgt := ipDst(t, net10|1<<16, 16)
	for _, tc := range []struct {
		table  uint8
		target *mf.Match
		want   []uint64
	}{
		{0xff, nil, []uint64{8, 16, 24, 99, 100}},
		{0, nil, []uint64{8, 24, 99, 100}},
		{1, nil, []uint64{16}},
		{0xff, &tgt, []uint64{16, 24}},
		{0, &tgt, []uint64{24}},
		{0xff, ptr(ipDst(t, 11<<24, 8)), []uint64{99}},
	} {
		if got := cookies(tc.table, tc.target); !slices.Equal(got, tc.want) {
			t.Errorf("Rules(%d, %v) = %v, want %v", tc.table, tc.target != nil, got, tc.want)
		}
	}
	// Early break stops the iteration.
	n := 0
	for range tb.Rules(0xff, nil) {
		n++
		break
	}
	if n != 1 {
		t.Fatal(n)
	}
}

func TestConjunctionClauseRulesMatchTogether(t *testing.T) {
	tb := newTables(t, newClock())
	conj := func(clause uint8) []classifier.Conjunction {
		return []classifier.Conjunction{{ID: 1, Clause: clause, NClauses: 2}}
	}
	c1 := add(ipDst(t, net10, 8), 10, 0, ofp.Action{Type: ofp.ActConjunction})
	c1.Conjunctions = conj(0)
	c2 := add(match(t, fv{"eth_type", be16(0x0800), nil}, fv{"nw_proto", []byte{6}, nil}), 10, 0, ofp.Action{Type: ofp.ActConjunction})
	c2.Conjunctions = conj(1)
	id := add(match(t, fv{"conj_id", be32(1), nil}), 10, 0x77, output(4))
	apply(t, tb, c1, c2, id)
	f := ipFlow(net10 | 1)
	if r := lookup(tb, 0, f); r != nil {
		t.Fatalf("one clause matched alone: %+v", r)
	}
	f.NwProto = 6
	if r := lookup(tb, 0, f); r == nil || r.Cookie != 0x77 {
		t.Fatalf("conjunctive match: %+v", r)
	}
	if cs := tb.FindStrict(0, &c1.Match, 10).Conjunctions(); !slices.Equal(cs, conj(0)) {
		t.Fatalf("Conjunctions() = %v", cs)
	}
}

func TestApplyRefusesUnknownCommand(t *testing.T) {
	tb := newTables(t, newClock())
	x := tb.Begin()
	defer x.Abort()
	wantCode(t, x.Apply(&oftable.FlowMod{Command: 9}), ofp.OFPFMFC_BAD_COMMAND)
}

// TestLookupsDuringCommitsAlwaysFindARule modifies and replaces a rule
// over and over while readers look it up: at every version a reader
// loads, exactly one of the old and new rules is visible.
func TestLookupsDuringCommitsAlwaysFindARule(t *testing.T) {
	tb := newTables(t, newClock())
	m := ipDst(t, net10, 8)
	apply(t, tb, add(m, 10, 0, output(1)))
	stop := make(chan struct{})
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			var wc mf.Flow
			f := ipFlow(net10 | 7)
			for {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				tb.ReadLock()
				r := tb.Lookup(tb.Version(), 0, f, &wc)
				if r == nil {
					tb.ReadUnlock()
					errs <- errors.New("lookup found no rule")
					return
				}
				r.Stats.Add(1, 64, time.Now())
				tb.ReadUnlock()
			}
		}()
	}
	for i := range 300 {
		if i%2 == 0 {
			apply(t, tb, cmd(ofp.FlowModify, 0, m, 0, output(uint32(i))))
		} else {
			apply(t, tb, add(m, 10, uint64(i), output(uint32(i))))
		}
	}
	close(stop)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if tb.Count() != 1 {
		t.Fatalf("count %d", tb.Count())
	}
}
