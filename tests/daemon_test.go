package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// daemonBinary builds gvs-vswitchd once per test run.
func daemonBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "gvs-bin")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, "gvs-vswitchd"), "github.com/gvs-project/gvs/cmd/gvs-vswitchd").CombinedOutput()
		if err != nil {
			buildErr = &buildError{string(out)}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, "gvs-vswitchd")
}

type buildError struct{ out string }

func (e *buildError) Error() string { return "building gvs-vswitchd: " + e.out }

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStandsInForOvsVswitchdUnderItsName starts the daemon through a link
// named ovs-vswitchd with ovs-vswitchd's own command line, as Open
// vSwitch's test suite does: it detaches once ready, names its pidfile and
// control socket ovs-vswitchd.*, uses the ovsdb-server given as DATABASE,
// and `ovs-appctl` with no -t reaches it.
func TestStandsInForOvsVswitchdUnderItsName(t *testing.T) {
	for _, b := range []string{"ovsdb-tool", "ovsdb-server", "ovs-vsctl", "ovs-appctl"} {
		nstest.RequireBinary(t, b, "openvswitch-switch")
	}
	bin := daemonBinary(t)
	dir := t.TempDir()
	link := filepath.Join(dir, "ovs-vswitchd")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
	db := filepath.Join(dir, "conf.db")
	run(t, env, "ovsdb-tool", "create", db, "/usr/share/openvswitch/vswitch.ovsschema")
	run(t, env, "ovsdb-server", db, "--remote=punix:"+filepath.Join(dir, "db.sock"), "--pidfile", "--detach", "--log-file")
	t.Cleanup(func() {
		c := exec.Command("ovs-appctl", "-t", "ovsdb-server", "exit")
		c.Env = env
		c.Run()
	})
	run(t, env, "ovs-vsctl", "--no-wait", "init")
	run(t, env, link, "unix:"+filepath.Join(dir, "db.sock"), "--enable-dummy", "--disable-system", "--disable-system-route",
		"--detach", "--no-chdir", "--pidfile", "--log-file", "-vvconn", "-vofproto_dpif", "-vunixctl")
	t.Cleanup(func() {
		c := exec.Command("ovs-appctl", "exit")
		c.Env = env
		c.Run()
	})
	if _, err := os.Stat(filepath.Join(dir, "ovs-vswitchd.pid")); err != nil {
		t.Fatalf("no ovs-vswitchd.pid after --detach returned: %v", err)
	}
	if got := run(t, env, "ovs-appctl", "version"); !strings.HasPrefix(got, "ovs-vswitchd (gvs) ") {
		t.Fatalf("ovs-appctl version = %q", got)
	}
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
		"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=3")
	if got := strings.TrimSpace(run(t, env, "ovs-vsctl", "get", "interface", "p1", "ofport")); got != "3" {
		t.Fatalf("ofport = %s, want 3", got)
	}
}

// TestSigtermShutsDownCleanly: the daemon removes its pidfile and sockets
// and exits 0 on SIGTERM; the database file keeps what was committed.
func TestSigtermShutsDownCleanly(t *testing.T) {
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	bin := daemonBinary(t)
	dir := t.TempDir()
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
	cmd := exec.Command(bin)
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pidfile := filepath.Join(dir, "gvs-vswitchd.pid")
	waitFor(t, "the pidfile", func() bool { _, err := os.Stat(pidfile); return err == nil })
	waitFor(t, "db.sock", func() bool {
		c := exec.Command("ovs-vsctl", "--no-wait", "--timeout=1", "show")
		c.Env = env
		return c.Run() == nil
	})
	run(t, env, "ovs-vsctl", "--timeout=20", "init")
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br7", "--", "set", "bridge", "br7", "datapath_type=dummy")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	for _, f := range []string{"gvs-vswitchd.pid", "db.sock"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s left behind after shutdown", f)
		}
	}
	ctl, _ := filepath.Glob(filepath.Join(dir, "*.ctl"))
	if len(ctl) != 0 {
		t.Errorf("control sockets left behind: %v", ctl)
	}
	// Restart on the same files: the bridge is still configured.
	cmd = exec.Command(bin)
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	waitFor(t, "restart", func() bool {
		c := exec.Command("ovs-vsctl", "--no-wait", "--timeout=1", "list-br")
		c.Env = env
		out, err := c.Output()
		return err == nil && string(out) == "br7\n"
	})
}
