package upcall

import (
	"testing"
	"time"
)

// The dynamic limit follows Open vSwitch 3.1's udpif_revalidator: it
// starts at min(flow-limit, 10000), shrinks after slow rounds, grows by
// 1000 after fast rounds that were the bottleneck, and stays within
// [1000, flow-limit].
func TestFlowLimitAdjustsToRevalidationRoundDuration(t *testing.T) {
	ms := time.Millisecond
	steps := []struct {
		name   string
		nflows int
		d      time.Duration
		want   int
	}{
		{"fast round, limit below dump rate: +1000", 5000, 100 * ms, 11000},
		{"fast round, limit above dump rate: unchanged", 5000, 900 * ms, 11000},
		{"between 1 s and 1.3 s: unchanged", 20000, 1200 * ms, 11000},
		{"over 1.3 s: three quarters", 20000, 1500 * ms, 8250},
		{"over 2 s: divided by whole seconds", 20000, 3500 * ms, 2750},
		{"2.5 s: divided by 2", 20000, 2500 * ms, 1375},
		{"very slow: floor of 1000", 20000, 10 * time.Second, 1000},
		{"zero duration counts as 1 ms", 3000, 0, 2000},
	}
	l := NewFlowLimit(0)
	if got := l.Limit(); got != 10000 {
		t.Fatalf("initial limit %d, want 10000", got)
	}
	for _, s := range steps {
		if got := l.Round(s.nflows, s.d); got != s.want {
			t.Fatalf("%s: limit %d, want %d", s.name, got, s.want)
		}
	}
	st := l.Status()
	if st.Max != 20000 || st.DumpDuration != time.Millisecond || st.Limit != 2000 {
		t.Errorf("status %+v, want max 20000, dump 1ms, limit 2000", st)
	}
}

func TestFlowLimitStaysWithinTheConfiguredCeiling(t *testing.T) {
	l := NewFlowLimit(2500)
	if got := l.Limit(); got != 2500 {
		t.Fatalf("initial limit %d, want 2500 (the ceiling)", got)
	}
	for i := 0; i < 5; i++ {
		if got := l.Round(100000, time.Millisecond); got != 2500 {
			t.Fatalf("round %d: limit %d, want the ceiling 2500", i, got)
		}
	}
	l.SetCeiling(500) // below the floor: the ceiling wins
	if got := l.Round(100000, time.Millisecond); got != 500 {
		t.Fatalf("limit %d after lowering the ceiling to 500", got)
	}
	l.SetCeiling(4000)
	if got := l.Round(100000, time.Millisecond); got != 1500 {
		t.Fatalf("limit %d after raising the ceiling to 4000, want 1500 (one step up)", got)
	}
}

func TestFlowLimitRefusesAndCountsMissesAtTheLimit(t *testing.T) {
	l := NewFlowLimit(1500)
	if !l.Admit(1499) {
		t.Fatal("1499 flows under a limit of 1500 refused")
	}
	for i := 0; i < 3; i++ {
		if l.Admit(1500 + i) {
			t.Fatalf("%d flows at a limit of 1500 admitted", 1500+i)
		}
	}
	if h := l.Status().Hits; h != 3 {
		t.Errorf("hits %d, want 3", h)
	}
	if p := l.policy(1500); p.over || p.killAll {
		t.Errorf("at the limit: %+v, want neither over nor kill-all", p)
	}
	if p := l.policy(1501); !p.over || p.killAll {
		t.Errorf("just over the limit: %+v", p)
	}
	if p := l.policy(3001); !p.over || !p.killAll {
		t.Errorf("over twice the limit: %+v", p)
	}
}

// Bridges sharing a datapath each run rounds over all its megaflows;
// only one adjustment is made per interval.
func TestFlowLimitAdjustsOncePerIntervalAcrossBridges(t *testing.T) {
	l := NewFlowLimit(0)
	t0 := time.Unix(1000, 0)
	if !l.roundIfDue(t0, 250*time.Millisecond, 50000, time.Millisecond) {
		t.Fatal("first round not applied")
	}
	if l.roundIfDue(t0.Add(100*time.Millisecond), 250*time.Millisecond, 50000, time.Millisecond) {
		t.Fatal("second bridge's round within the interval applied")
	}
	if !l.roundIfDue(t0.Add(300*time.Millisecond), 250*time.Millisecond, 50000, time.Millisecond) {
		t.Fatal("round after the interval not applied")
	}
	if got := l.Limit(); got != 12000 {
		t.Errorf("limit %d, want 12000", got)
	}
}
