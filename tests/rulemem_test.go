package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/tests/internal/flowgen"
)

// vmRSS returns a process's resident set size in bytes.
func vmRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}

// ruleMemBudget is the most resident memory a gvs-vswitchd may grow by
// per OpenFlow rule loaded with a bundle, measured as the bundle's reply
// arrives. It is the best reached so far with a margin, not the goal: Open
// vSwitch 3.1's ovs-vswitchd, measured on the same 100,000 rules by
// tests/perf/ofbench, grows by about 1,290 bytes per rule, and the goal
// (issue 20) is half of that. gvs measured 1,385-1,434 bytes here with
// its default collector headroom (--gc-headroom=25 --gc-headroom-min=64)
// once an ofp.Action kept its kind's structure in one Body field (288 ->
// 176 bytes; 1,628-1,639 before; 2,250-2,540 with Go's default headroom and
// before flow_mods stopped copying their match and action lists;
// 6,580-6,880 before rules kept their match compressed).
const ruleMemBudget = 1800

// settledRuleMemBudget is the same once the daemon has been quiet for its
// --gc-trim-after and returned the collector's headroom to the system:
// what stays is the rules' own memory and the holes the bundle's garbage
// left among them. Measured 986-1,042 bytes (1,145 before the smaller
// ofp.Action). See docs/performance.md.
const settledRuleMemBudget = 1250

// TestBundledRulesStayUnderMemoryBudget loads 100,000 mixed rules into
// gvs-vswitchd the way ovn-controller does (one OpenFlow 1.5 bundle,
// through Debian's ovs-ofctl) and checks the daemon's resident memory
// grew by less than ruleMemBudget bytes per rule: a regression guard
// for the rule representation, not a timing.
func TestBundledRulesStayUnderMemoryBudget(t *testing.T) {
	nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-switch")
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	const n = 100000
	// The trim after a quiet second, not the default ten: the settled
	// figure below is the one a quiet switch keeps.
	p := startGVSProc(t, "", "", nil, "--gc-trim-after=1s")
	vsctl := func(args ...string) {
		run(t, p.env, append([]string{"ovs-vsctl", "--timeout=20", "--db=unix:" + p.dbSock()}, args...)...)
	}
	vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy")
	vsctl("add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=1")
	vsctl("add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy", "ofport_request=2")
	vsctl("add-port", "br0", "p3", "--", "set", "interface", "p3", "type=dummy", "ofport_request=3")
	file := filepath.Join(p.run, "flows.txt")
	if err := os.WriteFile(file, flowgen.Mixed(n), 0o644); err != nil {
		t.Fatal(err)
	}
	// A small bundle first, deleted again, so that the code paths and
	// buffers a bundle uses are resident in the baseline too.
	small := filepath.Join(p.run, "small.txt")
	if err := os.WriteFile(small, flowgen.Mixed(100), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, p.env, "ovs-ofctl", "-O", "OpenFlow15", "--bundle", "add-flows", "br0", small)
	run(t, p.env, "ovs-ofctl", "-O", "OpenFlow15", "--bundle", "del-flows", "br0")
	time.Sleep(200 * time.Millisecond)
	before := vmRSS(t, p.cmd.Process.Pid)

	run(t, p.env, "ovs-ofctl", "-O", "OpenFlow15", "--bundle", "add-flows", "br0", file)
	out := run(t, p.env, "ovs-ofctl", "dump-aggregate", "br0")
	if !strings.Contains(out, fmt.Sprintf("flow_count=%d", n)) {
		t.Fatalf("dump-aggregate after the bundle: %s, want flow_count=%d", out, n)
	}
	after := vmRSS(t, p.cmd.Process.Pid)
	per := float64(after-before) / n
	t.Logf("RSS %d kB before, %d kB after %d rules: %.0f bytes per rule (budget %d)", before>>10, after>>10, n, per, ruleMemBudget)
	if per > ruleMemBudget {
		t.Errorf("gvs-vswitchd grew by %.0f bytes per rule, budget %d", per, ruleMemBudget)
	}

	// Once quiet, the collector's headroom goes back to the system: the
	// growth that stays is the rules' own.
	settled := after
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
		rss := vmRSS(t, p.cmd.Process.Pid)
		if rss >= settled && settled < after-16<<20 {
			break // trimmed, and no longer shrinking
		}
		settled = min(settled, rss)
	}
	per = float64(settled-before) / n
	t.Logf("RSS %d kB once quiet: %.0f bytes per rule (budget %d)", settled>>10, per, settledRuleMemBudget)
	if per > settledRuleMemBudget {
		t.Errorf("gvs-vswitchd kept %.0f bytes per rule once quiet, budget %d", per, settledRuleMemBudget)
	}
}
