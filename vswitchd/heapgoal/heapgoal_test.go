package heapgoal

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestGCPercentKeepsPercentOfLiveAboveTheFloorUpToGosDefault(t *testing.T) {
	const mib = 1 << 20
	p := Policy{Percent: 25, Min: 16 * mib}
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100},         // nothing measured yet: Go's default
		{8 * mib, 100},   // the floor would be 200 %: capped at Go's default
		{16 * mib, 100},  // the floor is exactly Go's default
		{32 * mib, 50},   // the floor: 16 MiB on 32
		{64 * mib, 25},   // the floor equals the percentage
		{1024 * mib, 25}, // the percentage
		{48*mib + 1, 34}, // rounded up: never less headroom than the floor
	} {
		if got := p.GCPercent(c.live); got != c.want {
			t.Errorf("GCPercent(%d) = %d, want %d", c.live, got, c.want)
		}
	}
	if got := (Policy{Percent: 100}).GCPercent(1024 * mib); got != 100 {
		t.Errorf("Percent 100: GCPercent = %d, want 100", got)
	}
	if got := (Policy{}).GCPercent(1024 * mib); got != 1 {
		t.Errorf("zero Policy: GCPercent = %d, want 1 (never 0, which would collect without pause)", got)
	}
}

func gogc() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

func TestTunerSetsTheCollectorAfterEachCollectionAndRestoresGosDefault(t *testing.T) {
	live := make([][]byte, 64) // 64 MiB kept live
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tu := Start(ctx, Policy{Percent: 20, Min: 4 << 20})
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		pct, cycles := tu.Current()
		if cycles >= 2 && pct == 20 && gogc() == 20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: tuner at %d%% after %d collections, runtime GOGC %d; want 20 after at least 2", pct, cycles, gogc())
		}
		time.Sleep(10 * time.Millisecond)
	}
	runtime.KeepAlive(live)
	cancel()
	deadline = time.Now().Add(10 * time.Second)
	for gogc() != DefaultPercent {
		if time.Now().After(deadline) {
			t.Fatalf("runtime GOGC %d after the tuner stopped, want %d", gogc(), DefaultPercent)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A stopped tuner no longer sets the collector.
	_, before := tu.Current()
	runtime.GC()
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if _, after := tu.Current(); after != before || gogc() != DefaultPercent {
		t.Errorf("stopped tuner: collections seen %d -> %d, GOGC %d", before, after, gogc())
	}
}

var sink [][]byte

// garbage allocates n MiB and drops them, no collection in between (the
// tests turn the collector off).
func garbage(n int) {
	for range n {
		sink = append(sink, make([]byte, 1<<20))
	}
	sink = nil
}

func waitTrims(t *testing.T, tr *Trimmer, want uint64) (freed uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, freed := tr.Trims()
		if n == want {
			return freed
		}
		if n > want || time.Now().After(deadline) {
			t.Fatalf("%d trims, want %d", n, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startTestTrimmer starts a Trimmer of 200 ms and threshold min with the
// collector off, so that no collection but the trim's comes to find the
// garbage, as in a quiet daemon; both end with the test.
func startTestTrimmer(t *testing.T, min uint64) *Trimmer {
	prev := debug.SetGCPercent(-1)
	runtime.GC()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); debug.SetGCPercent(prev) })
	return StartTrim(ctx, 200*time.Millisecond, min)
}

func TestTrimmerReturnsGarbageOnceTheDaemonIsQuiet(t *testing.T) {
	tr := startTestTrimmer(t, 8<<20)
	garbage(64)
	_, reclaimable := tr.read()
	if reclaimable < 60<<20 {
		t.Fatalf("%d bytes reclaimable after 64 MiB of garbage, want at least 60 MiB", reclaimable)
	}
	if freed := waitTrims(t, tr, 1); freed < 60<<20 {
		t.Errorf("the trim expected to return %d bytes, want at least 60 MiB", freed)
	}
	if _, reclaimable := tr.read(); reclaimable >= 8<<20 {
		t.Errorf("%d bytes still free or garbage after the trim, want under 8 MiB", reclaimable)
	}
	// Quiet periods with nothing to return: no second trim.
	time.Sleep(700 * time.Millisecond)
	if n, _ := tr.Trims(); n != 1 {
		t.Errorf("%d trims after quiet periods with nothing to return, want 1", n)
	}
}

func TestTrimmerWaitsWhileTheDaemonAllocates(t *testing.T) {
	tr := startTestTrimmer(t, 8<<20)
	// 16 MiB every 50 ms for a second: every period is busy.
	for range 20 {
		garbage(16)
		time.Sleep(50 * time.Millisecond)
	}
	if n, _ := tr.Trims(); n != 0 {
		t.Fatalf("trimmed %d times while allocating, want 0", n)
	}
	waitTrims(t, tr, 1)
}

func TestTrimmerDisabledNeverTrims(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := StartTrim(ctx, 0, 0)
	garbage(16)
	time.Sleep(50 * time.Millisecond)
	if n, _ := tr.Trims(); n != 0 {
		t.Errorf("disabled trimmer trimmed %d times", n)
	}
}

// A threshold of 0 is taken as 1 MiB: with 0 no period would count as quiet
// (any allocation is at least a quarter of it) and nothing was ever trimmed.
func TestTrimmerWithNoThresholdStillTrims(t *testing.T) {
	tr := startTestTrimmer(t, 0)
	garbage(16)
	waitTrims(t, tr, 1)
}
