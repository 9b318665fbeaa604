// Command ofbench compares gvs-vswitchd with Open vSwitch's ovs-vswitchd
// (Debian's 3.1, --enable-dummy --disable-system) on OpenFlow work, in one
// run, each switch driven by the same Debian ovs-ofctl and the same
// unixctl client:
//
//  0. on the fresh switch, the growth of the vswitchd's resident set
//     (VmRSS) per rule while `ovs-ofctl -O OpenFlow15 --bundle
//     add-flows br0 FILE` loads the rules of step 1, as the bundle's
//     reply arrives and once quiet (the lowest over the next quietFor);
//  1. `ovs-ofctl add-flows br0 FILE` of -flows rules (default 100,000; a
//     deterministic mixed file: four tables, in_port+dl_dst, ip+nw_dst/24,
//     tcp+nw_src+tp_dst, reg0/reg1 matches with and without masks,
//     resubmits and cookies), and the same with -O OpenFlow15 --bundle;
//  2. `ovs-ofctl dump-flows br0 >/dev/null` and `--no-stats dump-flows`
//     of those rules, and `del-flows br0`;
//     and, as the floor of add-flows (ovs-ofctl waits for a barrier
//     reply after each flow_mod), as many echo round trips as rules
//     (`ovs-ofctl benchmark br0 100 FLOWS`), and once, without a switch,
//     `ovs-ofctl parse-flows FILE`;
//  3. new-flow setup: -tuples TCP packets, each with its own 5-tuple,
//     matched by one exact 5-tuple rule each so that every packet needs
//     its own megaflow in both switches; the time from the first packet
//     injected on dummy port p1 to the last one transmitted on dummy port
//     p2 gives packets (= megaflows) set up per second. The megaflows are
//     counted afterwards with dpctl/dump-flows.
//
// Packets are injected with netdev-dummy/receive sent over one unixctl
// connection (unixctl.Client, no process per packet), many packets
// per request. In both switches options:rxq_pcap only records received
// frames to a file (it does not replay one), so it cannot feed traffic.
// Open vSwitch's dummy receive queue holds 100 packets and silently drops
// the rest, so injection is windowed: at most -window packets in flight
// (injected but not yet counted as TX on p2, read with dpctl/show -s).
//
// Each switch runs alone, as a separate process, one after the other
// (ovs first): Open vSwitch with its ovsdb-server, gvs (-gvs, built with
// `go build -o /tmp/ofbench-gvs ./cmd/gvs-vswitchd`) with its embedded
// database. Both get the bridge br0 (datapath_type=dummy) with dummy ports
// p1, p2, p3 and other_config:max-idle=60000 so that no megaflow expires
// before it is counted.
//
// Usage (as root): go run ./tests/perf/ofbench [-reps 3] [-flows 100000]
// [-setup-reps 9] [-tuples 8000] [-budget 2m] [-switches ovs,ovs-pmd,gvs] [-v]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gvs-project/gvs/tests/internal/flowgen"
	"github.com/gvs-project/gvs/tests/perf/internal/proc"
	"github.com/gvs-project/gvs/unixctl"
)

type options struct {
	reps      int
	setupReps int
	flows     int
	tuples    int
	window    int
	budget    time.Duration
	gvsBin    string
	switches  []string
	keep      bool
	setupOnly bool
	verbose   bool
	// profile is a directory for gvs's heap and allocation profiles.
	profile string
}

