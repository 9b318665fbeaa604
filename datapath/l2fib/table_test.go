package l2fib

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Unix(1_700_000_000, 0)

func mac(i int) MAC { return MAC{0x50, 0x54, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)} }

func newTable(t testing.TB, cfg Config) *Table {
	t.Helper()
	tb, err := New(cfg, t0)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Capacity: -1}, {Capacity: MaxCapacity + 1}, {AgingTime: time.Millisecond},
		{Capacity: 8, Shards: 3}, {Capacity: 8, Shards: 16},
	} {
		if _, err := New(cfg, t0); err == nil {
			t.Errorf("New(%+v) succeeded, want an error", cfg)
		}
	}
	tb := newTable(t, Config{})
	if tb.Capacity() != DefaultCapacity || tb.AgingTime() != 300*time.Second || len(tb.shards) != 256 {
		t.Errorf("defaults: capacity %d aging %v shards %d", tb.Capacity(), tb.AgingTime(), len(tb.shards))
	}
}

func TestFullTableEvictsFromPortWithMostEntriesAndWarnsRateLimited(t *testing.T) {
	var warns []Warning
	tb := newTable(t, Config{Capacity: 10, Shards: 1, Warn: func(w Warning) { warns = append(warns, w) }})
	for i := 0; i < 6; i++ {
		tb.Learn(0, mac(i), 1)
	}
	for i := 6; i < 10; i++ {
		tb.Learn(0, mac(i), 2)
	}
	tb.Tick(t0.Add(time.Second))
	tb.Learn(0, mac(0), 1) // refreshed: the next eviction must spare it
	tb.Learn(0, mac(100), 3)
	tb.Learn(0, mac(101), 3)
	if tb.Len() != 10 {
		t.Fatalf("Len = %d, want the capacity 10", tb.Len())
	}
	d, _ := tb.PortCount(1)
	if d != 4 {
		t.Errorf("port 1 holds %d entries, want 4 (both evictions from the largest port)", d)
	}
	if d, _ := tb.PortCount(2); d != 4 {
		t.Errorf("port 2 holds %d entries, want 4", d)
	}
	for i, want := range map[int]bool{0: true, 1: false, 2: false, 3: true} {
		if _, ok := tb.Lookup(0, mac(i)); ok != want {
			t.Errorf("after eviction, entry %d present = %v, want %v", i, ok, want)
		}
	}
	if s := tb.Stats(); s.Evicted != 2 || s.Learned != 12 || s.Current != 10 {
		t.Errorf("stats %+v, want evicted 2 learned 12 current 10", s)
	}
	if len(warns) != 1 || warns[0].Kind != WarnEvicting || warns[0].OldPort != 1 || warns[0].Port != 3 {
		t.Fatalf("warnings %+v, want one eviction warning (the second is rate-limited)", warns)
	}
	tb.Tick(t0.Add(10 * time.Second))
	tb.Learn(0, mac(102), 3)
	if len(warns) != 2 || warns[1].Suppressed != 1 {
		t.Fatalf("warnings %+v, want a second one reporting 1 suppressed", warns)
	}
}

func TestTableFullOfStaticEntriesRefusesLearningAndAddStatic(t *testing.T) {
	var warns []Warning
	tb := newTable(t, Config{Capacity: 2, Shards: 1, Warn: func(w Warning) { warns = append(warns, w) }})
	for i := 0; i < 2; i++ {
		if err := tb.AddStatic(0, mac(i), 1); err != nil {
			t.Fatal(err)
		}
	}
	tb.Learn(0, mac(5), 2)
	if _, ok := tb.Lookup(0, mac(5)); ok {
		t.Errorf("learned into a table full of static entries")
	}
	if err := tb.AddStatic(0, mac(6), 1); err == nil || !strings.Contains(err.Error(), "full") {
		t.Errorf("AddStatic into a full table: %v, want a 'full' error", err)
	}
	if s := tb.Stats(); s.Refused != 2 || s.Static != 2 || s.Evicted != 0 {
		t.Errorf("stats %+v", s)
	}
	if len(warns) != 1 || warns[0].Kind != WarnFull {
		t.Errorf("warnings %+v, want one 'full'", warns)
	}
}

