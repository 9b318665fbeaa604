package vsctl_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/cmd/vswitchd"
)

// startVswitchd runs gvs-vswitchd in-process with its embedded database
// and returns the database socket's path.
func startVswitchd(t *testing.T) string {
	t.Helper()
	dir := shortDir(t)
	d, err := vswitchd.Start(&vswitchd.Config{
		Program: "gvs-vswitchd", RunDir: dir, DBDir: dir, LogDir: dir,
		DBFile: filepath.Join(dir, "conf.db"), Pidfile: filepath.Join(dir, "gvs-vswitchd.pid"),
		LogFile: filepath.Join(dir, "gvs-vswitchd.log"), EnableDummy: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return filepath.Join(dir, "db.sock")
}

// TestWaitReturnsAfterVswitchdApplied checks that, without --no-wait,
// gvs-vsctl returns only once gvs-vswitchd has caught up (cur_cfg ==
// next_cfg, and the new port has its OpenFlow port number), as
// ovs-vsctl does against the same daemon.
func TestWaitReturnsAfterVswitchdApplied(t *testing.T) {
	sock := startVswitchd(t)
	db := "--db=unix:" + sock
	r := runGVS(db, "--timeout=20", "add-br", "br0", "--", "add-port", "br0", "p1", "--", "set", "Interface", "p1", "type=dummy", "ofport_request=7")
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("add-br/add-port: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = runGVS(db, "--no-wait", "get", "Interface", "p1", "ofport")
	if r.code != 0 || r.stdout != "7\n" {
		t.Fatalf("get Interface p1 ofport right after the waited command: exit %d, %q %q; want 7", r.code, r.stdout, r.stderr)
	}
	r = runGVS(db, "--no-wait", "get", "Open_vSwitch", ".", "cur_cfg", "next_cfg")
	f := strings.Fields(r.stdout)
	if r.code != 0 || len(f) != 2 || f[0] != f[1] || f[0] == "0" {
		t.Fatalf("cur_cfg next_cfg = %q (exit %d, %q), want equal and positive", r.stdout, r.code, r.stderr)
	}
	before, _ := strconv.Atoi(f[1])

	// A read-only command neither increments next_cfg nor waits.
	if r = runGVS(db, "--timeout=5", "list-br"); r.code != 0 || r.stdout != "br0\n" {
		t.Fatalf("list-br: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	// Debian's ovs-vsctl, waiting the same way against the same daemon.
	if _, err := exec.LookPath("ovs-vsctl"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("cmd/vsctl: ovs-vsctl not found; install Debian's openvswitch-common")
		}
		t.Log("cmd/vsctl: ovs-vsctl not found; skipping the comparison with it")
	} else {
		o := runOVS(t, db, "--timeout=20", "add-port", "br0", "p2", "--", "set", "Interface", "p2", "type=dummy", "ofport_request=8")
		g := runGVS(db, "--timeout=20", "add-port", "br0", "p3", "--", "set", "Interface", "p3", "type=dummy", "ofport_request=9")
		if o != g {
			t.Fatalf("ovs-vsctl %+v, gvs-vsctl %+v", o, g)
		}
		r = runGVS(db, "--no-wait", "get", "Interface", "p2", "ofport", "--", "get", "Interface", "p3", "ofport")
		if r.stdout != "8\n9\n" {
			t.Fatalf("ofports of p2, p3 = %q %q, want 8 and 9", r.stdout, r.stderr)
		}
		r = runGVS(db, "--no-wait", "get", "Open_vSwitch", ".", "next_cfg")
		if n, _ := strconv.Atoi(strings.TrimSpace(r.stdout)); n != before+2 {
			t.Fatalf("next_cfg = %q, want %d", r.stdout, before+2)
		}
	}
}

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
