package ovsoracle

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// OVNSchemaDir is where Debian's ovn-common installs OVN's schemas.
const OVNSchemaDir = "/usr/share/ovn"

// OVNCentral is OVN's northbound and southbound ovsdb-servers and
// ovn-northd, all in Dir (files nb.*, sb.*, northd.*).
type OVNCentral struct {
	Dir    string
	NB, SB string // database sockets
}

// StartOVNCentral runs OVN's NB and SB databases and ovn-northd in dir
// (detached, as ovn-ctl runs them); each is stopped by its PID at
// cleanup. When the test fails, northd's log tail is logged.
func StartOVNCentral(t testing.TB, dir string) *OVNCentral {
	t.Helper()
	Require(t, "ovsdb-tool", "ovsdb-server", "ovn-northd")
	c := &OVNCentral{Dir: dir}
	// Default files (ovn-northd's control socket) go into dir too.
	env := append(os.Environ(), "OVN_RUNDIR="+dir, "OVN_LOGDIR="+dir, "OVS_RUNDIR="+dir, "OVS_LOGDIR="+dir)
	t.Cleanup(func() {
		if t.Failed() {
			logTails(t, dir, "northd.log")
		}
	})
	for _, db := range []string{"nb", "sb"} {
		file := filepath.Join(dir, db+".db")
		if out, err := exec.Command("ovsdb-tool", "create", file, filepath.Join(OVNSchemaDir, "ovn-"+db+".ovsschema")).CombinedOutput(); err != nil {
			t.Fatalf("ovsdb-tool create %s: %v\n%s", file, err, out)
		}
		sock := filepath.Join(dir, db+".sock")
		Detached(t, env, dir, filepath.Join(dir, db+".pid"), "ovsdb-server", file, "--remote=punix:"+sock,
			"--pidfile="+filepath.Join(dir, db+".pid"), "--log-file="+filepath.Join(dir, db+".log"),
			"--unixctl="+filepath.Join(dir, db+".ctl"), "--detach", "--no-chdir")
		if db == "nb" {
			c.NB = sock
		} else {
			c.SB = sock
		}
	}
	Detached(t, env, dir, filepath.Join(dir, "northd.pid"), "ovn-northd", "--ovnnb-db=unix:"+c.NB, "--ovnsb-db=unix:"+c.SB,
		"--pidfile="+filepath.Join(dir, "northd.pid"), "--log-file="+filepath.Join(dir, "northd.log"),
		"--detach", "--no-chdir")
	return c
}

// Detached runs a daemon that detaches itself (args include --detach
// and --pidfile=pidfile) with env in dir, and returns its PID once it
// has detached. The PID is read at once, so that the daemon is stopped
// (SIGTERM to that PID) at cleanup even if its pidfile is later
// replaced or removed.
func Detached(t testing.TB, env []string, dir, pidfile string, args ...string) int {
	t.Helper()
	c := exec.Command(args[0], args[1:]...)
	c.Env, c.Dir = env, dir
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	pid := readPidfile(pidfile)
	if pid <= 0 {
		t.Fatalf("%s: no PID in %s", args[0], pidfile)
	}
	t.Cleanup(func() { stopPID(pid, args[0]) })
	return pid
}

// readPidfile returns the PID in a daemon's pidfile, or 0.
func readPidfile(pidfile string) int {
	b, err := os.ReadFile(pidfile)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return pid
}

// stopPID sends SIGTERM to pid if it is still the named program (a PID
// reused by another process is left alone).
func stopPID(pid int, program string) {
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil || !strings.HasPrefix(filepath.Base(program), strings.TrimSpace(string(comm))) {
		return
	}
	syscall.Kill(pid, syscall.SIGTERM)
}

// StopPidfile sends SIGTERM to the process named in pidfile (a daemon a
// test stops early, to restart it) and waits up to a second for it to
// exit.
func StopPidfile(pidfile string) {
	pid := readPidfile(pidfile)
	if pid <= 0 {
		return
	}
	syscall.Kill(pid, syscall.SIGTERM)
	WaitFor(time.Second, func() bool { return syscall.Kill(pid, 0) != nil })
}
