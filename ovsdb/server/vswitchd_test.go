package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOVSVswitchdRunsOnGVS runs Debian's ovs-vswitchd (dummy datapath)
// against gvs's server: it takes the ovs_vswitchd lock, monitors with
// monitor_cond_since, writes back with asserted transactions, and
// ovs-vsctl's default --wait (on cur_cfg) completes.
func TestOVSVswitchdRunsOnGVS(t *testing.T) {
	requireBins(t, "ovs-vswitchd", "ovs-vsctl", "ovs-appctl")
	dir := shortDir(t)
	_, sock := startGVS(t, dir, filepath.Join(dir, "conf.db"))
	db := "--db=unix:" + sock
	run(t, "ovs-vsctl", db, "--no-wait", "init")
	ctl := filepath.Join(dir, "vswitchd.ctl")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "ovs-vswitchd", "--enable-dummy", "--disable-system", "--no-chdir",
		"--unixctl="+ctl, "-vconsole:off", "-vfile:off", "unix:"+sock)
	cmd.Env = append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_LOGDIR="+dir, "OVS_DBDIR="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		runErr("ovs-appctl", "-t", ctl, "exit")
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cancel()
			<-done
		}
		cancel()
	})
	vsctl := func(args ...string) string {
		return run(t, "ovs-vsctl", append([]string{db, "--timeout=20"}, args...)...)
	}
	vsctl("add-br", "br0", "--", "set", "Bridge", "br0", "datapath_type=dummy")
	vsctl("add-port", "br0", "p1", "--", "set", "Interface", "p1", "type=dummy", "ofport_request=7")
	if got := vsctl("get", "Interface", "p1", "ofport"); got != "7\n" {
		t.Errorf("ofport written back by ovs-vswitchd = %q, want 7", got)
	}
	if got := vsctl("get", "Open_vSwitch", ".", "datapath_types"); !strings.Contains(got, "dummy") {
		t.Errorf("datapath_types = %q", got)
	}
	if got := vsctl("get", "Bridge", "br0", "datapath_id"); !strings.HasPrefix(got, `"0000`) {
		t.Errorf("datapath_id = %q", got)
	}
	vsctl("del-port", "br0", "p1")
	if got := vsctl("list-ports", "br0"); got != "" {
		t.Errorf("list-ports after del-port = %q", got)
	}
}