func TestEntryRefreshedWithinAgingTimeNeverExpires(t *testing.T) {
	tb := newTable(t, Config{AgingTime: 300 * time.Second, Capacity: 1000})
	tb.Learn(0, mac(1), 1)
	tb.Learn(0, mac(2), 1)
	for s := 1; s <= 1000; s++ {
		now := t0.Add(time.Duration(s) * time.Second)
		tb.Tick(now)
		if s%299 == 0 {
			tb.Learn(0, mac(1), 1)
		}
		tb.Sweep(now)
		_, ok2 := tb.Lookup(0, mac(2))
		if ok2 != (s < 300) {
			t.Fatalf("at %ds unrefreshed entry present = %v", s, ok2)
		}
		if _, ok := tb.Lookup(0, mac(1)); !ok {
			t.Fatalf("refreshed entry expired at %ds", s)
		}
	}
	if s := tb.Stats(); s.Expired != 1 {
		t.Errorf("expired %d, want 1", s.Expired)
	}
}

func TestSweepCoversTheTableWithinItsPeriod(t *testing.T) {
	tb := newTable(t, Config{AgingTime: 300 * time.Second, Capacity: 1 << 16, Shards: 4})
	for i := 0; i < 50000; i++ {
		tb.Learn(0, mac(i), uint32(i%7))
	}
	now := t0.Add(300 * time.Second)
	n := 0
	for i := 0; i < 10; i++ { // sweepPeriod is 10 for 300 s
		n += tb.Sweep(now)
	}
	if n != 50000 || tb.Len() != 0 {
		t.Errorf("10 sweeps removed %d of 50000, %d left", n, tb.Len())
	}
}

func TestStaticEntriesAreNeverAgedEvictedOrMoved(t *testing.T) {
	tb := newTable(t, Config{Capacity: 3, Shards: 1, AgingTime: 10 * time.Second})
	if err := tb.AddStatic(7, mac(1), 4); err != nil {
		t.Fatal(err)
	}
	tb.Learn(7, mac(1), 5) // learning does not move a static entry
	for i := 10; i < 20; i++ {
		tb.Learn(7, mac(i), 2)
	}
	tb.Expire(t0.Add(time.Hour))
	if p, ok := tb.Lookup(7, mac(1)); !ok || p != 4 {
		t.Fatalf("static entry: port %d present %v, want 4", p, ok)
	}
	if tb.Flush(false); tb.Len() != 1 {
		t.Errorf("Flush(false) left %d entries, want the static one", tb.Len())
	}
	if tb.DelStatic(7, mac(2)) || !tb.DelStatic(7, mac(1)) || tb.Len() != 0 {
		t.Errorf("DelStatic: wrong result or entry left")
	}
	tb.Learn(7, mac(3), 1)
	if tb.DelStatic(7, mac(3)) {
		t.Errorf("DelStatic removed a dynamic entry")
	}
	if s := tb.Stats(); s.Static != 0 || s.Moved != 0 {
		t.Errorf("stats %+v", s)
	}
}

func TestFlushPortVisitsOnlyThatPortsEntries(t *testing.T) {
	tb := newTable(t, Config{Capacity: 1 << 18})
	for i := 0; i < 100000; i++ {
		tb.Learn(0, mac(i), 1)
	}
	for i := 0; i < 10; i++ {
		tb.Learn(0, mac(1000000+i), 2)
	}
	tb.AddStatic(0, mac(2000000), 2)
	before := tb.visits.Load()
	if n := tb.FlushPort(2, false); n != 10 {
		t.Errorf("FlushPort removed %d, want 10", n)
	}
	if v := tb.visits.Load() - before; v != 10 {
		t.Errorf("FlushPort visited %d entries, want 10", v)
	}
	if _, st := tb.PortCount(2); st != 1 {
		t.Errorf("port down kept %d static entries, want 1", st)
	}
	if n := tb.FlushPort(2, true); n != 1 {
		t.Errorf("FlushPort(static) removed %d, want 1", n)
	}
	if n := tb.FlushPort(9, true); n != 0 || tb.Len() != 100000 {
		t.Errorf("FlushPort of an empty port removed %d; %d left", n, tb.Len())
	}
}