func main() {
	var o options
	sw := flag.String("switches", "ovs,gvs", "switches to measure, in order: ovs, gvs, ovs-pmd (Open vSwitch with type=dummy-pmd p1 and p2, polled by a PMD thread instead of the main loop)")
	flag.IntVar(&o.reps, "reps", 3, "repetitions of the flow-table measurements")
	flag.IntVar(&o.setupReps, "setup-reps", 9, "repetitions of the new-flow setup measurement (each with new 5-tuples)")
	flag.IntVar(&o.flows, "flows", 100000, "OpenFlow rules in the add-flows file")
	flag.IntVar(&o.tuples, "tuples", 8000, "distinct 5-tuples (megaflows) in the setup-rate test; Open vSwitch starts with a megaflow limit of 10000")
	flag.IntVar(&o.window, "window", 100, "packets in flight during injection (Open vSwitch's dummy rx queue holds 100)")
	flag.DurationVar(&o.budget, "budget", 2*time.Minute, "time per switch after which no new repetition starts (at least one setup repetition always runs)")
	flag.StringVar(&o.gvsBin, "gvs", "/tmp/ofbench-gvs", "gvs-vswitchd binary")
	flag.BoolVar(&o.keep, "keep", false, "keep the run directories (logs, databases)")
	flag.StringVar(&o.profile, "profile", "", "directory to write gvs's heap and allocation profiles to (gvs-TAG.heap.pb, gvs-TAG.allocs.pb) before and after the first bundle, after the flow-table reps and after the setup reps; gvs then serves pprof on "+profileAddr)
	flag.BoolVar(&o.setupOnly, "setup-only", false, "only the new-flow setup test")
	flag.BoolVar(&o.verbose, "v", false, "print every repetition's figures")
	flag.Parse()
	o.switches = strings.Split(*sw, ",")
	if o.reps < 1 || o.setupReps < 1 || o.flows < 100 || o.tuples < 1 || o.tuples > 1<<20 || o.window < 1 {
		fmt.Fprintln(os.Stderr, "ofbench: need -reps >= 1, -flows >= 100, 1 <= -tuples <= 1048576, -window >= 1")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "ofbench:", err)
		os.Exit(1)
	}
}

// sample is one switch's measurements, several per metric.
type sample map[string][]float64

// metrics are the table's rows, in order, with their units; a "cpu" row
// is the vswitchd's CPU time during the measurement of the same name.
var metrics = []struct{ name, unit string }{
	{"add-flows", "s"},
	{"add-flows -O OpenFlow15 --bundle", "s"},
	{"dump-flows >/dev/null", "s"},
	{"--no-stats dump-flows >/dev/null", "s"},
	{"del-flows", "s"},
	{"echo round trips, one per rule", "s"},
	{"add-flows cpu", "s"},
	{"add-flows -O OpenFlow15 --bundle cpu", "s"},
	{"dump-flows >/dev/null cpu", "s"},
	{"--no-stats dump-flows >/dev/null cpu", "s"},
	{"RSS growth per rule, --bundle first", "B"},
	{"RSS growth per rule, --bundle first, once quiet", "B"},
	{"new-flow setup", "kpps"},
	{"new-flow setup cpu", "s"},
	{"megaflows after setup", "count"},
}

func run(o options) error {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovsdb-tool", "ovsdb-server", "ovs-vswitchd"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("%s not found (install openvswitch-switch): %w", bin, err)
		}
	}
	work, err := os.MkdirTemp("", "ofbench-")
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if ok && !o.keep {
			os.RemoveAll(work)
		}
	}()
	flowFile := filepath.Join(work, "flows.txt")
	if err := os.WriteFile(flowFile, flowgen.Mixed(o.flows), 0o644); err != nil {
		return err
	}
	tupleFile := filepath.Join(work, "tuples.txt")
	// Every repetition gets 5-tuples of its own: Open vSwitch keeps its
	// udpif keys of deleted megaflows until a revalidator pass and would
	// not install megaflows for the same keys again before that.
	if err := os.WriteFile(tupleFile, tupleFlows(o.tuples*o.setupReps), 0o644); err != nil {
		return err
	}
	frames := tupleFrames(o.tuples * o.setupReps)

	fmt.Printf("ofbench: %d rules x %d reps; %d new 5-tuples x %d reps, window %d; %s; gvs %s\n",
		o.flows, o.reps, o.tuples, o.setupReps, o.window, ovsVersion(), o.gvsBin)
	if !o.setupOnly {
		// ovs-ofctl parses the whole file before it sends a flow_mod:
		// that time is in every switch's add-flows.
		d, err := parseFlowsTime(flowFile)
		if err != nil {
			return err
		}
		fmt.Printf("  ovs-ofctl parse-flows of the file alone (no switch): %.3f s; add-flows cannot be faster than\n"+
			"  that plus the echo round trips row (one round trip per rule)\n", d.Seconds())
	}
	results := map[string]sample{}
	var notes []string
	for _, name := range o.switches {
		sw, err := startSwitch(name, work, o.gvsBin, o.profile != "")
		if err != nil {
			return err
		}
		fmt.Printf("  %s: run directory %s\n", name, sw.dir)
		s, n, err := measure(sw, o, flowFile, tupleFile, frames)
		sw.stop()
		if err != nil {
			return fmt.Errorf("%s: %w (logs in %s)", name, err, sw.dir)
		}
		results[name] = s
		notes = append(notes, n...)
	}
	printTable(o, results)
	for _, n := range notes {
		fmt.Println("note:", n)
	}
	ok = true
	return nil
}

