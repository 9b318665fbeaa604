package tests

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

// TestKill9RestartKeepsConfigurationAndPortNumbers kills gvs-vswitchd
// (embedded database) with SIGKILL after configuring bridges, ports and
// flows, starts it again on the same directory, and checks that the
// configuration comes back from the OVSDB log with the same OpenFlow port
// numbers, that the stale pidfile and sockets are taken over, and that
// the bridge answers OpenFlow again (flows are not persistent, as in Open
// vSwitch: controllers reinstall them).
func TestKill9RestartKeepsConfigurationAndPortNumbers(t *testing.T) {
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
	bin := daemonBinary(t)
	dir := t.TempDir()
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
	start := func() *exec.Cmd {
		c := exec.Command(bin, "--enable-dummy", "--disable-system", "--no-chdir", "--pidfile", "--log-file")
		c.Env, c.Dir = env, dir
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the database socket", func() bool {
			return exec.Command("ovs-vsctl", "--db=unix:"+filepath.Join(dir, "db.sock"), "--no-wait", "--timeout=1", "show").Run() == nil
		})
		return c
	}
	vsctl := func(args ...string) string {
		return run(t, env, append([]string{"ovs-vsctl", "--timeout=20"}, args...)...)
	}
	d := start()
	vsctl("init")
	vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
		"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=7",
		"--", "add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy",
		"--", "add-port", "br0", "p3", "--", "set", "interface", "p3", "type=dummy")
	vsctl("add-br", "br1", "--", "set", "bridge", "br1", "datapath_type=dummy", "other_config:datapath-id=0000000000000abc")
	vsctl("del-port", "br0", "p2") // a freed number must not be handed to p4 after the restart either
	vsctl("add-port", "br0", "p4", "--", "set", "interface", "p4", "type=dummy")
	before := vsctl("--columns=name,ofport", "find", "interface", "type=dummy")
	run(t, env, "ovs-ofctl", "add-flow", "br0", "in_port=7,actions=output:3")

	d.Process.Signal(syscall.SIGKILL)
	d.Wait()
	d = start()
	t.Cleanup(func() { d.Process.Kill(); d.Wait() })
	vsctl("--timeout=20", "set", "bridge", "br0", "other_config:restarted=true") // waits for the daemon's cur_cfg
	if after := vsctl("--columns=name,ofport", "find", "interface", "type=dummy"); sortRecords(after) != sortRecords(before) {
		t.Fatalf("ofports changed across kill -9:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if got := strings.TrimSpace(vsctl("get", "bridge", "br1", "datapath_id")); got != `"0000000000000abc"` {
		t.Fatalf("br1 datapath_id = %s", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	var flows string
	for {
		out, err := exec.Command("ovs-ofctl", "dump-flows", filepath.Join(dir, "br0.mgmt")).CombinedOutput()
		if err == nil {
			flows = string(out)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("br0.mgmt does not answer after the restart: %s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if strings.Contains(flows, "in_port=7") || !strings.Contains(flows, "actions=NORMAL") {
		t.Fatalf("flows after restart (want only the standalone NORMAL flow):\n%s", flows)
	}
}

// sortRecords sorts the blank-line separated records of ovs-vsctl output.
func sortRecords(s string) string {
	recs := strings.Split(strings.TrimSpace(s), "\n\n")
	sortStrings(recs)
	return strings.Join(recs, "\n\n")
}

// TestKill9AtRandomPointsLosesNoAcknowledgedTransaction kills
// gvs-vswitchd (embedded database) with SIGKILL at a random moment while
// ovs-vsctl commits transactions one after another, 50 times, restarting it
// on the same directory each time: every transaction ovs-vsctl saw
// acknowledged is in the database after the restarts (the log is appended
// and synced before the reply; a torn tail is dropped at start-up).
func TestKill9AtRandomPointsLosesNoAcknowledgedTransaction(t *testing.T) {
	t.Parallel()
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	bin := daemonBinary(t)
	dir := t.TempDir()
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
	sock := filepath.Join(dir, "db.sock")
	start := func() *exec.Cmd {
		c := exec.Command(bin, "--enable-dummy", "--disable-system", "--no-chdir", "--pidfile", "--log-file")
		c.Env, c.Dir = env, dir
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the database socket", func() bool {
			return exec.Command("ovs-vsctl", "--db=unix:"+sock, "--no-wait", "--timeout=1", "show").Run() == nil
		})
		return c
	}
	d := start()
	t.Cleanup(func() { d.Process.Kill(); d.Wait() })
	run(t, env, "ovs-vsctl", "--no-wait", "init")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	var acked []string
	for round := 0; round < 50; round++ {
		stop := make(chan struct{})
		done := make(chan []string)
		go func() {
			var ok []string
			for i := 0; ; i++ {
				select {
				case <-stop:
					done <- ok
					return
				default:
				}
				key := fmt.Sprintf("k%d_%d", round, i)
				c := exec.Command("ovs-vsctl", "--db=unix:"+sock, "--no-wait", "--timeout=2", "set", "open", ".", "external_ids:"+key+"=v")
				c.Env = env
				if c.Run() == nil {
					ok = append(ok, key)
				}
			}
		}()
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
		d.Process.Signal(syscall.SIGKILL)
		d.Wait()
		close(stop)
		acked = append(acked, <-done...)
		d = start()
	}
	ids := run(t, env, "ovs-vsctl", "--no-wait", "get", "open", ".", "external_ids")
	var lost []string
	for _, k := range acked {
		if !strings.Contains(ids, k+"=v") {
			lost = append(lost, k)
		}
	}
	if len(lost) > 0 {
		t.Fatalf("%d of %d acknowledged transactions lost across 50 kill -9s: %v", len(lost), len(acked), lost)
	}
	if len(acked) < 50 {
		t.Fatalf("only %d transactions were acknowledged in 50 rounds: the test did not exercise the log", len(acked))
	}
	t.Logf("%d acknowledged transactions, all present after 50 kill -9 restarts", len(acked))
}
