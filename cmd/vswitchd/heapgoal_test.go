package vswitchd

import (
	"os"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

func TestGCHeadroomComesFromFlagsOrConfigFileAndIsAPercentage(t *testing.T) {
	if c := parseConfig(t); c.GCHeadroom != 25 || c.GCHeadroomMin != 64 {
		t.Errorf("defaults %d%%, %d MiB; want 25%%, 64 MiB", c.GCHeadroom, c.GCHeadroomMin)
	}
	if c := parseConfig(t, "--gc-headroom=50", "--gc-headroom-min=64"); c.GCHeadroom != 50 || c.GCHeadroomMin != 64 {
		t.Errorf("from flags %d%%, %d MiB; want 50%%, 64 MiB", c.GCHeadroom, c.GCHeadroomMin)
	}
	if c := parseConfigFile(t, "gc-headroom: 40\n"); c.GCHeadroom != 40 {
		t.Errorf("from config file %d%%, want 40%%", c.GCHeadroom)
	}
	wantConfigErrors(t, map[string]string{
		"--gc-headroom=0":      "--gc-headroom: 0 is not a percentage from 1 to 100",
		"--gc-headroom=101":    "--gc-headroom: 101 is not a percentage from 1 to 100",
		"--gc-headroom-min=-1": "--gc-headroom-min: -1 MiB is negative",
	})
}

func TestGCTrimComesFromFlagsOrConfigFile(t *testing.T) {
	if c := parseConfig(t); c.GCTrimAfter != 10*time.Second || c.GCTrimMin != 8 {
		t.Errorf("defaults %v, %d MiB; want 10s, 8 MiB", c.GCTrimAfter, c.GCTrimMin)
	}
	if c := parseConfig(t, "--gc-trim-after=0", "--gc-trim-min=32"); c.GCTrimAfter != 0 || c.GCTrimMin != 32 {
		t.Errorf("from flags %v, %d MiB; want 0s, 32 MiB", c.GCTrimAfter, c.GCTrimMin)
	}
	if c := parseConfigFile(t, "gc-trim-after: 30s\n"); c.GCTrimAfter != 30*time.Second {
		t.Errorf("from config file %v, want 30s", c.GCTrimAfter)
	}
	wantConfigErrors(t, map[string]string{
		"--gc-trim-after=-1s": "--gc-trim-after: -1s is negative",
		"--gc-trim-min=-1":    "--gc-trim-min: -1 MiB is negative",
	})
}

func runtimeGOGC() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestDaemonKeepsTheConfiguredGCHeadroomWhileItRuns: the running daemon
// sets the collector to its headroom (no floor here) and gives Go's
// default back when it stops.
func TestDaemonKeepsTheConfiguredGCHeadroomWhileItRuns(t *testing.T) {
	if g, ok := os.LookupEnv("GOGC"); ok {
		t.Fatalf("GOGC=%s in the test's environment overrides the daemon's headroom", g)
	}
	cfg := testConfig(t)
	cfg.GCHeadroom, cfg.GCHeadroomMin = 30, 0
	d, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitGOGC := func(want uint64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for runtimeGOGC() != want {
			if time.Now().After(deadline) {
				t.Fatalf("runtime GOGC %d, want %d", runtimeGOGC(), want)
			}
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitGOGC(30)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	waitGOGC(100)
}