func TestMovesAreCountedAndFlappingMACIsLocked(t *testing.T) {
	var warns []Warning
	tb := newTable(t, Config{MoveLimit: 3, MoveWindow: 10 * time.Second, MoveLockTime: 20 * time.Second,
		Warn: func(w Warning) { warns = append(warns, w) }, Capacity: 100})
	m := mac(1)
	tb.Learn(5, m, 1)
	for i, port := range []uint32{2, 1, 2} {
		tb.Learn(5, m, port)
		if p, _ := tb.Lookup(5, m); p != port {
			t.Fatalf("move %d: port %d, want %d", i, p, port)
		}
	}
	tb.Learn(5, m, 3) // fourth move within the window: locked on 2
	tb.Learn(5, m, 1) // refused during the lock
	if p, _ := tb.Lookup(5, m); p != 2 {
		t.Fatalf("flapping MAC on port %d, want locked on 2", p)
	}
	if s := tb.Stats(); s.Moved != 3 || s.Locked != 1 || s.Blocked != 1 {
		t.Errorf("stats %+v, want moved 3 locked 1 blocked 1", s)
	}
	if len(warns) != 1 || warns[0].Kind != WarnMACFlap || warns[0].OldPort != 2 || warns[0].MAC != m || warns[0].VLAN != 5 {
		t.Errorf("warnings %+v", warns)
	}
	tb.Tick(t0.Add(20 * time.Second))
	tb.Learn(5, m, 3)
	if p, _ := tb.Lookup(5, m); p != 3 {
		t.Errorf("after the lock, port %d, want 3", p)
	}
	// A slow mover (one move per window) is never locked.
	tb.Learn(5, mac(2), 1)
	for i := 0; i < 10; i++ {
		tb.Tick(t0.Add(time.Duration(30+11*i) * time.Second))
		tb.Learn(5, mac(2), uint32(1+i%2+1))
	}
	if s := tb.Stats(); s.Locked != 1 {
		t.Errorf("slow mover was locked: %+v", s)
	}
}

func TestSameMACInTwoVLANsIsTwoEntries(t *testing.T) {
	tb := newTable(t, Config{Capacity: 100})
	tb.Learn(1, mac(1), 10)
	tb.Learn(2, mac(1), 20)
	p1, _ := tb.Lookup(1, mac(1))
	p2, _ := tb.Lookup(2, mac(1))
	if _, ok := tb.Lookup(3, mac(1)); ok || p1 != 10 || p2 != 20 {
		t.Fatalf("VLAN 1 → %d, VLAN 2 → %d, VLAN 3 present %v", p1, p2, ok)
	}
	if n := tb.FlushVLAN(1, false); n != 1 {
		t.Errorf("FlushVLAN removed %d", n)
	}
	if _, ok := tb.Lookup(2, mac(1)); !ok {
		t.Errorf("FlushVLAN(1) removed VLAN 2's entry")
	}
	if tb.Stats().Moved != 0 {
		t.Errorf("a MAC in another VLAN counted as a move")
	}
}

func TestShowAndStatsTextMatchOpenVSwitch(t *testing.T) {
	tb := newTable(t, Config{Capacity: 8192})
	tb.Learn(0, MAC{0x50, 0x54, 0, 0, 0, 1}, 1)
	tb.Learn(0, MAC{0x50, 0x54, 0, 0, 0, 2}, 2)
	tb.Learn(10, MAC{0x50, 0x54, 0, 0, 0, 3}, 3)
	tb.AddStatic(20, MAC{0x50, 0x54, 0, 0, 0, 0xaa}, 1)
	tb.Tick(t0.Add(3 * time.Second))
	tb.Learn(0, MAC{0x50, 0x54, 0, 0, 0, 2}, 2)
	// Captured from Open vSwitch 3.1 (dummy datapath, NORMAL, fdb/add).
	want := " port  VLAN  MAC                Age\n" +
		"    1     0  50:54:00:00:00:01    3\n" +
		"    3    10  50:54:00:00:00:03    3\n" +
		"    2     0  50:54:00:00:00:02    0\n" +
		"    1    20  50:54:00:00:00:aa  static\n"
	if got := string(AppendShow(nil, tb.Dump(), nil)); got != want {
		t.Errorf("fdb/show:\n%s\nwant:\n%s", got, want)
	}
	wantStats := "Statistics for bridge \"br0\":\n" +
		"  Current/maximum MAC entries in the table: 4/8192\n" +
		"  Current static MAC entries in the table : 1\n" +
		"  Total number of learned MAC entries     : 3\n" +
		"  Total number of expired MAC entries     : 0\n" +
		"  Total number of evicted MAC entries     : 0\n" +
		"  Total number of port moved MAC entries  : 0\n"
	if got := string(AppendStats(nil, "br0", tb.Stats())); got != wantStats {
		t.Errorf("fdb/stats-show:\n%s\nwant:\n%s", got, wantStats)
	}
	tb.ClearStats()
	if s := tb.Stats(); s.Learned != 0 || s.Current != 4 {
		t.Errorf("after ClearStats: %+v", s)
	}
	if got := string(AppendShow(nil, []Entry{{Port: 100, MAC: mac(1)}}, func(uint32) string { return "LOCAL" })); !strings.HasSuffix(got, "LOCAL     0  50:54:00:00:00:01    0\n") {
		t.Errorf("port name: %q", got)
	}
}

