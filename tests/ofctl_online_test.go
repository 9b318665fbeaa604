package tests

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/internal/ovsoracle"
)

var (
	gvsOfctlOnce sync.Once
	gvsOfctlPath string
	gvsOfctlErr  error
)

// gvsOfctlBinary builds gvs-ofctl once per test run.
func gvsOfctlBinary(t *testing.T) string {
	t.Helper()
	gvsOfctlOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gvs-ofctl-bin")
		if err != nil {
			gvsOfctlErr = err
			return
		}
		gvsOfctlPath = filepath.Join(dir, "gvs-ofctl")
		if out, err := exec.Command("go", "build", "-o", gvsOfctlPath, "github.com/gvs-project/gvs/cmd/gvs-ofctl").CombinedOutput(); err != nil {
			gvsOfctlErr = &buildError{string(out)}
		}
	})
	if gvsOfctlErr != nil {
		t.Fatal(gvsOfctlErr)
	}
	return gvsOfctlPath
}

// onlineBase is the flow table every modifying step starts from.
const onlineBase = `in_port=1,actions=output:2
cookie=0x5,priority=7,in_port=3,actions=resubmit(,1),output:1
table=1,priority=1,actions=load:0x2a->NXM_NX_REG0[],output:2
table=1,priority=10,tcp,tp_dst=80,actions=drop
cookie=0x7,priority=5,ip,nw_dst=10.0.0.2,actions=mod_dl_dst:aa:bb:cc:dd:ee:ff,output:1
cookie=0x15,priority=6,ipv6,ipv6_src=::1,idle_timeout=300,actions=drop
table=2,priority=3,udp,actions=goto_table:3
`

// onlineFlowsFile0 has flows in table 0 only: replace-flows can use
// OpenFlow 1.0 without the table id extension.
const onlineFlowsFile0 = "priority=20,arp,actions=NORMAL\nin_port=1,actions=output:2\ncookie=0x5,priority=7,in_port=3,actions=output:1\n"

const onlineFlowsFile = "priority=20,arp,actions=NORMAL\n# a comment\n\npriority=21,udp,tp_src=53,actions=output:1\ntable=4,priority=9,icmp,actions=output:2\n"

// onlineStep is one command run by both tools; stdin feeds "-" files.
type onlineStep struct {
	args  []string
	stdin string
}

func oc(args ...string) onlineStep { return onlineStep{args: args} }

