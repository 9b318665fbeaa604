package tests

import (
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

// usageGaps are commands whose usage gvs does not claim in full because
// it lacks part of what they accept: each names what is missing.
var usageGaps = map[string]string{
	"dpif/dump-flows": "--names/--no-names",
}

// TestSharedCommandsHaveOpenVSwitchsUsage: every unixctl command both
// daemons register is listed by list-commands with Open vSwitch's usage
// text (its bash completion parses it), but for usageGaps.
func TestSharedCommandsHaveOpenVSwitchsUsage(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stop := startOpenVSwitch(t)
	// Open vSwitch registers most commands once it has read the
	// database: on a loaded machine the first list can be short.
	var want map[string]string
	waitFor(t, "Open vSwitch's commands registered", func() bool {
		want = listCommands(run(t, ovsEnv, "ovs-appctl", "-t", "ovs-vswitchd", "list-commands"))
		return len(want) >= 130 // Open vSwitch 3.1 lists 138 here
	})
	stop()
	_, env := startDaemon(t)
	got := listCommands(run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "list-commands"))
	shared := 0
	for name, usage := range want {
		g, ok := got[name]
		if !ok {
			continue
		}
		shared++
		if g != usage && usageGaps[name] == "" {
			t.Errorf("%s: usage %q, Open vSwitch %q", name, g, usage)
		}
	}
	if shared < 80 {
		t.Errorf("only %d commands in common", shared)
	}
}

// listCommands parses list-commands' output: name -> usage.
func listCommands(s string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(s, "\n")[1:] {
		if f := strings.Fields(l); len(f) > 0 {
			m[f[0]] = strings.Join(f[1:], " ")
		}
	}
	return m
}
