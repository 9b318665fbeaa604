// Package ovsoracle starts Open vSwitch's own daemons (Debian's
// ovsdb-server and ovs-vswitchd, and OVN's ovn-northd and ovn-controller)
// for differential tests, each in a private directory, and stops them by
// PID when the test ends. It also holds the normalizers that hide what
// legitimately differs between two switches or two runs
// (normalize.go), so that every diff test masks the same way.
//
// Under CI=true a missing binary fails the test; elsewhere it skips it.
//
// Test code only: it imports only the standard library, never gvs's
// layers (datapath, ofproto, ovsdb, cmd), so that the oracle cannot
// depend on what it judges.
package ovsoracle

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// SchemaDir is where Debian's openvswitch-common installs the
// Open_vSwitch schema.
const SchemaDir = "/usr/share/openvswitch"

// The Debian packages that provide each binary, for the message a
// missing one gives.
var debianPackage = map[string]string{
	"ovsdb-tool":     "openvswitch-common",
	"ovs-appctl":     "openvswitch-common",
	"ovs-ofctl":      "openvswitch-common",
	"ovsdb-server":   "openvswitch-switch",
	"ovs-vswitchd":   "openvswitch-switch",
	"ovs-vsctl":      "openvswitch-switch",
	"ovn-northd":     "ovn-central",
	"ovn-nbctl":      "ovn-central",
	"ovn-sbctl":      "ovn-central",
	"ovn-controller": "ovn-host",
}

// SwitchBinaries are the binaries Start runs and the ones tests drive
// it with.
var SwitchBinaries = []string{"ovsdb-tool", "ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovs-appctl", "ovs-ofctl"}

// Require fails t under CI=true, and skips it elsewhere, unless every
// named binary is on PATH.
func Require(t testing.TB, binaries ...string) {
	t.Helper()
	for _, b := range binaries {
		if _, err := exec.LookPath(b); err == nil {
			continue
		}
		pkg := debianPackage[b]
		if pkg == "" {
			pkg = "openvswitch-switch"
		}
		if os.Getenv("CI") == "true" {
			t.Fatalf("test needs %s (Debian package %s)", b, pkg)
		}
		t.Skipf("skipping, test needs %s (Debian package %s)", b, pkg)
	}
}

// Options says how to start Open vSwitch.
type Options struct {
	// Netdev runs ovs-vswitchd with its default datapaths (the
	// userspace netdev datapath on real devices, which creates tap
	// devices in this namespace) instead of the dummy datapath only
	// (--enable-dummy --disable-system).
	Netdev bool
	// Init runs `ovs-vsctl --no-wait init` before ovs-vswitchd starts.
	Init bool
	// VswitchdArgs are more ovs-vswitchd options (e.g. --dummy-numa).
	VswitchdArgs []string
}

// Switch is a private ovsdb-server and ovs-vswitchd that this test
// started. Its files (database, sockets, pidfiles, logs) are in Dir.
type Switch struct {
	t   testing.TB
	Dir string
	// Env is the environment for ovs-vsctl, ovs-ofctl and ovs-appctl:
	// OVS_RUNDIR and the other directories point into Dir.
	Env []string

	server, vswitchd *exec.Cmd
	stopOnce         sync.Once
}

// Start runs ovsdb-server and ovs-vswitchd in the foreground (the test
// owns their processes) and returns once ovs-vswitchd's control socket
// exists. Both are stopped at cleanup, or earlier by Stop. When the test
// fails, the tail of each daemon's log is logged.
func Start(t testing.TB, opt Options) *Switch {
	t.Helper()
	Require(t, SwitchBinaries...)
	dir := t.TempDir()
	s := &Switch{t: t, Dir: dir}
	s.Env = append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir,
		"OVS_SYSCONFDIR="+dir, "OVS_PKGDATADIR="+SchemaDir)
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			s.logTails("ovsdb-server.log", "ovs-vswitchd.log")
		}
	})
	db := s.Path("conf.db")
	s.Run("ovsdb-tool", "create", db, filepath.Join(SchemaDir, "vswitch.ovsschema"))
	s.server = s.spawn("ovsdb-server", "--remote=punix:"+s.DBSock(), "--pidfile="+s.Path("ovsdb-server.pid"),
		"--log-file="+s.Path("ovsdb-server.log"), "--no-chdir", db)
	s.waitForFile("ovsdb-server's database socket", s.DBSock())
	if opt.Init {
		s.Vsctl("--no-wait", "init")
	}
	var dp []string
	if !opt.Netdev {
		dp = []string{"--enable-dummy", "--disable-system"}
	}
	dp = append(dp, opt.VswitchdArgs...)
	s.vswitchd = s.spawn("ovs-vswitchd", append(dp, "--no-chdir",
		"--log-file="+s.Path("ovs-vswitchd.log"), "--pidfile="+s.Path("ovs-vswitchd.pid"),
		"unix:"+s.DBSock())...)
	s.waitForFile("ovs-vswitchd's control socket", s.Path(fmt.Sprintf("ovs-vswitchd.%d.ctl", s.vswitchd.Process.Pid)))
	return s
}

