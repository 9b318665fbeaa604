package sflow

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// requireOpenVSwitch skips (fails under CI=true) when the Open vSwitch
// binaries the comparison needs are missing.
func requireOpenVSwitch(t *testing.T) {
	t.Helper()
	for _, b := range []string{"ovsdb-tool", "ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovs-appctl", "ovs-ofctl"} {
		if _, err := exec.LookPath(b); err != nil {
			msg := fmt.Sprintf("ofproto/flowexport/sflow: %s not found (install openvswitch-switch and openvswitch-common)", b)
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	if testing.Short() {
		t.Skip("ofproto/flowexport/sflow: Open vSwitch comparison skipped in -short mode")
	}
}

// openVSwitch is a private ovsdb-server and ovs-vswitchd (dummy datapath)
// that this test started and stops.
type openVSwitch struct {
	t   *testing.T
	env []string
}

func startOpenVSwitch(t *testing.T) *openVSwitch {
	t.Helper()
	dir := t.TempDir()
	o := &openVSwitch{t: t, env: append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir,
		"OVS_SYSCONFDIR="+dir, "OVS_sflowDATADIR=/usr/share/openvswitch")}
	db := filepath.Join(dir, "conf.db")
	o.run("ovsdb-tool", "create", db, "/usr/share/openvswitch/vswitch.ovsschema")
	sock := filepath.Join(dir, "db.sock")
	o.run("ovsdb-server", "--remote=punix:"+sock, "--pidfile="+filepath.Join(dir, "ovsdb-server.pid"),
		"--log-file="+filepath.Join(dir, "ovsdb-server.log"), "--no-chdir", "--detach", db)
	t.Cleanup(func() {
		if b, err := os.ReadFile(filepath.Join(dir, "ovsdb-server.pid")); err == nil {
			var pid int
			fmt.Sscan(string(b), &pid)
			if pid > 0 {
				syscall.Kill(pid, syscall.SIGTERM)
			}
		}
	})
	vs := exec.Command("ovs-vswitchd", "--enable-dummy", "--disable-system", "--no-chdir",
		"--log-file="+filepath.Join(dir, "ovs-vswitchd.log"), "--pidfile="+filepath.Join(dir, "ovs-vswitchd.pid"),
		"unix:"+sock)
	vs.Env = o.env
	if err := vs.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vs.Process.Kill(); vs.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m, _ := filepath.Glob(filepath.Join(dir, "ovs-vswitchd.*.ctl")); len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("ovs-vswitchd's control socket did not appear")
		}
		time.Sleep(20 * time.Millisecond)
	}
	o.run("ovs-vsctl", "--timeout=10", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
		"other-config:datapath-id=0000000000000abc", "fail-mode=standalone",
		"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=1", "options:ifindex=1001",
		"--", "add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy", "ofport_request=2", "options:ifindex=1002")
	return o
}

func (o *openVSwitch) run(name string, args ...string) string {
	o.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = o.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		o.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (o *openVSwitch) vsctl(args ...string) string {
	o.t.Helper()
	return o.run("ovs-vsctl", append([]string{"--timeout=10"}, args...)...)
}

// receive injects a frame on a dummy port.
func (o *openVSwitch) receive(port string, frame []byte) {
	o.t.Helper()
	o.run("ovs-appctl", "netdev-dummy/receive", port, fmt.Sprintf("%x", frame))
}
