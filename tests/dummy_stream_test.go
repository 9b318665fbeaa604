package tests

import (
	"encoding/hex"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

// streamFrame is a 60-byte frame, told apart by its last byte.
func streamFrame(tag byte) string {
	f := make([]byte, 60)
	copy(f, []byte{0x50, 0x54, 0, 0, 0, 2, 0x50, 0x54, 0, 0, 0, 1, 0x88, 0xb5})
	f[59] = tag
	return hex.EncodeToString(f)
}

// portCounters returns "rx pkts=N bytes=B" and "tx pkts=N bytes=B" of a
// port from ovs-ofctl dump-ports.
var dumpPortsRE = regexp.MustCompile(`(rx|tx) pkts=(\d+), bytes=(\d+)`)

func portCounters(t *testing.T, env []string, br, port string) string {
	t.Helper()
	out := run(t, env, "ovs-ofctl", "dump-ports", br, port)
	var parts []string
	for _, m := range dumpPortsRE.FindAllStringSubmatch(out, -1) {
		parts = append(parts, m[1]+" pkts="+m[2]+" bytes="+m[3])
	}
	return strings.Join(parts, "; ")
}

// Dummy ports of gvs and of Open vSwitch joined by netdev-dummy streams
// (options:stream / options:pstream over unix sockets, as OVN's sandbox
// tests wire their hypervisors) carry frames both ways, with either side
// listening; netdev-dummy/conn-state reports the active ends.
func TestDummyPortStreamsCarryFramesToAndFromOpenVSwitch(t *testing.T) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, _ := startOpenVSwitch(t)
	_, gvsEnv := startDaemon(t)
	dir := t.TempDir()
	toOVS, toGVS := filepath.Join(dir, "to-ovs.sock"), filepath.Join(dir, "to-gvs.sock")
	// p1 links gvs (active) to Open vSwitch (passive), p3 the other way.
	bridge := func(env []string, p1, p3 string) {
		run(t, env, "ovs-vsctl", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail-mode=secure",
			"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=1", "options:"+p1,
			"--", "add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy", "ofport_request=2",
			"--", "add-port", "br0", "p3", "--", "set", "interface", "p3", "type=dummy", "ofport_request=3", "options:"+p3)
		run(t, env, "ovs-ofctl", "add-flow", "br0", "in_port=2,dl_type=0x88b5,actions=output:1,output:3")
	}
	bridge(ovsEnv, "pstream=punix:"+toOVS, "stream=unix:"+toGVS)
	bridge(gvsEnv, "stream=unix:"+toOVS, "pstream=punix:"+toGVS)
	gvsCtl := func(args ...string) string {
		return run(t, gvsEnv, append([]string{"ovs-appctl", "-t", "gvs-vswitchd"}, args...)...)
	}
	ovsCtl := func(args ...string) string {
		return run(t, ovsEnv, append([]string{"ovs-appctl", "-t", "ovs-vswitchd"}, args...)...)
	}
	connected := func(ctl func(...string) string, want string) func() bool {
		return func() bool { return strings.TrimSpace(ctl("netdev-dummy/conn-state")) == want }
	}
	waitFor(t, "gvs's p1 to connect", connected(gvsCtl, "p1: connected"))
	waitFor(t, "Open vSwitch's p3 to connect", connected(ovsCtl, "p3: connected"))
	for _, ctl := range []func(...string) string{gvsCtl, ovsCtl} {
		if got := ctl("netdev-dummy/conn-state", "p2"); got != "p2: unknown\n" {
			t.Errorf("conn-state p2: %q", got)
		}
	}
	// A frame into gvs's p2 leaves on p1 and p3, reaching Open vSwitch's
	// p1 and p3; one into Open vSwitch's p2 reaches gvs's.
	gvsCtl("netdev-dummy/receive", "p2", streamFrame(1))
	want := "rx pkts=1 bytes=60; tx pkts=0 bytes=0"
	for _, p := range []string{"p1", "p3"} {
		waitFor(t, "Open vSwitch's "+p+" to receive gvs's frame", func() bool { return portCounters(t, ovsEnv, "br0", p) == want })
	}
	ovsCtl("netdev-dummy/receive", "p2", streamFrame(2))
	want = "rx pkts=1 bytes=60; tx pkts=1 bytes=60"
	for _, p := range []string{"p1", "p3"} {
		waitFor(t, "gvs's "+p+" to receive Open vSwitch's frame", func() bool { return portCounters(t, gvsEnv, "br0", p) == want })
	}
	if got := portCounters(t, ovsEnv, "br0", "p1"); got != want {
		t.Errorf("Open vSwitch's p1: %s, want %s", got, want)
	}
}