// parseFlowsTime is the best of three `ovs-ofctl parse-flows FILE` runs.
func parseFlowsTime(file string) (time.Duration, error) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	best := time.Duration(0)
	for range 3 {
		start := time.Now()
		c := exec.Command("ovs-ofctl", "parse-flows", file)
		var errb strings.Builder
		c.Stdout, c.Stderr = null, &errb
		if err := c.Run(); err != nil {
			return 0, fmt.Errorf("ovs-ofctl parse-flows: %v: %s", err, firstLines(errb.String(), 3))
		}
		if d := time.Since(start); best == 0 || d < best {
			best = d
		}
	}
	return best, nil
}

func ovsVersion() string {
	out, err := exec.Command("ovs-vswitchd", "--version").Output()
	if err != nil {
		return "ovs-vswitchd version unknown"
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return line
}

// vswitch is one running switch.
type vswitch struct {
	name string
	dir  string
	env  []string
	ctl  string // unixctl socket of the vswitchd
	cmds []*exec.Cmd
	// lastCPU is the vswitchd's CPU time during the last timed command.
	lastCPU time.Duration
	// warnings are other things ovs-ofctl printed on stderr.
	warnings []string
}

func child(dir, logName string, env []string, args ...string) (*exec.Cmd, error) {
	c := exec.Command(args[0], args[1:]...)
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

// profileAddr is where gvs serves pprof with -profile.
const profileAddr = "127.0.0.1:9951"

// quietFor is how long the resident set is watched after the first
// bundle: past gvs-vswitchd's default --gc-trim-after (10 s).
const quietFor = 15 * time.Second

// saveProfiles writes gvs's live-heap and allocation profiles to
// dir/gvs-TAG.{heap,allocs}.pb when profiling (dir not ""): TAG start
// and bundle frame the first bundle (go tool pprof -base), flowtable
// and setup end those phases.
func (sw *vswitch) saveProfiles(dir, tag string) error {
	if dir == "" || sw.name != "gvs" {
		return nil
	}
	for kind, q := range map[string]string{"heap": "heap?gc=1", "allocs": "allocs?gc=1"} {
		resp, err := http.Get("http://" + profileAddr + "/debug/pprof/" + q)
		if err != nil {
			return fmt.Errorf("profile %s: %w", tag, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("profile %s: %w", tag, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "gvs-"+tag+"."+kind+".pb"), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func startSwitch(name, work, gvsBin string, profile bool) (*vswitch, error) {
	dir := filepath.Join(work, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	sw := &vswitch{name: name, dir: dir}
	sw.env = append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir, "OVS_SYSCONFDIR="+dir,
		"OVS_PKGDATADIR=/usr/share/openvswitch")
	db := filepath.Join(dir, "conf.db")
	portType := "dummy"
	switch name {
	case "ovs", "ovs-pmd":
		if name == "ovs-pmd" {
			portType = "dummy-pmd"
		}
		if out, err := exec.Command("ovsdb-tool", "create", db, "/usr/share/openvswitch/vswitch.ovsschema").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("ovsdb-tool create: %w: %s", err, out)
		}
		sock := filepath.Join(dir, "db.sock")
		c, err := child(dir, "ovsdb-server.out", sw.env, "ovsdb-server", "--remote=punix:"+sock, "--no-chdir",
			"--unixctl="+filepath.Join(dir, "ovsdb-server.ctl"), "--log-file="+filepath.Join(dir, "ovsdb-server.log"), "-vconsole:off", db)
		if err != nil {
			return nil, err
		}
		sw.cmds = append(sw.cmds, c)
		if err := waitFile(sock); err != nil {
			sw.stop()
			return nil, err
		}
		c, err = child(dir, "ovs-vswitchd.out", sw.env, "ovs-vswitchd", "--enable-dummy", "--disable-system", "--no-chdir",
			"--log-file="+filepath.Join(dir, "ovs-vswitchd.log"), "-vconsole:off",
			"--unixctl="+filepath.Join(dir, "vswitchd.ctl"), "unix:"+sock)
		if err != nil {
			sw.stop()
			return nil, err
		}
		sw.cmds = append(sw.cmds, c)
	case "gvs":
		args := []string{gvsBin, "--rundir=" + dir, "--dbdir=" + dir, "--logdir=" + dir,
			"--enable-dummy", "--disable-system", "--unixctl=" + filepath.Join(dir, "vswitchd.ctl")}
		if profile {
			args = append(args, "--metrics-address="+profileAddr)
		}
		c, err := child(dir, "gvs-vswitchd.out", sw.env, args...)
		if err != nil {
			return nil, err
		}
		sw.cmds = append(sw.cmds, c)
		if err := waitFile(filepath.Join(dir, "db.sock")); err != nil {
			sw.stop()
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown switch %q (want ovs, ovs-pmd or gvs)", name)
	}
	sw.ctl = filepath.Join(dir, "vswitchd.ctl")
	if err := waitFile(sw.ctl); err != nil {
		sw.stop()
		return nil, err
	}
	_, err := sw.cmd(30*time.Second, "ovs-vsctl", "--timeout=20", "--", "init", "--",
		"add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "other_config:max-idle=60000",
		"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type="+portType, "ofport_request=1",
		"--", "add-port", "br0", "p2", "--", "set", "interface", "p2", "type="+portType, "ofport_request=2",
		"--", "add-port", "br0", "p3", "--", "set", "interface", "p3", "type=dummy", "ofport_request=3")
	if err != nil {
		sw.stop()
		return nil, err
	}
	// The bridge's OpenFlow management socket appears once vswitchd has
	// applied the configuration.
	if err := waitFile(filepath.Join(dir, "br0.mgmt")); err != nil {
		sw.stop()
		return nil, err
	}
	return sw, nil
}

func waitFile(path string) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not appear within 15s", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop terminates the switch's processes by pid, the vswitchd first.
func (sw *vswitch) stop() {
	proc.StopAll(sw.cmds, 5*time.Second)
	sw.cmds = nil
}

// cmd runs an Open vSwitch utility against the switch and returns its
// stdout; a non-zero exit or anything on stderr is an error.
func (sw *vswitch) cmd(timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := exec.CommandContext(ctx, args[0], args[1:]...)
	c.Env = sw.env
	var out, errb strings.Builder
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	if err != nil || errb.Len() > 0 {
		return out.String(), fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// cpuTime is the CPU time (user+system) the vswitchd process has used so
// far, from /proc/PID/stat.
func (sw *vswitch) cpuTime() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", sw.cmds[len(sw.cmds)-1].Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces): state is
	// field 3, utime and stime are fields 14 and 15.
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// rss is the vswitchd's resident set size in bytes, from
// /proc/PID/status (0 if unreadable).
func (sw *vswitch) rss() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", sw.cmds[len(sw.cmds)-1].Process.Pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// timed runs an ovs-ofctl command with stdout to /dev/null and returns
// its wall time.
func (sw *vswitch) timed(timeout time.Duration, args ...string) (time.Duration, error) {
	cpu0 := sw.cpuTime()
	defer func() { sw.lastCPU = sw.cpuTime() - cpu0 }()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	c := exec.CommandContext(ctx, args[0], args[1:]...)
	c.Env = sw.env
	var errb strings.Builder
	c.Stdout, c.Stderr = null, &errb
	start := time.Now()
	err = c.Run()
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, firstLines(errb.String(), 5))
	}
	if msg := complaints(errb.String()); msg != "" {
		sw.warnings = append(sw.warnings, fmt.Sprintf("%s: %s said on stderr: %s", sw.name, strings.Join(args[2:], " "), msg))
	}
	return d, nil
}

// complaints drops ovs-ofctl's own timing and coverage log lines (which
// it prints when a poll interval was long, e.g. on a loaded machine) and
// returns what is left.
func complaints(stderr string) string {
	var keep []string
	for line := range strings.Lines(stderr) {
		if strings.Contains(line, "|timeval|") || strings.Contains(line, "|coverage|") || strings.TrimSpace(line) == "" {
			continue
		}
		keep = append(keep, strings.TrimSpace(line))
	}
	return firstLines(strings.Join(keep, "\n"), 3)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}

var flowCountRE = regexp.MustCompile(`flow_count=(\d+)`)

// flowCount is the number of rules in br0, from dump-aggregate.
func (sw *vswitch) flowCount() (int, error) {
	out, err := sw.cmd(60*time.Second, "ovs-ofctl", "dump-aggregate", "br0")
	if err != nil {
		return 0, err
	}
	m := flowCountRE.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("dump-aggregate: no flow_count in %q", out)
	}
	return strconv.Atoi(m[1])
}

func (sw *vswitch) expectFlows(want int, after string) error {
	n, err := sw.flowCount()
	if err != nil {
		return err
	}
	if n != want {
		return fmt.Errorf("after %s: br0 has %d rules, want %d", after, n, want)
	}
	return nil
}

func measure(sw *vswitch, o options, flowFile, tupleFile string, frames []string) (sample, []string, error) {
	deadline := time.Now().Add(o.budget)
	// A step started before the deadline may finish after it: the budget
	// decides how many repetitions run, not whether a started one ends.
	left := func() time.Duration { return max(time.Until(deadline), 60*time.Second) }
	over := func() bool { return time.Now().After(deadline) }
	s := sample{}
	var notes []string
	add := func(name string, d time.Duration) {
		s[name] = append(s[name], d.Seconds())
		s[name+" cpu"] = append(s[name+" cpu"], sw.lastCPU.Seconds())
	}
	ofctl := func(args ...string) []string { return append([]string{"ovs-ofctl", "--timeout=600"}, args...) }

	if !o.setupOnly {
		// Memory first, on the fresh switch: the resident set's growth
		// while the rules are loaded the way ovn-controller loads them.
		if _, err := sw.cmd(left(), ofctl("del-flows", "br0")...); err != nil {
			return nil, nil, err
		}
		if err := sw.saveProfiles(o.profile, "start"); err != nil {
			return nil, nil, err
		}
		rss0 := sw.rss()
		if _, err := sw.cmd(left(), ofctl("-O", "OpenFlow15", "--bundle", "add-flows", "br0", flowFile)...); err != nil {
			return nil, nil, err
		}
		if err := sw.expectFlows(o.flows, "the first --bundle add-flows"); err != nil {
			return nil, nil, err
		}
		s["RSS growth per rule, --bundle first"] = []float64{float64(sw.rss()-rss0) / float64(o.flows)}
		// What the switch keeps while nothing happens (gvs returns its
		// collector's headroom after --gc-trim-after, 10 s): the lowest
		// resident set over a quiet period past that.
		low := sw.rss()
		for range int(quietFor / time.Second) {
			time.Sleep(time.Second)
			low = min(low, sw.rss())
		}
		s["RSS growth per rule, --bundle first, once quiet"] = []float64{float64(low-rss0) / float64(o.flows)}
		if err := sw.saveProfiles(o.profile, "bundle"); err != nil {
			return nil, nil, err
		}
	}
	for rep := 0; rep < o.reps && !o.setupOnly; rep++ {
		if over() {
			notes = append(notes, fmt.Sprintf("%s: budget %v reached after %d flow-table reps", sw.name, o.budget, rep))
			break
		}
		if _, err := sw.cmd(left(), ofctl("del-flows", "br0")...); err != nil {
			return nil, nil, err
		}
		d, err := sw.timed(left(), ofctl("add-flows", "br0", flowFile)...)
		if err != nil {
			return nil, nil, err
		}
		if err := sw.expectFlows(o.flows, "add-flows"); err != nil {
			return nil, nil, err
		}
		add("add-flows", d)
		if d, err = sw.timed(left(), ofctl("dump-flows", "br0")...); err != nil {
			return nil, nil, err
		}
		add("dump-flows >/dev/null", d)
		if d, err = sw.timed(left(), ofctl("--no-stats", "dump-flows", "br0")...); err != nil {
			return nil, nil, err
		}
		add("--no-stats dump-flows >/dev/null", d)
		if d, err = sw.timed(left(), ofctl("del-flows", "br0")...); err != nil {
			return nil, nil, err
		}
		if err := sw.expectFlows(0, "del-flows"); err != nil {
			return nil, nil, err
		}
		add("del-flows", d)
		if d, err = sw.timed(left(), ofctl("-O", "OpenFlow15", "--bundle", "add-flows", "br0", flowFile)...); err != nil {
			return nil, nil, err
		}
		if err := sw.expectFlows(o.flows, "--bundle add-flows"); err != nil {
			return nil, nil, err
		}
		add("add-flows -O OpenFlow15 --bundle", d)
		// The floor of add-flows: ovs-ofctl waits for a barrier reply
		// after every flow_mod, so it takes at least one round trip
		// per rule; `ovs-ofctl benchmark` times that many echo round
		// trips, which the switch answers without other work.
		if d, err = sw.timed(left(), ofctl("benchmark", "br0", "100", strconv.Itoa(o.flows))...); err != nil {
			return nil, nil, err
		}
		add("echo round trips, one per rule", d)
		if o.verbose {
			fmt.Printf("    %s rep %d:", sw.name, rep)
			for _, m := range metrics[:5] {
				fmt.Printf(" [%s] %.3fs (vswitchd cpu %.2fs)", m.name, s[m.name][rep], s[m.name+" cpu"][rep])
			}
			fmt.Println()
		}
	}
	if err := sw.saveProfiles(o.profile, "flowtable"); err != nil {
		return nil, nil, err
	}
	if _, err := sw.cmd(left(), ofctl("del-flows", "br0")...); err != nil {
		return nil, nil, err
	}
	if _, err := sw.cmd(left(), ofctl("-O", "OpenFlow15", "--bundle", "add-flows", "br0", tupleFile)...); err != nil {
		return nil, nil, err
	}
	if err := sw.expectFlows(o.tuples*o.setupReps+1, "add-flows of the 5-tuple rules"); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), left()+30*time.Second)
	defer cancel()
	uc, err := unixctl.DialPath(ctx, sw.ctl)
	if err != nil {
		return nil, nil, err
	}
	defer uc.Close()
	for rep := 0; rep < o.setupReps; rep++ {
		if rep > 0 && over() {
			notes = append(notes, fmt.Sprintf("%s: budget %v reached after %d setup reps", sw.name, o.budget, rep))
			break
		}
		if _, err := transact(ctx, uc, "dpctl/del-flows"); err != nil {
			return nil, nil, err
		}
		if _, err := transact(ctx, uc, "revalidator/wait"); err != nil {
			return nil, nil, err
		}
		if n, _, err := countMegaflows(ctx, uc); err != nil || n != 0 {
			return nil, nil, fmt.Errorf("megaflows after dpctl/del-flows: %d (%v)", n, err)
		}
		batch := frames[rep*o.tuples : (rep+1)*o.tuples]
		cpu0 := sw.cpuTime()
		r, err := inject(ctx, uc, batch, o.window)
		s["new-flow setup cpu"] = append(s["new-flow setup cpu"], (sw.cpuTime() - cpu0).Seconds())
		if err != nil {
			return nil, nil, err
		}
		s["new-flow setup"] = append(s["new-flow setup"], float64(len(batch))/r.elapsed.Seconds()/1e3)
		n, sampleFlow, err := countMegaflows(ctx, uc)
		if err != nil {
			return nil, nil, err
		}
		s["megaflows after setup"] = append(s["megaflows after setup"], float64(n))
		if n != len(batch) {
			notes = append(notes, fmt.Sprintf("%s rep %d: %d megaflows after %d new 5-tuples", sw.name, rep, n, len(batch)))
		}
		if o.verbose {
			fmt.Printf("    %s setup rep %d: %.1f kpps, %d megaflows, %d unixctl polls\n", sw.name, rep,
				s["new-flow setup"][rep], n, r.polls)
			fmt.Printf("      e.g. %s\n", sampleFlow)
		}
		if r.rejected > 0 {
			notes = append(notes, fmt.Sprintf("%s rep %d: %d netdev-dummy/receive requests failed (first: %s)", sw.name, rep, r.rejected, r.firstErr))
		}
	}
	if err := sw.saveProfiles(o.profile, "setup"); err != nil {
		return nil, nil, err
	}
	return s, append(notes, sw.warnings...), nil
}

// transact sends one unixctl command and returns its text; a command
// error is an error.
func transact(ctx context.Context, c *unixctl.Client, method string, args ...string) (string, error) {
	r, err := c.Transact(ctx, method, args)
	if err != nil {
		return "", fmt.Errorf("%s: %w", method, err)
	}
	if r.Error != nil {
		return "", fmt.Errorf("%s: %s", method, jsonText(r.Error))
	}
	return jsonText(r.Result), nil
}

func jsonText(m json.RawMessage) string {
	var s string
	if json.Unmarshal(m, &s) == nil {
		return s
	}
	return string(m)
}

// countMegaflows returns the number of megaflows in the datapath and one
// of them.
func countMegaflows(ctx context.Context, c *unixctl.Client) (int, string, error) {
	out, err := transact(ctx, c, "dpctl/dump-flows")
	if err != nil {
		return 0, "", err
	}
	one := ""
	for line := range strings.Lines(out) {
		if strings.Contains(line, "actions:") {
			one = strings.TrimSpace(line)
			break
		}
	}
	return strings.Count(out, "actions:"), one, nil
}

var txP2RE = regexp.MustCompile(`port 2: p2 \([^)]*\)\n\s+RX packets:\d+[^\n]*\n\s+TX packets:(\d+)`)

// txOnP2 reads p2's transmitted packet count from dpctl/show -s.
func txOnP2(ctx context.Context, c *unixctl.Client) (int, error) {
	out, err := transact(ctx, c, "dpctl/show", "-s")
	if err != nil {
		return 0, err
	}
	m := txP2RE.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("dpctl/show -s: no TX count for p2 in:\n%s", out)
	}
	return strconv.Atoi(m[1])
}

type injectResult struct {
	elapsed  time.Duration
	rejected int
	firstErr string
	polls    int
}

// inject feeds frames into p1, at most window in flight, and returns when
// p2 has transmitted all of them (or nothing moved for 10 seconds).
func inject(ctx context.Context, c *unixctl.Client, frames []string, window int) (injectResult, error) {
	var r injectResult
	base, err := txOnP2(ctx, c)
	if err != nil {
		return r, err
	}
	sent, done := 0, 0
	lastMove := time.Now()
	start := time.Now()
	for done < len(frames) {
		if n := min(window-(sent-done), len(frames)-sent); n > 0 {
			args := append([]string{"p1"}, frames[sent:sent+n]...)
			rep, err := c.Transact(ctx, "netdev-dummy/receive", args)
			if err != nil {
				return r, fmt.Errorf("netdev-dummy/receive: %w", err)
			}
			if rep.Error != nil {
				// gvs refuses packets beyond its queue; count and go on
				// (the stall check below ends the run if they are lost).
				if r.rejected == 0 {
					r.firstErr = jsonText(rep.Error)
				}
				r.rejected++
			}
			sent += n
		}
		tx, err := txOnP2(ctx, c)
		r.polls++
		if err != nil {
			return r, err
		}
		if tx-base > done {
			done = tx - base
			lastMove = time.Now()
		} else if time.Since(lastMove) > 10*time.Second {
			return r, fmt.Errorf("stalled: %d of %d packets transmitted on p2 (%d injected)", done, len(frames), sent)
		}
	}
	r.elapsed = time.Since(start)
	return r, nil
}

// stats returns the median, min and max of v.
func stats(v []float64) (med, lo, hi float64) {
	w := slices.Clone(v)
	slices.Sort(w)
	n := len(w)
	if n%2 == 1 {
		med = w[n/2]
	} else {
		med = (w[n/2-1] + w[n/2]) / 2
	}
	return med, w[0], w[n-1]
}

func printTable(o options, rs map[string]sample) {
	// Ratios of gvs to each Open vSwitch variant measured.
	var bases []string
	if rs["gvs"] != nil {
		for _, b := range []string{"ovs", "ovs-pmd"} {
			if rs[b] != nil {
				bases = append(bases, b)
			}
		}
	}
	fmt.Printf("\n%-36s %-6s", "metric", "unit")
	for _, n := range o.switches {
		fmt.Printf(" %28s", n+" median [min-max]")
	}
	for _, b := range bases {
		fmt.Printf(" %11s", "gvs/"+b)
	}
	fmt.Println()
	for _, m := range metrics {
		if rs[o.switches[0]][m.name] == nil {
			continue
		}
		fmt.Printf("%-36s %-6s", m.name, m.unit)
		meds := map[string]float64{}
		for _, n := range o.switches {
			v := rs[n][m.name]
			if v == nil {
				fmt.Printf(" %28s", "-")
				continue
			}
			med, lo, hi := stats(v)
			meds[n] = med
			fmt.Printf(" %28s", fmt.Sprintf("%s [%s-%s]", num(med), num(lo), num(hi)))
		}
		for _, b := range bases {
			if meds[b] > 0 {
				fmt.Printf(" %11.2f", meds["gvs"]/meds[b])
			} else {
				fmt.Printf(" %11s", "-")
			}
		}
		fmt.Println()
	}
	fmt.Println("\nTimes: lower is better (gvs/ovs < 1: gvs is faster). Setup rate: higher is better (gvs/ovs > 1: gvs is faster).")
	fmt.Println("cpu rows: CPU time (user+system) of the vswitchd process during the command, all its threads.")
}

func num(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}