// spawn starts a daemon in the foreground in Dir.
func (s *Switch) spawn(name string, args ...string) *exec.Cmd {
	s.t.Helper()
	c := exec.Command(name, args...)
	c.Env, c.Dir = s.Env, s.Dir
	if err := c.Start(); err != nil {
		s.t.Fatalf("starting %s: %v", name, err)
	}
	return c
}

// Path is the name of a file in the switch's directory.
func (s *Switch) Path(name string) string { return filepath.Join(s.Dir, name) }

// DBSock is ovsdb-server's unix socket.
func (s *Switch) DBSock() string { return s.Path("db.sock") }

// Mgmt is bridge's OpenFlow management socket.
func (s *Switch) Mgmt(bridge string) string { return s.Path(bridge + ".mgmt") }

// VswitchdCtl is ovs-vswitchd's unixctl socket (ovs-appctl -t).
func (s *Switch) VswitchdCtl() string {
	return s.Path(fmt.Sprintf("ovs-vswitchd.%d.ctl", s.vswitchd.Process.Pid))
}

// Stop stops ovs-vswitchd and then ovsdb-server and waits for both.
// ovs-vswitchd is asked first to `exit --cleanup`, as Open vSwitch's own
// test suite stops it: on a signal it would leave its persistent tap
// devices (a netdev bridge's, ovs-netdev) behind for the next test.
// Then SIGTERM, SIGKILL after a grace period. Later calls do nothing.
func (s *Switch) Stop() {
	s.stopOnce.Do(func() {
		if s.vswitchd != nil && s.vswitchd.Process != nil {
			c := exec.Command("ovs-appctl", "--timeout=5", "-t", s.VswitchdCtl(), "exit", "--cleanup")
			c.Env = s.Env
			c.Run() // a daemon that is already gone has nothing to clean
		}
		stopProcess(s.vswitchd)
		stopProcess(s.server)
	})
}

// stopGrace is how long a daemon gets to exit after SIGTERM.
const stopGrace = 3 * time.Second

// stopProcess ends a process this package started, by its PID.
func stopProcess(c *exec.Cmd) {
	if c == nil || c.Process == nil {
		return
	}
	done := make(chan struct{})
	go func() { c.Wait(); close(done) }()
	c.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(stopGrace):
		c.Process.Kill()
		<-done
	}
}

// Run runs a command with the switch's environment in its directory and
// returns its combined output; a failure fails the test.
func (s *Switch) Run(name string, args ...string) string {
	s.t.Helper()
	out, err := s.Try(name, args...)
	if err != nil {
		s.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// Try runs a command like Run but returns its error (an *exec.ExitError
// for a non-zero exit) instead of failing the test.
func (s *Switch) Try(name string, args ...string) (string, error) {
	c := exec.Command(name, args...)
	c.Env, c.Dir = s.Env, s.Dir
	b, err := c.CombinedOutput()
	return string(b), err
}

// Vsctl runs ovs-vsctl against the switch's database.
func (s *Switch) Vsctl(args ...string) string {
	s.t.Helper()
	return s.Run("ovs-vsctl", append([]string{"--db=unix:" + s.DBSock(), "--timeout=20"}, args...)...)
}

// Appctl runs ovs-appctl against ovs-vswitchd.
func (s *Switch) Appctl(args ...string) string {
	s.t.Helper()
	return s.Run("ovs-appctl", append([]string{"-t", s.VswitchdCtl()}, args...)...)
}

// Receive injects a packet (datapath flow syntax or hex) on a dummy port.
func (s *Switch) Receive(port, pkt string) {
	s.t.Helper()
	s.Appctl("netdev-dummy/receive", port, pkt)
}

// waitForFile polls for a file to appear, up to 10 s.
func (s *Switch) waitForFile(what, path string) {
	s.t.Helper()
	if err := WaitFor(10*time.Second, func() bool { _, err := os.Stat(path); return err == nil }); err != nil {
		s.t.Fatalf("%s (%s) did not appear", what, path)
	}
}

// ErrTimeout is what WaitFor returns when the condition never held.
var ErrTimeout = errors.New("condition not met before the deadline")

// WaitFor polls cond every 20 ms until it holds or d has passed.
func WaitFor(d time.Duration, cond func() bool) error {
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			return ErrTimeout
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// logTails logs the last 4000 bytes of each named log in Dir.
func (s *Switch) logTails(names ...string) { logTails(s.t, s.Dir, names...) }

func logTails(t testing.TB, dir string, names ...string) {
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		t.Logf("%s (tail):\n%s", name, b)
	}
}

// Outcome is what one command line of an Open vSwitch tool printed and
// its exit code.
type Outcome struct {
	Stdout, Stderr string
	Code           int
}

// Tool runs an Open vSwitch client (ovs-vsctl, ovs-ofctl, ...) with env
// (nil: this process's) and returns its outcome; a non-zero exit is an
// outcome, not an error, as tests compare exit codes too. It fails t only
// when the tool cannot be run at all.
func Tool(t testing.TB, env []string, name string, args ...string) Outcome {
	t.Helper()
	var out, errOut bytes.Buffer
	c := exec.Command(name, args...)
	c.Env = env
	c.Stdout, c.Stderr = &out, &errOut
	err := c.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return Outcome{out.String(), errOut.String(), code}
}
