package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

// pauseSession pauses a packet in table 0 (controller(pause) after
// setting reg0) and lets `ovs-ofctl monitor ... resume` send it back with
// NXT_RESUME; the rest of the pipeline (resubmit to table 1, which needs
// reg0=5) must then forward it to p2. It returns the monitor's transcript
// and p2's transmit counters.
func pauseSession(t *testing.T, env []string, target string) (monitor, ports string) {
	t.Helper()
	setUpOfctlBridge(t, env)
	run(t, env, "ovs-ofctl", "add-flow", "br0", "in_port=1,actions=load:5->NXM_NX_REG0[],controller(userdata=01.02,pause),resubmit(,1)")
	run(t, env, "ovs-ofctl", "add-flow", "br0", "table=1,reg0=5,actions=output:2")
	log := filepath.Join(t.TempDir(), "monitor.log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	mon := exec.Command("ovs-ofctl", "-O", "OpenFlow15", "monitor", "br0", "resume", "-P", "nxt_packet_in2")
	mon.Env, mon.Stdout, mon.Stderr = env, f, f
	if err := mon.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { mon.Process.Kill(); mon.Wait(); f.Close() }()
	time.Sleep(500 * time.Millisecond) // the monitor's connection and set-up messages
	run(t, env, "ovs-appctl", "-t", target, "netdev-dummy/receive", "p1", pktFrom1)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(run(t, env, "ovs-ofctl", "dump-ports", "br0", "2"), "tx pkts=1,") {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log)
			t.Fatalf("%s: the paused packet was not resumed to p2; monitor:\n%s", target, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	b, _ := os.ReadFile(log)
	return string(b), run(t, env, "ovs-ofctl", "dump-ports", "br0", "2")
}

var (
	contBridgeRE = regexp.MustCompile(`continuation\.bridge=[0-9a-f-]+`)
	monXidRE     = regexp.MustCompile(`\(xid=0x[0-9a-f]+\)`)
)

// TestPausedPacketInResumesLikeOpenVSwitch checks controller(pause) and
// NXT_RESUME against Open vSwitch: the same NXT_PACKET_IN2 (with its
// continuation, which ovs-ofctl decodes) and the packet forwarded by the
// rest of the pipeline after the resume.
func TestPausedPacketInResumesLikeOpenVSwitch(t *testing.T) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	wantMon, wantPorts := pauseSession(t, ovsEnv, "ovs-vswitchd")
	stopOVS()
	_, gvsEnv := startDaemon(t)
	gotMon, gotPorts := pauseSession(t, gvsEnv, "gvs-vswitchd")
	mask := func(s string) string {
		s = contBridgeRE.ReplaceAllString(s, "continuation.bridge=<uuid>")
		s = monXidRE.ReplaceAllString(s, "(xid=<x>)")
		return maskOfctl("ovs-ofctl", []string{"dump-ports"}, s)
	}
	if mask(gotMon) != mask(wantMon) {
		t.Errorf("monitor transcript differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", wantMon, gotMon)
	}
	if mask(gotPorts) != mask(wantPorts) {
		t.Errorf("p2 counters differ\n--- Open vSwitch:\n%s\n--- gvs:\n%s", wantPorts, gotPorts)
	}
}
