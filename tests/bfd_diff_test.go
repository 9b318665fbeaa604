package tests

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

// bfdStep is one step of a BFD scenario: a command, or a wait (sleep
// set) that lets the sessions move on in real time.
type bfdStep struct {
	args  []string // "ovs-vsctl ..." / "ovs-appctl ..." / "ovs-ofctl ..."
	sleep time.Duration
}

func bfdCmd(args ...string) bfdStep   { return bfdStep{args: args} }
func bfdWait(d time.Duration) bfdStep { return bfdStep{sleep: d} }

// bfdShowRE drops what differs on every run from bfd/show: times and
// discriminators (as Open vSwitch's bfd.at does).
var bfdShowRE = regexp.MustCompile(`(?m)^.*(Time:|Discriminator:).*\n`)

// bfdAddrRE masks port MACs (random for patch and local ports).
var bfdAddrRE = regexp.MustCompile(`addr:[0-9a-f:]{17}`)

// runBFDSteps runs steps against the switch whose control target is
// target and returns one transcript entry per command.
func runBFDSteps(env []string, target string, steps []bfdStep) []string {
	var out []string
	for _, st := range steps {
		if st.sleep > 0 {
			time.Sleep(st.sleep)
			continue
		}
		args := append([]string(nil), st.args[1:]...)
		switch st.args[0] {
		case "ovs-appctl":
			args = append([]string{"-t", target}, args...)
		default:
			args = append([]string{"--timeout=10"}, args...)
		}
		c := exec.Command(st.args[0], args...)
		c.Env = env
		b, err := c.CombinedOutput()
		rc := 0
		if ee, ok := err.(*exec.ExitError); ok {
			rc = ee.ExitCode()
		} else if err != nil {
			rc = -1
		}
		text := bfdShowRE.ReplaceAllString(string(b), "")
		text = bfdAddrRE.ReplaceAllString(text, "addr:MAC")
		if st.args[1] == "ofproto/trace" {
			// The fast-failover group's choice, as the datapath does it.
			for _, l := range strings.Split(text, "\n") {
				if strings.HasPrefix(l, "Datapath actions:") {
					text = l + "\n"
				}
			}
		}
		text = strings.ReplaceAll(text, target, "SWITCH")
		out = append(out, fmt.Sprintf("$ %s  [exit %d]\n%s", strings.Join(st.args, " "), rc, text))
	}
	return out
}

// bfdPatchSetup is bfd.at's: br0 and br1 (dummy datapath) joined by the
// patch ports p0 and p1, and on br1 the dummy ports p3 and p4 that a
// fast-failover group chooses between by p1's liveness.
func bfdPatchSetup() []bfdStep {
	return []bfdStep{
		bfdCmd("ovs-vsctl", "init"),
		bfdCmd("ovs-vsctl", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail-mode=secure",
			"--", "add-br", "br1", "--", "set", "bridge", "br1", "datapath_type=dummy", "fail-mode=secure",
			"--", "add-port", "br0", "p0", "--", "set", "interface", "p0", "type=patch", "options:peer=p1", "ofport_request=1",
			"--", "add-port", "br1", "p1", "--", "set", "interface", "p1", "type=patch", "options:peer=p0", "ofport_request=1",
			"--", "add-port", "br1", "p3", "--", "set", "interface", "p3", "type=dummy", "ofport_request=3",
			"--", "add-port", "br1", "p4", "--", "set", "interface", "p4", "type=dummy", "ofport_request=4"),
		bfdCmd("ovs-ofctl", "-O", "OpenFlow13", "add-group", "br1", "group_id=1,type=fast_failover,bucket=watch_port:1,output:3,bucket=watch_port:4,output:4"),
		bfdCmd("ovs-ofctl", "-O", "OpenFlow13", "add-flow", "br1", "in_port=LOCAL,actions=group:1"),
	}
}

// bfdObserve reads everything the scenario compares after each phase.
func bfdObserve() []bfdStep {
	return []bfdStep{
		bfdCmd("ovs-appctl", "bfd/show", "p0"),
		bfdCmd("ovs-appctl", "bfd/show", "p1"),
		bfdCmd("ovs-vsctl", "get", "interface", "p0", "bfd_status"),
		bfdCmd("ovs-vsctl", "get", "interface", "p1", "bfd_status"),
		bfdCmd("ovs-appctl", "ofproto/trace", "br1", "in_port=LOCAL,dl_src=50:54:00:00:00:03,dl_dst=50:54:00:00:00:04"),
		bfdCmd("ovs-ofctl", "-O", "OpenFlow13", "dump-ports-desc", "br1", "p1"),
	}
}

// bfdScenario: sessions come up, p0's BFD goes away (p1 expires after
// its detect time), comes back, p1's min_rx decays on the idle link, and
// bfd/set-forwarding overrides p1's decision.
func bfdScenario() []bfdStep {
	min := []string{"bfd:min_rx=100", "bfd:min_tx=100"}
	s := bfdPatchSetup()
	s = append(s, bfdCmd(append([]string{"ovs-vsctl", "set", "interface", "p0", "bfd:enable=true"}, min...)...),
		bfdCmd(append([]string{"ovs-vsctl", "set", "interface", "p1", "bfd:enable=true"}, min...)...),
		bfdWait(3500*time.Millisecond))
	s = append(s, bfdObserve()...)
	s = append(s, bfdCmd("ovs-vsctl", "set", "interface", "p0", "bfd:enable=false"), bfdWait(1500*time.Millisecond))
	s = append(s, bfdObserve()...)
	s = append(s, bfdCmd("ovs-vsctl", "set", "interface", "p0", "bfd:enable=true"), bfdWait(3500*time.Millisecond))
	s = append(s, bfdObserve()...)
	s = append(s, bfdCmd("ovs-vsctl", "set", "interface", "p1", "bfd:decay_min_rx=300"), bfdWait(3500*time.Millisecond))
	s = append(s, bfdObserve()...)
	s = append(s, bfdCmd("ovs-appctl", "bfd/set-forwarding", "p1", "false"), bfdWait(500*time.Millisecond))
	s = append(s, bfdObserve()...)
	s = append(s, bfdCmd("ovs-appctl", "bfd/set-forwarding", "p1", "normal"), bfdWait(500*time.Millisecond))
	s = append(s, bfdObserve()...)
	s = append(s,
		bfdCmd("ovs-appctl", "bfd/set-forwarding", "p9", "true"),
		bfdCmd("ovs-appctl", "bfd/set-forwarding", "p1", "sometimes"),
		bfdCmd("ovs-appctl", "bfd/show", "p9"),
		bfdCmd("ovs-vsctl", "del-port", "br0", "p0"), bfdWait(1500*time.Millisecond))
	s = append(s, bfdObserve()...)
	return s
}

// TestBFDLikeOpenVSwitch runs the same BFD scenario on Open vSwitch 3.1
// and gvs at once (real time, 100 ms intervals) and requires the same
// bfd/show (without times and discriminators), bfd_status, fast-failover
// choice and OpenFlow port state after every phase.
func TestBFDLikeOpenVSwitch(t *testing.T) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, _ := startOpenVSwitch(t)
	_, gvsEnv := startDaemon(t)
	var want, got []string
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); want = runBFDSteps(ovsEnv, "ovs-vswitchd", bfdScenario()) }()
	go func() { defer wg.Done(); got = runBFDSteps(gvsEnv, "gvs-vswitchd", bfdScenario()) }()
	wg.Wait()
	if testing.Verbose() {
		t.Log(strings.Join(got, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", i, want[i], got[i])
		}
	}
}
