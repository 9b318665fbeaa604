package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	vsw "github.com/gvs-project/gvs/tests/perf/internal/vswitch"
)

// vswitch is one running switch (gvs-vswitchd alone, or Open vSwitch's
// ovsdb-server and ovs-vswitchd), its processes inside nsSwitch.
type vswitch struct{ *vsw.Switch }

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
	s, err := vsw.Start(vsw.Options{OVS: isOVS, GVSBin: gvsBin, Netns: nsSwitch, Work: work, Name: name})
	if err != nil {
		return nil, err
	}
	sw := &vswitch{s}
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
		if err := vsw.WaitFile(filepath.Join(sw.Dir, br+".mgmt"), 15*time.Second); err != nil {
			sw.stop()
			return nil, err
		}
	}
	return sw, nil
}

func (sw *vswitch) stop() { sw.Stop() }

func (sw *vswitch) cmd(timeout time.Duration, args ...string) (string, error) {
	return sw.Cmd(timeout, args...)
}

func (sw *vswitch) appctl(timeout time.Duration, args ...string) (string, error) {
	return sw.Appctl(timeout, args...)
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
	c := exec.CommandContext(ctx, "ovs-appctl", "-T", strconv.Itoa(int(timeout.Seconds())), "-t", sw.Ctl, "dpctl/dump-flows")
	c.Env = sw.Env
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
