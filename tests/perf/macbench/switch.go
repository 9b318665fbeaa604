package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gvs-project/gvs/tests/perf/internal/proc"
)

// vswitch is one running switch (gvs-vswitchd alone, or Open vSwitch's
// ovsdb-server and ovs-vswitchd), its processes inside nsSwitch.
type vswitch struct {
	name string
	dir  string
	env  []string
	ctl  string // the vswitchd's unixctl socket
	cmds []*exec.Cmd
}

// child starts a process in the switch namespace with its output in
// dir/logName; it dies with the harness.
func child(dir, logName string, env []string, args ...string) (*exec.Cmd, error) {
	c := exec.Command("ip", append([]string{"netns", "exec", nsSwitch}, args...)...)
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

func waitFile(path string, d time.Duration) error {
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

// forwarderKind maps a forwarder name to the program and whether it
// sets mac-table-size (gvs and ovs-raised do; ovs keeps Open vSwitch's
// default).
func forwarderKind(name string) (ovs bool, setSize bool, err error) {
	switch name {
	case "gvs":
		return false, true, nil
	case "ovs":
		return true, false, nil
	case "ovs-raised":
		return true, true, nil
	}
	return false, false, fmt.Errorf("unknown forwarder %q (want gvs, ovs or ovs-raised)", name)
}

// startSwitch starts the named forwarder and configures bridges A and B
// (netdev datapath, system ports, fail-mode standalone: NORMAL).
func startSwitch(name, work, gvsBin string, macTableSize int) (*vswitch, error) {
	isOVS, setSize, err := forwarderKind(name)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(work, name+"-")
	if err != nil {
		return nil, err
	}
	sw := &vswitch{name: name, dir: dir, ctl: filepath.Join(dir, "vswitchd.ctl")}
	sw.env = append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir, "OVS_SYSCONFDIR="+dir,
		"OVS_PKGDATADIR=/usr/share/openvswitch")
	sock := filepath.Join(dir, "db.sock")
	if isOVS {
		for _, b := range []string{"ovsdb-tool", "ovsdb-server", "ovs-vswitchd"} {
			if _, err := exec.LookPath(b); err != nil {
				return nil, fmt.Errorf("%s not found (Debian package openvswitch-switch): %w", b, err)
			}
		}
		db := filepath.Join(dir, "conf.db")
		if out, err := exec.Command("ovsdb-tool", "create", db, "/usr/share/openvswitch/vswitch.ovsschema").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("ovsdb-tool create: %w: %s", err, out)
		}
		c, err := child(dir, "ovsdb-server.out", sw.env, "ovsdb-server", "--remote=punix:"+sock, "--no-chdir",
			"--unixctl="+filepath.Join(dir, "ovsdb-server.ctl"), "--log-file="+filepath.Join(dir, "ovsdb-server.log"), "-vconsole:off", db)
		if err != nil {
			return nil, err
		}
		sw.cmds = append(sw.cmds, c)
		if err := waitFile(sock, 15*time.Second); err != nil {
			sw.stop()
			return nil, err
		}
		// --disable-system: no kernel datapath is opened or touched.
		c, err = child(dir, "ovs-vswitchd.out", sw.env, "ovs-vswitchd", "--disable-system", "--no-chdir",
			"--log-file="+filepath.Join(dir, "ovs-vswitchd.log"), "-vconsole:off",
			"--unixctl="+sw.ctl, "unix:"+sock)
		if err != nil {
			sw.stop()
			return nil, err
		}
		sw.cmds = append(sw.cmds, c)
	} else {
		c, err := child(dir, "gvs-vswitchd.out", sw.env, gvsBin, "--rundir="+dir, "--dbdir="+dir, "--logdir="+dir,
			"--unixctl="+sw.ctl)
		if err != nil {
			return nil, err
		}
		sw.cmds = append(sw.cmds, c)
		if err := waitFile(sock, 15*time.Second); err != nil {
			sw.stop()
			return nil, err
		}
	}
	if err := waitFile(sw.ctl, 15*time.Second); err != nil {
		sw.stop()
		return nil, err
	}
	args := []string{"--timeout=30", "--", "init"}
	for _, br := range []string{brA, brB} {
		args = append(args, "--", "add-br", br, "--", "set", "bridge", br, "datapath_type=netdev", "fail_mode=standalone")
		if setSize && macTableSize > 0 {
			args = append(args, fmt.Sprintf("other_config:mac-table-size=%d", macTableSize))
		}
		for i, p := range bridgePorts[br] {
			args = append(args, "--", "add-port", br, p, "--", "set", "interface", p, "type=system", fmt.Sprintf("ofport_request=%d", i+1))
		}
	}
	if _, err := sw.cmd(60*time.Second, append([]string{"ovs-vsctl"}, args...)...); err != nil {
		sw.stop()
		return nil, err
	}
	for _, br := range []string{brA, brB} {
		if err := waitFile(filepath.Join(dir, br+".mgmt"), 15*time.Second); err != nil {
			sw.stop()
			return nil, err
		}
	}
	return sw, nil
}

