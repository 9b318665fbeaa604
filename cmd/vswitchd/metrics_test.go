package vswitchd

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// parseConfigFile is parseConfig of a --config file holding content.
func parseConfigFile(t *testing.T, content string) *Config {
	t.Helper()
	file := filepath.Join(t.TempDir(), "gvs.yaml")
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return parseConfig(t, "--config", file)
}

// wantConfigErrors checks that each argument alone is refused with an
// error containing its text.
func wantConfigErrors(t *testing.T, errs map[string]string) {
	t.Helper()
	for arg, want := range errs {
		cmd := NewCommand("gvs-vswitchd", func(*Config) error { return nil })
		cmd.SetArgs([]string{arg})
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", arg, err, want)
		}
	}
}

func TestMetricsAddressComesFromFlagEnvironmentOrConfigFile(t *testing.T) {
	if got := parseConfig(t).MetricsAddress; got != "" {
		t.Errorf("default metrics address %q, want off", got)
	}
	if got := parseConfig(t, "--metrics-address=127.0.0.1:9475").MetricsAddress; got != "127.0.0.1:9475" {
		t.Errorf("from flag: %q", got)
	}
	if got := parseConfigFile(t, "metrics-address: \"[::1]:9100\"\n").MetricsAddress; got != "[::1]:9100" {
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
