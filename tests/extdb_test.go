package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/cmd/vswitchd"
	"github.com/gvs-project/gvs/internal/nstest"
)

var nPacketsRE = regexp.MustCompile(`n_packets=(\d+)`)

// TestForwardingSurvivesExternalOVSDBRestart runs gvs-vswitchd against
// Debian's ovsdb-server (an external database), forwards through an
// OpenFlow rule, then stops the database: packets keep being forwarded and
// ovs-ofctl keeps working over the bridge's management socket. When the
// database comes back on the same file, gvs reconnects: a port added then
// is applied, and the existing ports keep their OpenFlow numbers.
func TestForwardingSurvivesExternalOVSDBRestart(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovsdb-tool", "ovsdb-server", "ovs-vsctl", "ovs-ofctl", "ovs-appctl"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	dir, env, sock, srv := startExternalOVSDB(t)
	startOnExternalDB(t, dir, sock)
	vsctl := func(args ...string) string {
		return run(t, env, append([]string{"ovs-vsctl", "--timeout=20"}, args...)...)
	}
	vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail_mode=secure",
		"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=1",
		"--", "add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy", "ofport_request=2")
	run(t, env, "ovs-ofctl", "add-flow", "br0", "in_port=1,actions=output:2")
	pkt := "50540000000750540000000508004500001c0001000040010000" + "0a0000010a0000020800f7ff00000000"
	send := func() { run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "netdev-dummy/receive", "p1", pkt) }
	forwarded := func() string {
		out := run(t, env, "ovs-ofctl", "dump-ports", "br0", "2")
		m := regexp.MustCompile(`tx pkts=(\d+)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("dump-ports: %s", out)
		}
		return m[1]
	}
	send()
	waitFor(t, "the first packet out of p2", func() bool { return forwarded() == "1" })

	srv.stop() // the database goes away
	for i := 0; i < 5; i++ {
		send()
	}
	waitFor(t, "packets forwarded without the database", func() bool { return forwarded() == "6" })
	if m := nPacketsRE.FindStringSubmatch(run(t, env, "ovs-ofctl", "dump-flows", "br0")); m == nil {
		t.Fatalf("ovs-ofctl dump-flows without the database failed")
	}
	run(t, env, "ovs-ofctl", "add-flow", "br0", "in_port=2,actions=output:1")

	srv.start()
	vsctl("add-port", "br0", "p3", "--", "set", "interface", "p3", "type=dummy")
	waitFor(t, "p3 applied after the database came back", func() bool {
		return strings.TrimSpace(vsctl("get", "interface", "p3", "ofport")) != "[]"
	})
	for _, p := range []struct{ name, ofport string }{{"p1", "1"}, {"p2", "2"}} {
		if got := strings.TrimSpace(vsctl("get", "interface", p.name, "ofport")); got != p.ofport {
			t.Errorf("%s has ofport %s after the database restart, want %s", p.name, got, p.ofport)
		}
	}
	send()
	waitFor(t, "forwarding after the database restart", func() bool { return forwarded() == "7" })
}

// TestExternalOVSDBWithoutMonitorCondLikeOpenVSwitch is ovs-vswitchd.at
// "Compatible with OVSDB server - w/o monitor_cond": ovsdb-server's
// disable-monitor-cond drops every session; the daemon monitors again with
// the method the server still has (monitor), and sees later changes.
func TestExternalOVSDBWithoutMonitorCondLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovsdb-tool", "ovsdb-server", "ovs-vsctl", "ovs-appctl"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	dir, env, sock, _ := startExternalOVSDB(t)
	startOnExternalDB(t, dir, sock)
	vsctl := func(args ...string) string {
		return run(t, env, append([]string{"ovs-vsctl", "--timeout=20"}, args...)...)
	}
	vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy")
	run(t, env, "ovs-appctl", "-t", "ovsdb-server", "ovsdb-server/disable-monitor-cond")
	vsctl("add-port", "br0", "p0", "--", "set", "interface", "p0", "type=internal")
	vsctl("add-port", "br0", "p1", "--", "set", "interface", "p1", "type=internal")
	want := "    br0 65534/100: (dummy-internal)\n    p0 1/1: (dummy-internal)\n    p1 2/2: (dummy-internal)\n"
	out := run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "dpif/show")
	if lines := strings.SplitAfterN(out, "\n", 3); len(lines) < 3 || lines[2] != want {
		t.Errorf("dpif/show after disable-monitor-cond:\n%s\nwant, after its first two lines:\n%s", out, want)
	}
}

// externalOVSDB is Debian's ovsdb-server serving a fresh Open_vSwitch
// database in a directory of the test's.
type externalOVSDB struct {
	t                   *testing.T
	env                 []string
	dir, db, sock, pidf string
}

// startExternalOVSDB starts ovsdb-server on dir/db.sock with an
// initialized database (stopped by PID when the test ends) and returns the
// directory, the environment for Open vSwitch's tools, the socket and the
// server (to stop and start again).
func startExternalOVSDB(t *testing.T) (dir string, env []string, sock string, srv *externalOVSDB) {
	t.Helper()
	dir = t.TempDir()
	env = append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
	srv = &externalOVSDB{t: t, env: env, dir: dir, db: filepath.Join(dir, "conf.db"), sock: filepath.Join(dir, "db.sock"),
		pidf: filepath.Join(dir, "ovsdb-server.pid")}
	run(t, env, "ovsdb-tool", "create", srv.db, "/usr/share/openvswitch/vswitch.ovsschema")
	srv.start()
	t.Cleanup(srv.stop)
	run(t, env, "ovs-vsctl", "--no-wait", "init")
	return dir, env, srv.sock, srv
}

func (s *externalOVSDB) start() {
	s.t.Helper()
	run(s.t, s.env, "ovsdb-server", s.db, "--remote=punix:"+s.sock, "--pidfile="+s.pidf,
		"--log-file="+filepath.Join(s.dir, "ovsdb-server.log"), "--detach", "--no-chdir")
}

func (s *externalOVSDB) stop() { stopPidfile(s.pidf) }

// startOnExternalDB starts gvs-vswitchd in dir as the client of the
// database on sock; it is closed when the test ends.
func startOnExternalDB(t *testing.T, dir, sock string) *vswitchd.Daemon {
	t.Helper()
	d, err := vswitchd.Start(&vswitchd.Config{
		Program: "gvs-vswitchd", RunDir: dir, DBDir: dir, LogDir: dir, Database: "unix:" + sock,
		Pidfile: filepath.Join(dir, "gvs-vswitchd.pid"), LogFile: filepath.Join(dir, "gvs-vswitchd.log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}
