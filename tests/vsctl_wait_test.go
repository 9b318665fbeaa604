package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	gvsvsctl "github.com/gvs-project/gvs/cmd/vsctl"
	"github.com/gvs-project/gvs/cmd/vswitchd"
	"github.com/gvs-project/gvs/internal/ovsoracle"
)

// vsctlResult is one gvs-vsctl or ovs-vsctl command line's outcome.
type vsctlResult struct {
	stdout, stderr string
	code           int
}

// runGvsVsctl runs gvs-vsctl in-process.
func runGvsVsctl(args ...string) vsctlResult {
	var out, errOut bytes.Buffer
	code := gvsvsctl.Run(args, &out, &errOut)
	return vsctlResult{out.String(), errOut.String(), code}
}

// runOvsVsctl runs Debian's ovs-vsctl.
func runOvsVsctl(t *testing.T, args ...string) vsctlResult {
	t.Helper()
	o := ovsoracle.Tool(t, nil, "ovs-vsctl", args...)
	return vsctlResult{o.Stdout, o.Stderr, o.Code}
}

// startVswitchd runs gvs-vswitchd in-process with its embedded database
// and returns the database socket's path.
func startVswitchdForVsctl(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "gvsvsctl") // short enough for sun_path
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
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

// TestVsctlWaitReturnsAfterVswitchdApplied checks that, without --no-wait,
// gvs-vsctl returns only once gvs-vswitchd has caught up (cur_cfg ==
// next_cfg, and the new port has its OpenFlow port number), as
// ovs-vsctl does against the same daemon.
func TestVsctlWaitReturnsAfterVswitchdApplied(t *testing.T) {
	sock := startVswitchdForVsctl(t)
	db := "--db=unix:" + sock
	r := runGvsVsctl(db, "--timeout=20", "add-br", "br0", "--", "add-port", "br0", "p1", "--", "set", "Interface", "p1", "type=dummy", "ofport_request=7")
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("add-br/add-port: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = runGvsVsctl(db, "--no-wait", "get", "Interface", "p1", "ofport")
	if r.code != 0 || r.stdout != "7\n" {
		t.Fatalf("get Interface p1 ofport right after the waited command: exit %d, %q %q; want 7", r.code, r.stdout, r.stderr)
	}
	r = runGvsVsctl(db, "--no-wait", "get", "Open_vSwitch", ".", "cur_cfg", "next_cfg")
	f := strings.Fields(r.stdout)
	if r.code != 0 || len(f) != 2 || f[0] != f[1] || f[0] == "0" {
		t.Fatalf("cur_cfg next_cfg = %q (exit %d, %q), want equal and positive", r.stdout, r.code, r.stderr)
	}
	before, _ := strconv.Atoi(f[1])

	// A read-only command neither increments next_cfg nor waits.
	if r = runGvsVsctl(db, "--timeout=5", "list-br"); r.code != 0 || r.stdout != "br0\n" {
		t.Fatalf("list-br: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	// Debian's ovs-vsctl, waiting the same way against the same daemon.
	if _, err := exec.LookPath("ovs-vsctl"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("ovs-vsctl not found; install Debian's openvswitch-common")
		}
		t.Log("ovs-vsctl not found; skipping the comparison with it")
	} else {
		o := runOvsVsctl(t, db, "--timeout=20", "add-port", "br0", "p2", "--", "set", "Interface", "p2", "type=dummy", "ofport_request=8")
		g := runGvsVsctl(db, "--timeout=20", "add-port", "br0", "p3", "--", "set", "Interface", "p3", "type=dummy", "ofport_request=9")
		if o != g {
			t.Fatalf("ovs-vsctl %+v, gvs-vsctl %+v", o, g)
		}
		r = runGvsVsctl(db, "--no-wait", "get", "Interface", "p2", "ofport", "--", "get", "Interface", "p3", "ofport")
		if r.stdout != "8\n9\n" {
			t.Fatalf("ofports of p2, p3 = %q %q, want 8 and 9", r.stdout, r.stderr)
		}
		r = runGvsVsctl(db, "--no-wait", "get", "Open_vSwitch", ".", "next_cfg")
		if n, _ := strconv.Atoi(strings.TrimSpace(r.stdout)); n != before+2 {
			t.Fatalf("next_cfg = %q, want %d", r.stdout, before+2)
		}
	}
}
