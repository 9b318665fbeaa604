// Package vswitch starts a switch daemon for the performance harnesses
// under tests/perf (macbench, dpbench): gvs-vswitchd with its embedded
// database, or Debian's ovsdb-server and ovs-vswitchd, inside a network
// namespace, optionally pinned to a CPU list with taskset, and runs Open
// vSwitch's utilities (ovs-vsctl, ovs-ofctl, ovs-appctl) against it. It
// configures nothing itself; callers do that through the utilities. It
// imports only the standard library and tests/perf/internal/proc, never
// the switch it measures.
package vswitch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gvs-project/gvs/tests/perf/internal/proc"
)

// Options say which switch to start and where.
type Options struct {
	OVS     bool     // Open vSwitch's daemons; false: gvs-vswitchd
	GVSBin  string   // the gvs-vswitchd binary
	Netns   string   // the network namespace the daemons run in
	Work    string   // a directory for the run directory (made under it)
	Name    string   // prefix of the run directory
	CPUs    string   // taskset CPU list for the daemons ("" for none)
	GVSArgs []string // extra gvs-vswitchd arguments (e.g. --metrics-address)
}

// Switch is one running switch: gvs-vswitchd alone, or Open vSwitch's
// ovsdb-server and ovs-vswitchd.
type Switch struct {
	Name string
	Dir  string
	Env  []string // OVS_RUNDIR and friends, for the utilities
	Ctl  string   // the vswitchd's unixctl socket
	Cmds []*exec.Cmd
}

// child starts a process in the namespace with its output in
// dir/logName; it dies with the harness.
func child(o Options, dir, logName string, env []string, args ...string) (*exec.Cmd, error) {
	pre := []string{"netns", "exec", o.Netns}
	if o.CPUs != "" {
		pre = append(pre, "taskset", "-c", o.CPUs)
	}
	c := exec.Command("ip", append(pre, args...)...)
	c.Env = env
	logf, err := os.Create(filepath.Join(dir, logName))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	c.Stdout, c.Stderr = logf, logf
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", args[0], err)
	}
	return c, nil
}

// WaitFile waits up to d for path to exist.
func WaitFile(path string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not appear within %v", path, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Start starts the switch and waits until its database and unixctl
// sockets answer. The database is empty (callers run `ovs-vsctl init`).
func Start(o Options) (*Switch, error) {
	name := o.Name
	if name == "" {
		name = "gvs"
		if o.OVS {
			name = "ovs"
		}
	}
	dir, err := os.MkdirTemp(o.Work, name+"-")
	if err != nil {
		return nil, err
	}
	sw := &Switch{Name: name, Dir: dir, Ctl: filepath.Join(dir, "vswitchd.ctl")}
	sw.Env = append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir, "OVS_SYSCONFDIR="+dir,
		"OVS_PKGDATADIR=/usr/share/openvswitch")
	sock := filepath.Join(dir, "db.sock")
	if o.OVS {
		for _, b := range []string{"ovsdb-tool", "ovsdb-server", "ovs-vswitchd"} {
			if _, err := exec.LookPath(b); err != nil {
				return nil, fmt.Errorf("%s not found (Debian package openvswitch-switch): %w", b, err)
			}
		}
		db := filepath.Join(dir, "conf.db")
		if out, err := exec.Command("ovsdb-tool", "create", db, "/usr/share/openvswitch/vswitch.ovsschema").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("ovsdb-tool create: %w: %s", err, out)
		}
		c, err := child(o, dir, "ovsdb-server.out", sw.Env, "ovsdb-server", "--remote=punix:"+sock, "--no-chdir",
			"--unixctl="+filepath.Join(dir, "ovsdb-server.ctl"), "--log-file="+filepath.Join(dir, "ovsdb-server.log"), "-vconsole:off", db)
		if err != nil {
			return nil, err
		}
		sw.Cmds = append(sw.Cmds, c)
		if err := WaitFile(sock, 15*time.Second); err != nil {
			sw.Stop()
			return nil, err
		}
		// --disable-system: no kernel datapath is opened or touched.
		c, err = child(o, dir, "ovs-vswitchd.out", sw.Env, "ovs-vswitchd", "--disable-system", "--no-chdir",
			"--log-file="+filepath.Join(dir, "ovs-vswitchd.log"), "-vconsole:off",
			"--unixctl="+sw.Ctl, "unix:"+sock)
		if err != nil {
			sw.Stop()
			return nil, err
		}
		sw.Cmds = append(sw.Cmds, c)
	} else {
		args := append([]string{o.GVSBin, "--rundir=" + dir, "--dbdir=" + dir, "--logdir=" + dir, "--unixctl=" + sw.Ctl}, o.GVSArgs...)
		c, err := child(o, dir, "gvs-vswitchd.out", sw.Env, args...)
		if err != nil {
			return nil, err
		}
		sw.Cmds = append(sw.Cmds, c)
		if err := WaitFile(sock, 15*time.Second); err != nil {
			sw.Stop()
			return nil, err
		}
	}
	if err := WaitFile(sw.Ctl, 15*time.Second); err != nil {
		sw.Stop()
		return nil, err
	}
	return sw, nil
}

// Stop terminates the switch's processes by pid, the vswitchd first.
func (sw *Switch) Stop() {
	proc.StopAll(sw.Cmds, 10*time.Second)
	sw.Cmds = nil
}

// Pids are the switch's processes (ip netns exec and taskset exec the
// daemon, so these are the daemons' own pids).
func (sw *Switch) Pids() []int {
	var ps []int
	for _, c := range sw.Cmds {
		ps = append(ps, c.Process.Pid)
	}
	return ps
}

// Cmd runs an Open vSwitch utility against the switch and returns its
// stdout.
func (sw *Switch) Cmd(timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := exec.CommandContext(ctx, args[0], args[1:]...)
	c.Env = sw.Env
	var out, errb strings.Builder
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		return out.String(), fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Appctl runs ovs-appctl against the vswitchd.
func (sw *Switch) Appctl(timeout time.Duration, args ...string) (string, error) {
	return sw.Cmd(timeout, append([]string{"ovs-appctl", "-T", strconv.Itoa(int(timeout.Seconds())), "-t", sw.Ctl}, args...)...)
}