func onlineSteps() []onlineStep {
	return []onlineStep{
		oc("show", "br0"),
		oc("-O", "OpenFlow13", "show", "br0"),
		oc("-O", "OpenFlow15", "show", "br0"),
		oc("dump-desc", "br0"),
		oc("dump-ports-desc", "br0"),
		oc("-O", "OpenFlow14", "dump-ports-desc", "br0"),
		oc("dump-ports", "br0", "2"),
		oc("-O", "OpenFlow13", "dump-ports", "br0", "1"),
		oc("dump-tables", "br0"),
		oc("-O", "OpenFlow13", "dump-tables", "br0"),
		oc("-O", "OpenFlow15", "dump-tables", "br0"),
		oc("dump-flows", "br0"),
		oc("--no-stats", "dump-flows", "br0"),
		oc("--sort", "dump-flows", "br0"),
		oc("--rsort=priority", "--no-stats", "dump-flows", "br0"),
		oc("dump-flows", "br0", "table=1"),
		oc("dump-flows", "br0", "cookie=0x5/-1"),
		oc("dump-flows", "br0", "tcp"),
		oc("dump-flows", "br0", "out_port=2"),
		oc("dump-flows", "br0", "ipv6,ipv6_src=::1"),
		oc("--no-names", "dump-flows", "br0", "table=2"),
		oc("-O", "OpenFlow13", "dump-flows", "br0"),
		oc("-O", "OpenFlow14", "dump-flows", "br0", "table=2"),
		oc("-O", "OpenFlow15", "dump-flows", "br0"),
		oc("-O", "OpenFlow10,OpenFlow13", "dump-flows", "br0", "cookie=0x4/0x4"),
		oc("dump-aggregate", "br0"),
		oc("dump-aggregate", "br0", "table=1"),
		oc("-O", "OpenFlow13", "dump-aggregate", "br0", "table=1"),
		oc("-O", "OpenFlow15", "dump-aggregate", "br0"),
		oc("add-flow", "br0", "priority=9,in_port=2,actions=output:1"),
		oc("add-flow", "br0", "table=3,cookie=0x9,idle_timeout=60,hard_timeout=90,send_flow_rem,priority=4,actions=drop"),
		oc("add-flow", "br0", "table=1,ipv6_dst=::2,actions=drop"),
		oc("-O", "OpenFlow13", "add-flow", "br0", "table=3,cookie=0x7,priority=3,reg0=0,actions=set_field:5->reg1,output:3"),
		oc("-O", "OpenFlow13", "add-flow", "br0", "reset_counts,priority=2,actions=write_actions(output:1),goto_table:1"),
		oc("-O", "OpenFlow15", "add-flow", "br0", "importance=5,priority=3,actions=drop"),
		oc("add-flow", "br0", "table=254,actions=drop"),
		oc("add-flow", "br0", "check_overlap,priority=7,in_port=3,actions=drop"),
		oc("add-flow", "br0", "in_port=1,actions=output:2,frobnicate"),
		oc("add-flow", "br0", "nonsense=3,actions=drop"),
		oc("add-flow", "br0", "in_port=1"),
		oc("add-flow", "br0", "in_port=p2,actions=output:p1"),
		oc("add-flow", "br0", "in_port=p9,actions=output:p1"),
		oc("--no-names", "add-flow", "br0", "in_port=p2,actions=output:p1"),
		oc("del-flows", "br0", "in_port=p1"),
		oc("dump-flows", "br0", "in_port=p3"),
		oc("--names", "dump-flows", "br0"),
		oc("-O", "OpenFlow13", "--names", "--no-stats", "dump-flows", "br0"),
		oc("--sort=in_port", "--no-stats", "dump-flows", "br0"),
		oc("--rsort=tp_dst", "--no-stats", "dump-flows", "br0"),
		oc("add-flows", "br0", "flows.txt"),
		{args: []string{"add-flows", "br0", "-"}, stdin: onlineFlowsFile},
		oc("-O", "OpenFlow14", "--bundle", "add-flow", "br0", "table=5,priority=1,actions=output:1"),
		oc("-O", "OpenFlow13", "--bundle", "add-flows", "br0", "flows.txt"),
		oc("--bundle", "add-flows", "br0", "flows.txt"),
		oc("-O", "OpenFlow14", "--bundle", "add-flow", "br0", "in_port=1,actions=group:7"),
		{args: []string{"-O", "OpenFlow13", "--bundle", "add-flows", "br0", "-"}, stdin: "priority=3,actions=drop\nin_port=1,actions=group:7\nin_port=2,actions=group:8\n"},
		oc("mod-flows", "br0", "in_port=1,actions=output:3"),
		oc("mod-flows", "br0", "cookie=0x5/-1,actions=output:3"),
		oc("mod-flows", "br0", "cookie=0x9,ip,actions=output:3"),
		oc("--strict", "mod-flows", "br0", "table=1,priority=1,actions=output:1"),
		oc("-O", "OpenFlow13", "mod-flows", "br0", "cookie=0x4/0x4,actions=output:3"),
		oc("del-flows", "br0", "table=1"),
		oc("--strict", "del-flows", "br0", "priority=5,ip,nw_dst=10.0.0.2"),
		oc("del-flows", "br0", "cookie=0x5/-1"),
		oc("-O", "OpenFlow13", "del-flows", "br0", "cookie=0x0/0xffffffffffffffff,udp"),
		oc("del-flows", "br0", "out_port=2"),
		oc("-O", "OpenFlow13", "del-flows", "br0", "out_port=1"),
		oc("del-flows", "br0", "cookie=5"),
		oc("del-flows", "br0"),
		oc("diff-flows", "br0", "flows.txt"),
		oc("diff-flows", "flows.txt", "br0"),
		oc("-O", "OpenFlow13", "diff-flows", "br0", "flows.txt"),
		oc("diff-flows", "br0", "br0"),
		oc("diff-flows", "flows.txt", "flows.txt"),
		oc("replace-flows", "br0", "flows.txt"),
		oc("replace-flows", "br0", "flows0.txt"),
		oc("-O", "OpenFlow13", "replace-flows", "br0", "flows.txt"),
		oc("-O", "OpenFlow14", "--bundle", "replace-flows", "br0", "flows0.txt"),
		oc("dump-flows", "nosuchbr"),
		oc("add-flow", "tcp:127.0.0.1:1", "actions=drop"),
		oc("dump-flows", "unix:refused.sock"),
	}
}

var onlineAgeRE = regexp.MustCompile(`(duration|idle_age|hard_age)=[0-9.]+s?`)

