package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/internal/ovsoracle"
)

// TestControllersConfinedToTheRunDirectoryLikeOpenVSwitch is
// ovs-vswitchd.at "set service controller": a passive controller named
// RUNDIR/BRIDGE.* is listened on; one whose path leaves that form, and an
// active one outside the run directory, are dropped with Open vSwitch's
// errors, so a database client cannot make the switch overwrite or reach
// other files.
func TestControllersConfinedToTheRunDirectoryLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovs-vsctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	session := func(env []string, target string) (string, bool) {
		dir := ""
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, "OVS_RUNDIR="); ok {
				dir = v
			}
		}
		setUpOneBridge(t, env)
		vsctl := func(args ...string) { run(t, env, append([]string{"ovs-vsctl", "--timeout=20"}, args...)...) }
		vsctl("set-controller", "br0", "punix:"+filepath.Join(dir, "br0.void"))
		waitFor(t, "the passive controller's socket", func() bool { _, err := os.Stat(filepath.Join(dir, "br0.void")); return err == nil })
		vsctl("set-controller", "br0", "punix:"+dir+"/br0.void/../overwrite.file", "punix:"+dir+"/other.sock", "unix:/tmp/elsewhere.sock")
		var logs string
		waitFor(t, "the errors", func() bool {
			logs = daemonLogLines(t, env, target, `Not (adding|connecting)`)
			return strings.Count(logs, "\n") >= 3
		})
		_, err := os.Stat(filepath.Join(dir, "overwrite.file"))
		// Controllers are taken in database (UUID) order: lines sorted.
		return ovsoracle.SortLines(strings.ReplaceAll(logs, dir, "<rundir>"), 0), os.IsNotExist(err)
	}
	ovsEnv, stop := startOpenVSwitch(t)
	want, _ := session(ovsEnv, "ovs-vswitchd")
	stop()
	_, gvsEnv := startDaemon(t)
	got, absent := session(gvsEnv, "gvs-vswitchd")
	if got != want {
		t.Errorf("log lines differ\n--- Open vSwitch:\n%s--- gvs:\n%s", want, got)
	}
	if !absent {
		t.Error("gvs made RUNDIR/overwrite.file")
	}
}
