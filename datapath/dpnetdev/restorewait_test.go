package dpnetdev

import (
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
)

func TestRestoreWaitDropsMissesWithoutUpcallsAndForwardsInstalledFlows(t *testing.T) {
	s := newTestSwitch(t, 3, dpif.DefaultConfig())
	h := &portHandler{install: true}
	s.dp.SetUpcallHandler(h)
	putFlow(t, s.dp, inPortMatch(3), "2")
	s.dp.SetRestoreWait(true)
	if !s.dp.RestoreWait() {
		t.Fatal("RestoreWait() = false after SetRestoreWait(true)")
	}
	s.send(1, udpFrame(1), udpFrame(2)) // misses
	s.send(3, udpFrame(3))              // the installed megaflow
	if n := h.misses.Load(); n != 0 {
		t.Fatalf("handler saw %d misses during flow-restore-wait, want 0", n)
	}
	if n := len(s.ports[2].Captured()); n != 1 {
		t.Fatalf("port 2 sent %d frames, want 1 (from the installed megaflow)", n)
	}
	st := s.dp.Stats()
	if st.Missed != 2 || st.Lost != 2 || st.UpcallOK != 0 || st.Flows != 1 {
		t.Fatalf("stats = %+v, want missed=2 lost=2 upcall_ok=0 flows=1", st)
	}
	s.dp.SetRestoreWait(false)
	s.send(1, udpFrame(4))
	if n := h.misses.Load(); n != 1 {
		t.Fatalf("handler saw %d misses after flow-restore-wait, want 1", n)
	}
	if st := s.dp.Stats(); st.Flows != 2 || st.UpcallOK != 1 {
		t.Fatalf("stats = %+v, want flows=2 upcall_ok=1", st)
	}
}

func TestRestoreWaitStopsIdleExpiryUntilCleared(t *testing.T) {
	cfg := dpif.DefaultConfig()
	cfg.MaxIdle = time.Millisecond
	s := newTestSwitch(t, 2, cfg)
	s.dp.SetRestoreWait(true)
	putFlow(t, s.dp, inPortMatch(1), "2")
	if err := s.dp.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1200 * time.Millisecond) // two sweeper passes
	if n := s.dp.Stats().Flows; n != 1 {
		t.Fatalf("%d megaflows after two sweeps during flow-restore-wait, want 1", n)
	}
	s.dp.SetRestoreWait(false)
	deadline := time.Now().Add(3 * time.Second)
	for s.dp.Stats().Flows != 0 {
		if time.Now().After(deadline) {
			t.Fatal("idle megaflow not expired after flow-restore-wait was cleared")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
