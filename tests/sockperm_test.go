package tests

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/internal/unixsock"
)

// Open vSwitch (2026-11-30, Debian's ovs-vswitchd and ovsdb-server under
// umask 022) creates db.sock, the .ctl control sockets, br0.mgmt and
// br0.snoop as srwxr-x--- (0770 less the umask) with the daemon's user
// and group; so does gvs. With --socket-group gvs makes them exactly 0770
// so that the group's members can connect, and it listens on TCP only
// where configured.

// socketGroup is an existing group other than the test's own.
func socketGroup(t *testing.T) (name string, gid int) {
	t.Helper()
	for _, n := range []string{"daemon", "adm", "nogroup"} {
		g, err := user.LookupGroup(n)
		if err != nil {
			continue
		}
		id, _ := strconv.Atoi(g.Gid)
		if id != os.Getgid() {
			return n, id
		}
	}
	t.Skip("no group other than the test's own to use as --socket-group")
	return "", 0
}

// checkSocket fails unless path is a unix socket with mode 0770 and
// group gid.
func checkSocket(t *testing.T, path string, gid int) {
	t.Helper()
	checkSocketMode(t, path, gid, 0o770)
}

// checkSocketMode fails unless path is a unix socket with the mode and
// group gid.
func checkSocketMode(t *testing.T, path string, gid int, mode os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	st := fi.Sys().(*syscall.Stat_t)
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != mode || int(st.Gid) != gid || int(st.Uid) != os.Getuid() {
		t.Errorf("%s: mode %v uid %d gid %d, want a socket, mode %v, uid %d, gid %d", filepath.Base(path), fi.Mode(), st.Uid, st.Gid, mode, os.Getuid(), gid)
	}
}

// tcpListeners returns the local addresses (hex, as /proc/net/tcp*
// shows them) of the TCP sockets pid listens on.
func tcpListeners(t *testing.T, pid int) []string {
	t.Helper()
	inodes := map[string]bool{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	var out []string
	for _, file := range []string{"tcp", "tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", pid, file))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fs := strings.Fields(sc.Text())
			if len(fs) > 9 && fs[3] == "0A" && inodes[fs[9]] {
				out = append(out, fs[1])
			}
		}
		f.Close()
	}
	return out
}

// TestSocketPermissionsAndGroupFromEnvironment starts gvs-vswitchd with
// GVS_SOCKET_GROUP (the --socket-group flag's variable) and checks every
// unix socket it creates, and that it listens on TCP only once a ptcp:
// controller target is configured.
func TestSocketPermissionsAndGroupFromEnvironment(t *testing.T) {
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	group, gid := socketGroup(t)
	bin := daemonBinary(t)
	dir := t.TempDir()
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir, "GVS_SOCKET_GROUP="+group)
	c := exec.Command(bin, "--enable-dummy", "--disable-system", "--no-chdir", "--pidfile", "--log-file",
		"--remote=punix:"+filepath.Join(dir, "extra.sock"), "--remote=db:Open_vSwitch,Open_vSwitch,manager_options")
	c.Env, c.Dir = env, dir
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	waitFor(t, "the database socket", func() bool {
		return exec.Command("ovs-vsctl", "--db=unix:"+filepath.Join(dir, "db.sock"), "--no-wait", "--timeout=1", "show").Run() == nil
	})
	vsctl := func(args ...string) string {
		return run(t, env, append([]string{"ovs-vsctl", "--timeout=20"}, args...)...)
	}
	vsctl("init")
	vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy")
	vsctl("set-controller", "br0", "punix:"+filepath.Join(dir, "br0.controller"))
	waitFor(t, "the punix controller socket", func() bool {
		_, err := os.Lstat(filepath.Join(dir, "br0.controller"))
		return err == nil
	})
	for _, name := range []string{fmt.Sprintf("gvs-vswitchd.%d.ctl", c.Process.Pid), "db.sock", "extra.sock", "br0.mgmt", "br0.snoop", "br0.controller"} {
		checkSocket(t, filepath.Join(dir, name), gid)
	}
	if l := tcpListeners(t, c.Process.Pid); len(l) != 0 {
		t.Errorf("gvs-vswitchd listens on TCP %v without any TCP target configured", l)
	}
	vsctl("set-controller", "br0", "ptcp:0:127.0.0.1")
	waitFor(t, "the configured ptcp: listener", func() bool { return len(tcpListeners(t, c.Process.Pid)) == 1 })
}

// TestSocketsDefaultToTheDaemonsGroup checks the in-process daemon's
// sockets without --socket-group: mode 0770 less the umask with the
// daemon's primary group, as Open vSwitch's.
func TestSocketsDefaultToTheDaemonsGroup(t *testing.T) {
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	_, env := startDaemon(t)
	run(t, env, "ovs-vsctl", "--timeout=20", "init")
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy")
	var dir string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "OVS_RUNDIR="); ok {
			dir = v
		}
	}
	for _, name := range []string{fmt.Sprintf("gvs-vswitchd.%d.ctl", os.Getpid()), "db.sock", "br0.mgmt", "br0.snoop"} {
		checkSocketMode(t, filepath.Join(dir, name), os.Getgid(), 0o770&^unixsock.Umask())
	}
}