// runOnline runs one tool with args and returns its masked transcript:
// stdout, stderr (Open vSwitch log lines dropped, the program name
// unified), exit code.
func runOnline(t *testing.T, env []string, dir, bin string, st onlineStep) string {
	t.Helper()
	args := slices.Clone(st.args)
	for i, a := range args {
		switch a {
		case "flows.txt", "flows0.txt":
			args[i] = filepath.Join(dir, a)
		case "unix:refused.sock":
			args[i] = "unix:" + filepath.Join(dir, "refused.sock")
		}
	}
	c := exec.Command(bin, append([]string{"--timeout=10"}, args...)...)
	c.Env = env
	c.Stdin = strings.NewReader(st.stdin)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	rc := 0
	if err := c.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%s %v: %v", bin, args, err)
		}
		rc = ee.ExitCode()
	}
	mask := func(s string) string {
		s = strings.ReplaceAll(s, dir+"/", "")
		s = strings.ReplaceAll(s, filepath.Base(bin)+":", "ofctl:")
		return onlineAgeRE.ReplaceAllString(s, "$1=<t>")
	}
	o := mask(out.String())
	if slices.ContainsFunc(st.args, func(a string) bool { return strings.HasPrefix(a, "--sort") || strings.HasPrefix(a, "--rsort") }) {
		// Ties in priority are ordered by qsort in ovs-ofctl: compare
		// the lines as a set, and the priorities' order separately.
		lines := strings.Split(strings.TrimRight(o, "\n"), "\n")
		var prios []string
		for _, l := range lines {
			if m := regexp.MustCompile(`priority=\d+`).FindString(l); m != "" {
				prios = append(prios, m)
			} else {
				prios = append(prios, "priority=32768")
			}
		}
		slices.Sort(lines)
		o = strings.Join(prios, " ") + "\n" + strings.Join(lines, "\n") + "\n"
	}
	if slices.Contains(st.args, "diff-flows") {
		// Differences are listed in classifier hash order.
		lines := strings.SplitAfter(o, "\n")
		slices.Sort(lines)
		o = strings.Join(lines, "")
	}
	return "stdout:\n" + o + "stderr:\n" + mask(ovsoracle.DropLogLines(errb.String())) + "exit " + string(rune('0'+rc)) + "\n"
}

// ofctlSwitch starts the named switch ("Open vSwitch" or gvs-vswitchd)
// for the subtest t, with the bridges of setUpOfctlBridge, and returns
// its environment for the tools.
func ofctlSwitch(t *testing.T, sw string) []string {
	t.Helper()
	var env []string
	if sw == "Open vSwitch" {
		var stop func()
		env, stop = startOpenVSwitch(t)
		t.Cleanup(stop)
	} else {
		_, env = startDaemon(t)
	}
	setUpOfctlBridge(t, env)
	return env
}

// onlineFixture writes the flow files the online steps read into a new
// directory, with a socket path nobody listens on, and returns it with a
// function that restores br0's base flow table.
func onlineFixture(t *testing.T, env []string) (string, func()) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{"flows.txt": onlineFlowsFile, "flows0.txt": onlineFlowsFile0} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("unix", filepath.Join(dir, "refused.sock"))
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	reset := func() {
		run(t, env, "ovs-ofctl", "--timeout=10", "del-flows", "br0")
		c := exec.Command("ovs-ofctl", "--timeout=10", "add-flows", "br0", "-")
		c.Env, c.Stdin = env, strings.NewReader(onlineBase)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("resetting flows: %v\n%s", err, out)
		}
	}
	return dir, reset
}

// TestGvsOfctlOnlineCommandsMatchOVSOfctl runs every step with Debian's
// ovs-ofctl and with gvs-ofctl against the same switch, Open vSwitch's
// ovs-vswitchd (dummy datapath) and then gvs-vswitchd, resetting the flow
// table before each step; output, errors, exit code and the flow table
// afterwards must be identical (durations and ages masked).
func TestGvsOfctlOnlineCommandsMatchOVSOfctl(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	gvsOfctl := gvsOfctlBinary(t)
	for _, sw := range []string{"Open vSwitch", "gvs-vswitchd"} {
		t.Run(sw, func(t *testing.T) {
			env := ofctlSwitch(t, sw)
			dir, reset := onlineFixture(t, env)
			state := onlineStep{args: []string{"--no-stats", "--sort", "dump-flows", "br0"}}
			for _, st := range onlineSteps() {
				var got [2]string
				for i, bin := range []string{"ovs-ofctl", gvsOfctl} {
					reset()
					got[i] = runOnline(t, env, dir, bin, st) + "table after:\n" + runOnline(t, env, dir, "ovs-ofctl", state)
				}
				if got[0] != got[1] {
					t.Errorf("%v differs\n--- ovs-ofctl:\n%s--- gvs-ofctl:\n%s", st.args, got[0], got[1])
				}
			}
		})
	}
}
