package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

// ruleMemFlows returns n rules in ovs-ofctl's syntax shaped like
// tests/perf/ofbench's mixed flows (four tables, masks of several
// shapes, load/resubmit/output actions, one cookie per rule).
func ruleMemFlows(n int) []byte {
	var b bytes.Buffer
	n0, n1, n2 := n/5, n*3/10, n*3/10
	n3 := n - n0 - n1 - n2
	cookie := 0x1000
	for i := range n0 {
		cookie++
		fmt.Fprintf(&b, "table=0,cookie=%#x,priority=300,in_port=%d,dl_dst=02:00:%02x:%02x:%02x:%02x,actions=resubmit(,1)\n",
			cookie, i%3+1, byte(i>>24), byte(i>>16), byte(i>>8), byte(i))
	}
	for i := range n1 {
		cookie++
		fmt.Fprintf(&b, "table=1,cookie=%#x,priority=200,ip,nw_dst=%d.%d.%d.0/24,actions=load:%#x->NXM_NX_REG0[],resubmit(,2)\n",
			cookie, 10+i>>16, byte(i>>8), byte(i), i&0xffff)
	}
	for i := range n2 {
		cookie++
		fmt.Fprintf(&b, "table=2,cookie=%#x,priority=100,tcp,nw_src=172.%d.%d.%d,tp_dst=%d,actions=load:%#x->NXM_NX_REG1[0..15],resubmit(,3)\n",
			cookie, 16+i>>16, byte(i>>8), byte(i), 1+i%1000, i&0xffff)
	}
	for i := range n3 {
		cookie++
		if i%2 == 0 {
			fmt.Fprintf(&b, "table=3,cookie=%#x,priority=50,reg0=%#x,reg1=%#x,actions=output:%d\n",
				cookie, i, (i*7)&0xffff, i%3+1)
		} else {
			fmt.Fprintf(&b, "table=3,cookie=%#x,priority=40,reg0=%#x/0xffffff00,actions=output:%d\n",
				cookie, i<<8, i%3+1)
		}
	}
	return b.Bytes()
}

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
// per OpenFlow rule loaded with a bundle. It is the best reached so far
// with a margin, not the goal: Open vSwitch 3.1's ovs-vswitchd, measured
// on the same 100,000 rules by tests/perf/ofbench, grows by about 1,290
// bytes per rule, and the goal (issue 20) is half of that, 600 bytes.
// gvs measured 2,250-2,540 bytes here (6,580-6,880 before rules kept their
// match compressed and bundles stopped holding decoded flow_mods). What
// is left: about 515 bytes of live heap per rule are its actions (an
// ofp.Action is 288 bytes), about 385 the rule, its compressed match,
// counters and classifier nodes; the resident set is about 2.5 times the
// live heap (Go's heap grows to twice what the last collection found
// live before collecting, GOGC=100). See docs/performance.md.
const ruleMemBudget = 3200

// TestBundledRulesStayUnderMemoryBudget loads 100,000 mixed rules into
// gvs-vswitchd the way ovn-controller does (one OpenFlow 1.5 bundle,
// through Debian's ovs-ofctl) and checks the daemon's resident memory
// grew by less than ruleMemBudget bytes per rule: a regression guard
// for the rule representation, not a timing.
func TestBundledRulesStayUnderMemoryBudget(t *testing.T) {
	nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-switch")
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	const n = 100000
	p := startGVSProc(t, "", "", nil)
	vsctl := func(args ...string) {
		run(t, p.env, append([]string{"ovs-vsctl", "--timeout=20", "--db=unix:" + p.dbSock()}, args...)...)
	}
	vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy")
	vsctl("add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=1")
	vsctl("add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy", "ofport_request=2")
	vsctl("add-port", "br0", "p3", "--", "set", "interface", "p3", "type=dummy", "ofport_request=3")
	file := filepath.Join(p.run, "flows.txt")
	if err := os.WriteFile(file, ruleMemFlows(n), 0o644); err != nil {
		t.Fatal(err)
	}
	// A small bundle first, deleted again, so that the code paths and
	// buffers a bundle uses are resident in the baseline too.
	small := filepath.Join(p.run, "small.txt")
	if err := os.WriteFile(small, ruleMemFlows(100), 0o644); err != nil {
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
}
