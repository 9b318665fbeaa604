package dpnetdev

import (
	"testing"

	"github.com/gvs-project/gvs/datapath/dpif"
)

func TestMissBudgetAppliesOnlyWhileSaturatedWithHitsWaiting(t *testing.T) {
	dp := New("t", dpif.Config{})
	w := dp.workerList()[0]
	b := &w.budget
	t0 := int64(1e12)
	b.roll(w, t0, 32)
	b.upcallNs = missWindow // a whole window of upcalls
	if b.limited || !b.admit(w, t0+1) {
		t.Fatal("budget applied with no megaflow hit in the last window")
	}
	w.stats.megaflowHit.Add(10)
	b.roll(w, t0+missWindow, 32)
	if !b.limited {
		t.Fatal("saturated window with hits: budget not applied")
	}
	start := t0 + missWindow
	b.upcallNs = missWindow / 10 // 10% of a window spent in upcalls
	if b.admit(w, start+missWindow/2) {
		t.Error("10% of a window used after half of it: admitted with a 10% share")
	}
	if !b.admit(w, start+missWindow) {
		t.Error("10% of a window used after all of it: refused with a 10% share")
	}
	// An idle round makes the next window unlimited.
	b.roll(w, start+1, 0)
	w.stats.megaflowHit.Add(10)
	b.roll(w, start+2*missWindow, 32)
	if b.limited {
		t.Error("budget applied after a window with an idle round")
	}
	// Busy but not backing up (rounds of a few packets): unlimited.
	for i := int64(1); i <= 10; i++ {
		b.roll(w, start+3*missWindow+i, 5)
	}
	w.stats.megaflowHit.Add(10)
	b.roll(w, start+4*missWindow, 5)
	if b.limited {
		t.Error("budget applied to a worker whose rounds never filled a batch")
	}
	// A share of 0 turns the budget off.
	dp.SetMissShare(0)
	w.stats.megaflowHit.Add(10)
	b.roll(w, start+5*missWindow, 32)
	if b.limited {
		t.Error("budget applied with a share of 0")
	}
}
