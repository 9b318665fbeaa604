package vsctl_test

import (
	"testing"
	"time"
)

// TestWaitTimesOutWithoutVswitchd checks that waiting for a daemon that
// never catches up ends at --timeout with ovs-vsctl's alarm status.
func TestWaitTimesOutWithoutVswitchd(t *testing.T) {
	sock := startServer(t)
	start := time.Now()
	r := runGVS("--db=unix:"+sock, "--timeout=1", "add-br", "br0")
	if r.code != 142 || r.stderr != "gvs-vsctl: timeout\n" {
		t.Fatalf("exit %d, stderr %q; want 142 and a timeout message", r.code, r.stderr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v with --timeout=1", d)
	}
	// The change itself was committed; only the wait failed.
	if r = runGVS("--db=unix:"+sock, "--no-wait", "list-br"); r.stdout != "br0\n" {
		t.Fatalf("list-br after timeout = %q %q", r.stdout, r.stderr)
	}
}
