package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

// bfdEnd is a switch in its own namespace whose bridge br0 (netdev
// datapath) has one system port, a veth end, running BFD.
type bfdEnd struct {
	env    []string
	target string // ovs-appctl target
	port   string
	pid    string // pidfile
	ns     string // the switch's namespace
}

// startBFDEnd starts a switch with start in a new namespace, moves the
// veth end port into it and enables BFD on it with 300 ms timers (short
// enough to see detection, long enough that a loaded CI machine does not
// make the sessions flap).
func startBFDEnd(t *testing.T, start chassisSwitch, port string) *bfdEnd {
	t.Helper()
	node := startSwitchNode(t, start)
	env, ns, dir, target := node.env, node.ns, node.dir, node.target
	nstest.Run(t, "ip", "link", "set", port, "netns", ns)
	nstest.InNetns(t, ns, "ip", "link", "set", port, "up")
	nstest.InNetns(t, ns, "ip", "link", "set", "lo", "up")
	run(t, env, "ovs-vsctl", "--timeout=30", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev", "fail-mode=secure",
		"--", "add-port", "br0", port, "--", "set", "interface", port, "bfd:enable=true", "bfd:min_rx=300", "bfd:min_tx=300")
	return &bfdEnd{env: env, target: target, port: port, pid: filepath.Join(dir, target+".pid"), ns: ns}
}

// show is the end's bfd/show for its port ("" once the switch is gone).
func (e *bfdEnd) show() string {
	c := exec.Command("ovs-appctl", "-t", e.target, "bfd/show", e.port)
	c.Env = e.env
	out, _ := c.CombinedOutput()
	return string(out)
}

// waitState waits up to d for the end's session to show state; it
// returns how long that took.
func (e *bfdEnd) waitState(t *testing.T, state string, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		s := e.show()
		// Up means both ends say so: the remote's up state arrives
		// with its next packet after ours.
		if strings.Contains(s, "Local Session State: "+state+"\n") && (state != "up" || strings.Contains(s, "Remote Session State: up\n")) {
			return time.Since(start)
		}
		if time.Since(start) > d {
			t.Fatalf("%s %s: session not %s after %v:\n%s", e.target, e.port, state, d, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill stops the end's switch at once (SIGKILL), as a crash.
func (e *bfdEnd) kill(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(e.pid)
	var pid int
	if err == nil {
		fmt.Sscan(string(b), &pid)
	}
	if pid <= 0 {
		t.Fatalf("no pid in %s", e.pid)
	}
	syscall.Kill(pid, syscall.SIGKILL)
}

// bfdKillCase brings a session up between the ends a (the survivor) and
// b over the veth, kills b's switch and requires a's session to go down
// with Control Detection Time Expired within its detect time (3 x 300
// ms) plus a margin for the machine's load.
func bfdKillCase(t *testing.T, startA, startB chassisSwitch) {
	va, vb := nstest.Veth(t)
	a := startBFDEnd(t, startA, va)
	b := startBFDEnd(t, startB, vb)
	a.waitState(t, "up", 10*time.Second)
	b.waitState(t, "up", 10*time.Second)
	waitFor(t, a.target+" forwarding", func() bool {
		s := a.show()
		return strings.Contains(s, "Remote Session State: up\n") && strings.Contains(s, "Forwarding: true\n")
	})
	b.kill(t)
	took := a.waitState(t, "down", 5*time.Second)
	t.Logf("%s: down %v after the peer was killed", a.target, took)
	if took > 3*time.Second {
		t.Errorf("%s: down only after %v (detect time 900 ms)", a.target, took)
	}
	if s := a.show(); !strings.Contains(s, "Local Diagnostic: Control Detection Time Expired\n") || !strings.Contains(s, "Forwarding: false\n") {
		t.Errorf("%s: after the peer died:\n%s", a.target, s)
	}
}

// TestBFDBetweenTwoGVSOverVeth: two gvs-vswitchd in their own
// namespaces run BFD over a veth pair (system ports): the sessions come
// up, and killing one switch takes the other's session down within the
// detect time.
func TestBFDBetweenTwoGVSOverVeth(t *testing.T) {
	t.Parallel()
	nstest.Require(t, "tests")
	for _, bin := range []string{"ovs-vsctl", "ovs-appctl"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	gvs := gvsChassis(daemonBinary(t))
	bfdKillCase(t, gvs, gvs)
}

// TestBFDInteroperatesWithOpenVSwitch: gvs-vswitchd and Open vSwitch's
// ovs-vswitchd (netdev datapath) run BFD with each other over a veth:
// the sessions come up, and killing either switch takes the other's
// session down within the detect time.
func TestBFDInteroperatesWithOpenVSwitch(t *testing.T) {
	t.Parallel()
	nstest.Require(t, "tests")
	for _, bin := range []string{"ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server", "ovsdb-tool"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	gvs := gvsChassis(daemonBinary(t))
	t.Run("Open vSwitch killed", func(t *testing.T) { bfdKillCase(t, gvs, ovsChassis) })
	t.Run("gvs killed", func(t *testing.T) { bfdKillCase(t, ovsChassis, gvs) })
}
