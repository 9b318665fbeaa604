package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBridgeWithUnsafeNameIgnoredLikeOpenVSwitch is ovs-vswitchd.at "do not
// create sockets with unsafe names": a bridge whose name has a "/" is
// ignored with Open vSwitch's warning, so ovs-vsctl reports its interface
// as not set up, and no socket is made in another directory.
func TestBridgeWithUnsafeNameIgnoredLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	vsctl := func(args ...string) ofStep { return ofStep{"ovs-vsctl", append([]string{"--timeout=20"}, args...)} }
	steps := func() []ofStep {
		return []ofStep{
			vsctl("add-br", "a", "--", "set", "bridge", "a", "datapath-type=dummy"),
			vsctl("add-br", "b/c", "--", "set", "bridge", "b/c", "datapath-type=dummy"),
			vsctl("get", "interface", "b/c", "ofport"),
			{tool: "log", args: []string{`invalid name`}},
		}
	}
	logDir := regexp.MustCompile(`The default log directory is "[^"]*"`)
	diffOneBridgeAgainstOpenVSwitch(t, steps, func(s string) string { return logDir.ReplaceAllString(s, `The default log directory is "<dir>"`) })

	_, env := startDaemon(t)
	dir := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "OVS_RUNDIR="); ok {
			dir = v
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "a", "--", "set", "bridge", "a", "datapath-type=dummy")
	// ovs-vsctl reports the error on stderr and exits 0, as with Open vSwitch.
	if out := run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "b/c", "--", "set", "bridge", "b/c", "datapath-type=dummy"); !strings.Contains(out, "Error detected while setting up 'b/c'.") {
		t.Errorf("ovs-vsctl add-br b/c printed %q, want Open vSwitch's error", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.mgmt")); err != nil {
		t.Errorf("bridge a's socket: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "b", "c.mgmt")); !os.IsNotExist(err) {
		t.Errorf("b/c.mgmt exists or cannot be checked (%v); want no socket in another directory", err)
	}
}