func TestParseMAC(t *testing.T) {
	m, err := ParseMAC("50:54:00:AB:cd:0f")
	if err != nil || m != (MAC{0x50, 0x54, 0, 0xab, 0xcd, 0x0f}) || m.String() != "50:54:00:ab:cd:0f" {
		t.Errorf("ParseMAC = %v, %v", m, err)
	}
	for _, s := range []string{"", "50:54:00:ab:cd", "50-54-00-ab-cd-0f", "50:54:00:ab:cd:0g", "zz"} {
		if _, err := ParseMAC(s); err == nil {
			t.Errorf("ParseMAC(%q) succeeded", s)
		}
	}
}

func TestShardedTableFillsToExactlyItsCapacity(t *testing.T) {
	tb := newTable(t, Config{Capacity: 100000})
	if len(tb.shards) < 4 {
		t.Fatalf("%d shards, want several", len(tb.shards))
	}
	for i := 0; i < 100000; i++ {
		tb.Learn(0, mac(i), uint32(i%3+1))
	}
	if s := tb.Stats(); s.Current != 100000 || s.Evicted != 0 {
		t.Fatalf("filled to capacity: %+v", s)
	}
	tb.Learn(0, mac(100001), 9)
	if s := tb.Stats(); s.Current != 100000 || s.Evicted != 1 {
		t.Errorf("one over capacity: %+v", s)
	}
	removed := tb.FlushPort(1, false)
	tb.Learn(0, mac(100002), 9)
	if s := tb.Stats(); removed < 33333 || s.Current != uint64(100000-removed+1) || s.Evicted != 1 {
		t.Errorf("after a flush: %+v", s)
	}
}

func TestSetAgingTimeAppliesToTheNextSweep(t *testing.T) {
	tb := newTable(t, Config{Capacity: 100})
	tb.Learn(0, mac(1), 1)
	tb.SetAgingTime(10 * time.Second)
	if tb.AgingTime() != 10*time.Second {
		t.Fatalf("AgingTime = %v", tb.AgingTime())
	}
	if tb.Sweep(t0.Add(9 * time.Second)); tb.Len() != 1 {
		t.Errorf("expired before the new aging time")
	}
	if tb.Sweep(t0.Add(10 * time.Second)); tb.Len() != 0 {
		t.Errorf("not expired at the new aging time")
	}
}

func TestTableMemoryComesFromHugePageArenaAndIsReleased(t *testing.T) {
	tb, err := New(Config{Capacity: 1 << 16}, t0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5000; i++ {
		tb.Learn(1, MAC{2, 0, 0, 0, byte(i >> 8), byte(i)}, uint32(1+i%3))
	}
	a := tb.mem
	a.mu.Lock()
	mapped := a.mapped
	a.mu.Unlock()
	if mapped == 0 || mapped%hugePage != 0 {
		t.Fatalf("arena mapped %d bytes, want a positive multiple of %d", mapped, hugePage)
	}
	if p, ok := tb.Lookup(1, MAC{2, 0, 0, 0, 0x12, 0x34}); !ok || p != uint32(1+0x1234%3) {
		t.Fatalf("lookup = %d, %v", p, ok)
	}
	a.release()
	if a.mapped != 0 || len(a.maps) != 0 {
		t.Fatalf("after release: %d bytes in %d mappings", a.mapped, len(a.maps))
	}
}