// stop terminates the switch's processes by pid, the vswitchd first.
func (sw *vswitch) stop() {
	proc.StopAll(sw.cmds, 10*time.Second)
	sw.cmds = nil
}

// cmd runs an Open vSwitch utility against the switch and returns its
// stdout.
func (sw *vswitch) cmd(timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := exec.CommandContext(ctx, args[0], args[1:]...)
	c.Env = sw.env
	var out, errb strings.Builder
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		return out.String(), fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

func (sw *vswitch) appctl(timeout time.Duration, args ...string) (string, error) {
	return sw.cmd(timeout, append([]string{"ovs-appctl", "-T", strconv.Itoa(int(timeout.Seconds())), "-t", sw.ctl}, args...)...)
}

// fdbStats is the first line of fdb/stats-show that matters here.
type fdbStats struct{ Current, Max int }

var fdbStatsRE = regexp.MustCompile(`Current/maximum MAC entries in the table: (\d+)/(\d+)`)

// parseFDBStats reads `ovs-appctl fdb/stats-show BRIDGE` (Open vSwitch's
// format, which gvs prints too).
func parseFDBStats(out string) (fdbStats, error) {
	m := fdbStatsRE.FindStringSubmatch(out)
	if m == nil {
		return fdbStats{}, fmt.Errorf("no Current/maximum line in fdb/stats-show output %q", firstLine(out))
	}
	c, _ := strconv.Atoi(m[1])
	x, _ := strconv.Atoi(m[2])
	return fdbStats{Current: c, Max: x}, nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// fdb returns the two bridges' fdb/stats-show.
func (sw *vswitch) fdb() ([2]fdbStats, error) {
	var s [2]fdbStats
	for i, br := range []string{brA, brB} {
		out, err := sw.appctl(60*time.Second, "fdb/stats-show", br)
		if err != nil {
			return s, err
		}
		if s[i], err = parseFDBStats(out); err != nil {
			return s, fmt.Errorf("%s: %w", br, err)
		}
	}
	return s, nil
}

func (sw *vswitch) flushFDB() error {
	_, err := sw.appctl(60*time.Second, "fdb/flush")
	return err
}

// megaflows counts the lines of `ovs-appctl dpctl/dump-flows` that are
// flows (they carry "actions:"), reading the output as it streams.
func (sw *vswitch) megaflows(timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := exec.CommandContext(ctx, "ovs-appctl", "-T", strconv.Itoa(int(timeout.Seconds())), "-t", sw.ctl, "dpctl/dump-flows")
	c.Env = sw.env
	out, err := c.StdoutPipe()
	if err != nil {
		return 0, err
	}
	var errb strings.Builder
	c.Stderr = &errb
	if err := c.Start(); err != nil {
		return 0, err
	}
	n, err := countFlows(out)
	if werr := c.Wait(); werr != nil {
		return n, fmt.Errorf("dpctl/dump-flows: %v: %s", werr, strings.TrimSpace(errb.String()))
	}
	return n, err
}

func countFlows(r interface{ Read([]byte) (int, error) }) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	n := 0
	for sc.Scan() {
		if strings.Contains(sc.Text(), "actions:") {
			n++
		}
	}
	return n, sc.Err()
}

// flowLimit is Open vSwitch's current dynamic flow limit from
// upcall/show ("flows : (current N) (avg N) (max N) (limit N)"), or -1.
func (sw *vswitch) flowLimit() int {
	out, err := sw.appctl(30*time.Second, "upcall/show")
	if err != nil {
		return -1
	}
	m := regexp.MustCompile(`\(limit (\d+)\)`).FindStringSubmatch(out)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
