package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

// roleSession is Open vSwitch's "controller role" check: two monitors
// (OpenFlow 1.3 or 1.4) ask for roles with ofctl/send; when one becomes
// primary, the former primary gets a role status. It returns both
// monitors' logs.
func roleSession(t *testing.T, env []string, version string) string {
	t.Helper()
	setUpOneBridge(t, env)
	dir := t.TempDir()
	hdr := map[string]string{"OpenFlow13": "04", "OpenFlow14": "05"}[version]
	var mons []*bgTool
	ctl := func(i int) string { return filepath.Join(dir, "c"+itoa(i)) }
	appctl := func(i int, args ...string) {
		run(t, env, append([]string{"ovs-appctl", "-t", ctl(i)}, args...)...)
	}
	for i := 1; i <= 2; i++ {
		mons = append(mons, startTool(t, env, "ovs-ofctl", "-O", version, "monitor", "br0", "--unixctl="+ctl(i)))
		waitFor(t, "the monitor's control socket", func() bool { _, err := os.Stat(ctl(i)); return err == nil })
		appctl(i, "ofctl/barrier")
		appctl(i, "ofctl/send", hdr+"1800180000000200000000000000000000000000000000")
	}
	// A barrier after each request: the monitor prints a reply when it
	// reads it, so without one the next "send:" line can come first
	// when the switch answers a moment later (seen under CI load).
	sendRole := func(i int, hex string) {
		appctl(i, "ofctl/send", hdr+hex)
		appctl(i, "ofctl/barrier")
	}
	sendRole(1, "1800180000000300000003000000008000000000000002")
	sendRole(2, "1800180000000300000002000000008000000000000003")
	sendRole(1, "1800180000000400000002000000000000000000000003")
	sendRole(1, "1800180000000500000002000000000000000000000001")
	appctl(2, "ofctl/barrier")
	time.Sleep(100 * time.Millisecond)
	return stopMonitors(t, mons)
}

// monitorSessionsBothWays runs session against Open vSwitch, then
// against gvs, and returns what each printed (want, got).
func monitorSessionsBothWays(t *testing.T, session func(env []string) string) (want, got string) {
	t.Helper()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	want = session(ovsEnv)
	stopOVS()
	_, gvsEnv := startDaemon(t)
	return want, session(gvsEnv)
}

// stopMonitors stops the monitors and joins their masked logs.
func stopMonitors(t *testing.T, mons []*bgTool) string {
	t.Helper()
	var logs []string
	for _, m := range mons {
		logs = append(logs, maskMonitor(m.stop(t)))
	}
	return strings.Join(logs, "\n---\n")
}

// TestRoleStatusLikeOpenVSwitch: role requests, stale generation ids and
// the role status a demoted primary receives print the same in both
// monitors as with Open vSwitch, in OpenFlow 1.3 (ONF extension) and 1.4.
func TestRoleStatusLikeOpenVSwitch(t *testing.T) {
	for _, v := range []string{"OpenFlow13", "OpenFlow14"} {
		want, got := monitorSessionsBothWays(t, func(env []string) string { return roleSession(t, env, v) })
		if got != want {
			t.Errorf("%s: monitors differ\n--- Open vSwitch:\n%s\n--- gvs:\n%s", v, want, got)
		}
		if !strings.Contains(got, "ROLE_STATUS") {
			t.Errorf("%s: no role status:\n%s", v, got)
		}
	}
}

// TestDefaultAsyncConfigLikeOpenVSwitch: a new connection's get-async
// reply (OpenFlow 1.3, 1.4, 1.5) is Open vSwitch's default configuration.
func TestDefaultAsyncConfigLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	session := func(env []string) string {
		setUpOneBridge(t, env)
		dir := t.TempDir()
		var out []string
		for i, v := range []string{"OpenFlow13", "OpenFlow14", "OpenFlow15"} {
			ctl := filepath.Join(dir, "m"+itoa(i))
			mon := startTool(t, env, "ovs-ofctl", "-O", v, "monitor", "br0", "--unixctl="+ctl)
			waitFor(t, "the monitor's control socket", func() bool { _, err := os.Stat(ctl); return err == nil })
			run(t, env, "ovs-appctl", "-t", ctl, "ofctl/send", []string{"04", "05", "06"}[i]+"1a00080000000a")
			run(t, env, "ovs-appctl", "-t", ctl, "ofctl/barrier")
			out = append(out, maskMonitor(mon.stop(t)))
		}
		return strings.Join(out, "\n---\n")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	want := session(ovsEnv)
	stopOVS()
	_, gvsEnv := startDaemon(t)
	if got := session(gvsEnv); got != want {
		t.Errorf("get-async replies differ\n--- Open vSwitch:\n%s\n--- gvs:\n%s", want, got)
	}
}

