package vswitchd

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/datapath/dpif"
)

// parseConfig runs the daemon's command line parser and returns the
// configuration it would start with.
func parseConfig(t *testing.T, args ...string) *Config {
	t.Helper()
	var got *Config
	cmd := NewCommand("gvs-vswitchd", func(c *Config) error { got = c; return nil })
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestMetricsAddressComesFromFlagEnvironmentOrConfigFile(t *testing.T) {
	if got := parseConfig(t).MetricsAddress; got != "" {
		t.Errorf("default metrics address %q, want off", got)
	}
	if got := parseConfig(t, "--metrics-address=127.0.0.1:9475").MetricsAddress; got != "127.0.0.1:9475" {
		t.Errorf("from flag: %q", got)
	}
	file := filepath.Join(t.TempDir(), "gvs.yaml")
	if err := os.WriteFile(file, []byte("metrics-address: \"[::1]:9100\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := parseConfig(t, "--config", file).MetricsAddress; got != "[::1]:9100" {
		t.Errorf("from config file: %q", got)
	}
	t.Setenv("GVS_METRICS_ADDRESS", "127.0.0.1:9200")
	if got := parseConfig(t).MetricsAddress; got != "127.0.0.1:9200" {
		t.Errorf("from GVS_METRICS_ADDRESS: %q", got)
	}
	if got := parseConfig(t, "--metrics-address=127.0.0.1:9300").MetricsAddress; got != "127.0.0.1:9300" {
		t.Errorf("flag over environment: %q", got)
	}
}

func testConfig(t *testing.T) *Config {
	dir := t.TempDir()
	return &Config{Program: "gvs-vswitchd", RunDir: dir, DBDir: dir, LogDir: dir, DBFile: filepath.Join(dir, "conf.db")}
}

func TestStartFailsWhenTheMetricsAddressIsTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := testConfig(t)
	cfg.MetricsAddress = ln.Addr().String()
	d, err := Start(cfg)
	if err == nil {
		d.Close()
		t.Fatal("Start succeeded on a taken metrics address")
	}
	if !strings.Contains(err.Error(), "metrics: listening on "+cfg.MetricsAddress) {
		t.Errorf("error %q does not name the metrics address", err)
	}
}

func TestPmdStatsShowPrintsOpenVSwitchLines(t *testing.T) {
	var b strings.Builder
	writePmdStats(&b, dpif.Stats{EMCHit: 4, MegaflowHit: 6, Missed: 2, Recirc: 3, UpcallOK: 1, UpcallFail: 1, Lookups: 9})
	want := `  packets received: 9
  packet recirculations: 3
  avg. datapath passes per packet: 1.33
  phwol hits: 0
  mfex opt hits: 0
  simple match hits: 0
  emc hits: 4
  smc hits: 0
  megaflow hits: 6
  avg. subtable lookups per megaflow hit: 1.50
  miss with success upcall: 1
  miss with failed upcall: 1
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	writePmdStats(&b, dpif.Stats{})
	if !strings.Contains(b.String(), "  avg. datapath passes per packet: 0.00\n") || !strings.Contains(b.String(), "per megaflow hit: 0.00\n") {
		t.Errorf("idle thread:\n%s", b.String())
	}
}

func TestPmdStatsShowSelectsWorkerAndRejectsBadArguments(t *testing.T) {
	cfg := testConfig(t)
	cfg.Unixctl = "none"
	cfg.Workers = 2
	d, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.sw.Datapath("dummy")
	ctx := context.Background()
	out, err := d.cmdPmdStatsShow(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "pmd thread numa_id 0 core_id "); n != 2 {
		t.Errorf("%d thread sections for 2 workers:\n%s", n, out)
	}
	out, err = d.cmdPmdStatsShow(ctx, []string{"-pmd", "1", "dummy@ovs-dummy"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "pmd thread numa_id 0 core_id 1:\n") || strings.Count(out, "pmd thread") != 1 {
		t.Errorf("-pmd 1:\n%s", out)
	}
	for _, args := range [][]string{{"-pmd"}, {"-pmd", "x"}, {"-pmd", "-1"}, {"nosuch@dp"}} {
		if _, err := d.cmdPmdStatsShow(ctx, args); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}