// requestForwardSession is Open vSwitch's "requestforward (OpenFlow
// 1.4)" check: three monitors (1.5, 1.4, 1.4) take roles and enable
// request forwarding with set-async; the second one adds and modifies a
// group, and the others get it forwarded in their versions.
func requestForwardSession(t *testing.T, env []string) string {
	t.Helper()
	setUpOneBridge(t, env)
	dir := t.TempDir()
	ctl := func(i int) string { return filepath.Join(dir, "c"+itoa(i)) }
	send := func(i int, hex string) {
		run(t, env, "ovs-appctl", "-t", ctl(i), "ofctl/send", hex)
	}
	var mons []*bgTool
	for i, v := range []string{"OpenFlow15", "OpenFlow14", "OpenFlow14"} {
		mons = append(mons, startTool(t, env, "ovs-ofctl", "-O", v, "monitor", "br0", "--unixctl="+ctl(i+1)))
		waitFor(t, "the monitor's control socket", func() bool { _, err := os.Stat(ctl(i + 1)); return err == nil })
	}
	send(1, "061800180000000300000003000000008000000000000002")
	send(2, "051800180000000300000002000000008000000000000003")
	send(3, "051800180000000300000003000000008000000000000004")
	send(1, "061c00280000000200000008000000050002000800000002000400080000001a000a000800000003")
	send(2, "051c002800000002000100080000000200030008000000050005000800000005000b000800000003")
	send(3, "051c00280000000200000008000000050002000800000002000400080000001a000a000800000003")
	send(2, "050f0020000000020000000000000001 00100000 ffffffffffffffff 00000000")
	send(2, "050f0020000000020001010000000001 00100000 ffffffffffffffff 00000000")
	// The sender's barrier first: once it is answered the switch has
	// handled both group_mods and queued their forwards, so the other
	// monitors' barrier replies come after them. (Open vSwitch handles
	// its connections in one thread; gvs handles each in its own, and a
	// barrier on another connection may overtake a group_mod still in
	// the sender's socket.)
	for _, i := range []int{2, 1, 3} {
		run(t, env, "ovs-appctl", "-t", ctl(i), "ofctl/barrier")
	}
	time.Sleep(100 * time.Millisecond)
	return stopMonitors(t, mons)
}

// TestRequestForwardLikeOpenVSwitch: a group_mod reaches the other
// controllers that enabled request forwarding, as with Open vSwitch.
func TestRequestForwardLikeOpenVSwitch(t *testing.T) {
	want, got := monitorSessionsBothWays(t, func(env []string) string { return requestForwardSession(t, env) })
	if got != want {
		t.Errorf("monitors differ\n--- Open vSwitch:\n%s\n--- gvs:\n%s", want, got)
	}
	if !strings.Contains(got, "REQUESTFORWARD") {
		t.Errorf("nothing forwarded:\n%s", got)
	}
}

// TestAsyncActionMaskCoversPacketOutBeforeOpenFlow14: an OpenFlow 1.0
// connection that enables only "action" packet-ins (NXT_SET_ASYNC_CONFIG)
// still gets a packet-out's controller output, whose OpenFlow 1.4 reason
// is packet_out, as with Open vSwitch.
func TestAsyncActionMaskCoversPacketOutBeforeOpenFlow14(t *testing.T) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	session := func(env []string) string {
		setUpOneBridge(t, env)
		ctl := filepath.Join(t.TempDir(), "m")
		mon := startTool(t, env, "ovs-ofctl", "-P", "standard", "monitor", "br0", "--unixctl="+ctl)
		waitFor(t, "the monitor's control socket", func() bool { _, err := os.Stat(ctl); return err == nil })
		run(t, env, "ovs-appctl", "-t", ctl, "ofctl/send", "01040028000000020000232000000013000000020000000000000007000000070000000f00000000")
		run(t, env, "ovs-appctl", "-t", ctl, "ofctl/barrier")
		run(t, env, "ovs-ofctl", "packet-out", "br0", "controller", "controller", "0001020304050010203040501234")
		run(t, env, "ovs-appctl", "-t", ctl, "ofctl/barrier")
		time.Sleep(200 * time.Millisecond)
		return maskMonitor(mon.stop(t))
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	want := session(ovsEnv)
	stopOVS()
	_, gvsEnv := startDaemon(t)
	got := session(gvsEnv)
	if got != want || !strings.Contains(got, "(via action)") {
		t.Errorf("monitor output differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", want, got)
	}
}
