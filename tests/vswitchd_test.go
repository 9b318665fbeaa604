package tests

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/cmd/vswitchd"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/netdev/pcap"
	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/internal/version"
)

// startDaemon runs gvs-vswitchd in-process with its own run, database and
// log directories, and returns an environment for Open vSwitch's tools
// pointing at it.
func startDaemon(t testing.TB) (*vswitchd.Daemon, []string) {
	t.Helper()
	return startDaemonWith(t, nil)
}

// startDaemonWith is startDaemon with the configuration adjusted by tweak
// (nil: none) before the daemon starts.
func startDaemonWith(t testing.TB, tweak func(*vswitchd.Config)) (*vswitchd.Daemon, []string) {
	t.Helper()
	dir := t.TempDir()
	cfg := &vswitchd.Config{
		Program: "gvs-vswitchd", RunDir: dir, DBDir: dir, LogDir: dir,
		DBFile: filepath.Join(dir, "conf.db"), Pidfile: filepath.Join(dir, "gvs-vswitchd.pid"),
		LogFile: filepath.Join(dir, "gvs-vswitchd.log"),
	}
	if tweak != nil {
		tweak(cfg)
	}
	d, err := vswitchd.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	// Cleanups run last-in first-out: this one sees the daemon still up.
	t.Cleanup(func() {
		if t.Failed() {
			logTail(t, cfg.LogFile, 60)
		}
	})
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
	return d, env
}

// logTail prints the last n lines of a log file, to explain a failure.
func logTail(t testing.TB, path string, n int) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Logf("no log %s: %v", path, err)
		return
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	t.Logf("last lines of %s:\n%s", path, strings.Join(lines, "\n"))
}

func run(t testing.TB, env []string, args ...string) string {
	t.Helper()
	c := exec.Command(args[0], args[1:]...)
	c.Env = env
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestOvsVsctlConfiguresBridgesAndGetsOfportsBack(t *testing.T) {
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	_, env := startDaemon(t)
	vsctl := func(args ...string) string {
		return run(t, env, append([]string{"ovs-vsctl", "--timeout=20"}, args...)...)
	}
	vsctl("init")
	// Every command waits (--wait=vswitchd by default) for gvs to apply it.
	vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy")
	vsctl("add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=7")
	vsctl("add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy")
	for iface, want := range map[string]string{"p1": "7", "p2": "1", "br0": "65534"} {
		if got := strings.TrimSpace(vsctl("get", "interface", iface, "ofport")); got != want {
			t.Errorf("ofport of %s = %s, want %s", iface, got, want)
		}
	}
	if got := strings.TrimSpace(vsctl("get", "interface", "p1", "link_state")); got != "up" {
		t.Errorf("link_state of p1 = %s, want up", got)
	}
	if dpid := strings.Trim(strings.TrimSpace(vsctl("get", "bridge", "br0", "datapath_id")), `"`); len(dpid) != 16 {
		t.Errorf("datapath_id %q is not 16 hex digits", dpid)
	}
	// A port whose device does not exist: ovs-vsctl reports the error the
	// switch wrote (and, as with Open vSwitch, still exits 0); the rest works.
	out := vsctl("add-port", "br0", "nodev")
	if want := "ovs-vsctl: Error detected while setting up 'nodev': could not open network device nodev (No such device).  See ovs-vswitchd log for details.\n"; !strings.HasPrefix(out, want) {
		t.Errorf("add-port of a missing device printed %q, want prefix %q", out, want)
	}
	if got := strings.TrimSpace(vsctl("get", "interface", "nodev", "ofport")); got != "-1" {
		t.Errorf("ofport of nodev = %s, want -1", got)
	}
	vsctl("del-port", "br0", "p2")
	show := run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "dpctl/show")
	if strings.Contains(show, " p2") || !strings.Contains(show, " p1 (dummy)") {
		t.Errorf("dpctl/show after del-port p2:\n%s", show)
	}
	vsctl("del-br", "br0")
	// Only the dummy datapath's own port 0 remains, as in Open vSwitch.
	show = run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "dpctl/show")
	if strings.Count(show, "port ") != 1 || !strings.Contains(show, "port 0: ovs-dummy (dummy-internal)") {
		t.Errorf("ports left after del-br:\n%s", show)
	}
}

func TestOvsAppctlReachesDaemonByName(t *testing.T) {
	nstest.RequireBinary(t, "ovs-appctl", "openvswitch-common")
	_, env := startDaemon(t)
	if got := run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "version"); got != version.Line("gvs-vswitchd")+"\n" {
		t.Errorf("version = %q", got)
	}
	cmds := run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "list-commands")
	for _, c := range []string{"dpctl/dump-flows", "dpif/show", "netdev-dummy/receive", "vlog/set", "coverage/show", "exit"} {
		if !strings.Contains(cmds, "  "+c) {
			t.Errorf("list-commands lacks %s:\n%s", c, cmds)
		}
	}
}

func TestEmbeddedDatabaseIsReadableByOvsdbTool(t *testing.T) {
	nstest.RequireBinary(t, "ovsdb-tool", "openvswitch-common")
	_, env := startDaemon(t)
	run(t, env, "ovs-vsctl", "--timeout=20", "init")
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br9", "--", "set", "bridge", "br9", "datapath_type=dummy")
	var dir string
	for _, e := range env {
		if strings.HasPrefix(e, "OVS_DBDIR=") {
			dir = strings.TrimPrefix(e, "OVS_DBDIR=")
		}
	}
	log := run(t, env, "ovsdb-tool", "show-log", filepath.Join(dir, "conf.db"))
	if !strings.Contains(log, "add-br br9") {
		t.Errorf("ovsdb-tool show-log does not show the add-br transaction:\n%s", log)
	}
}

// TestDummyReceiveComposesFlowAndDatapathFlowForwardsIt injects a packet
// described in datapath flow syntax with ovs-appctl netdev-dummy/receive,
// forwards it with a datapath flow added by dpctl/add-flow, and reads the
// frame from the output port's tx_pcap.
func TestDummyReceiveComposesFlowAndDatapathFlowForwardsIt(t *testing.T) {
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	_, env := startDaemon(t)
	dir := t.TempDir()
	txPcap := filepath.Join(dir, "p2-tx.pcap")
	run(t, env, "ovs-vsctl", "--timeout=20", "init")
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
		"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy",
		"--", "add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy", "options:tx_pcap="+txPcap)
	odp := odpPorts(t, env)
	p1, p2 := odp("p1"), odp("p2")
	run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "dpctl/add-flow", "recirc_id(0),in_port("+p1+")", p2)
	const pkt = "in_port(1),eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=17,tos=0,ttl=64,frag=no),udp(src=1234,dst=5678)"
	run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "netdev-dummy/receive", "p1", pkt)
	want, err := flow.ComposeString(pkt)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the frame in p2's tx_pcap", func() bool {
		f, err := os.Open(txPcap)
		if err != nil {
			return false
		}
		defer f.Close()
		r, err := pcap.NewReader(f)
		if err != nil {
			return false
		}
		got, _, _, err := r.Next()
		return err == nil && bytes.Equal(got, want)
	})
	dump := run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "dpctl/dump-flows")
	if !strings.Contains(dump, "in_port("+p1+"),eth(), packets:1, bytes:"+fmt.Sprint(len(want))) {
		t.Errorf("dump-flows does not count the packet:\n%s", dump)
	}
}

// TestConntrackThroughDpctlCommands drives the datapath's ct() action with
// a datapath flow and checks Open vSwitch's dpctl conntrack commands
// against it: dump per zone, flush of one zone leaving the other, limits
// and maxconns.
func TestConntrackThroughDpctlCommands(t *testing.T) {
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	_, env := startDaemon(t)
	appctl := appctlFunc(t, env)
	run(t, env, "ovs-vsctl", "--timeout=20", "init")
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
		"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy",
		"--", "add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy")
	port := odpPorts(t, env)
	p1, p2 := port("p1"), port("p2")
	appctl("dpctl/add-flow", "recirc_id(0),in_port("+p1+")", "ct(commit,zone=5)")
	appctl("dpctl/add-flow", "recirc_id(0),in_port("+p2+")", "ct(commit,zone=6)")
	pkt := func(src string) string {
		return "eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:02),eth_type(0x0800),ipv4(src=" + src + ",dst=10.0.0.2,proto=17,tos=0,ttl=64,frag=no),udp(src=1234,dst=53)"
	}
	appctl("netdev-dummy/receive", "p1", pkt("10.0.0.1"))
	appctl("netdev-dummy/receive", "p2", pkt("10.0.0.3"))
	want5 := "udp,orig=(src=10.0.0.1,dst=10.0.0.2,sport=1234,dport=53),reply=(src=10.0.0.2,dst=10.0.0.1,sport=53,dport=1234),zone=5\n"
	waitFor(t, "the zone 5 connection", func() bool { return appctl("dpctl/dump-conntrack", "zone=5") == want5 })
	waitFor(t, "the zone 6 connection", func() bool { return strings.Contains(appctl("dpctl/dump-conntrack"), "zone=6") })
	appctl("dpctl/flush-conntrack", "zone=5")
	if got := appctl("dpctl/dump-conntrack", "zone=5"); got != "" {
		t.Errorf("zone 5 after its flush:\n%s", got)
	}
	if got := appctl("dpctl/dump-conntrack", "zone=6"); !strings.Contains(got, "src=10.0.0.3") {
		t.Errorf("zone 6 lost its connection when zone 5 was flushed:\n%s", got)
	}
	if got := appctl("dpctl/ct-set-maxconns", "1000"); got != "setting maxconns successful\n" {
		t.Errorf("ct-set-maxconns printed %q", got)
	}
	if got := appctl("dpctl/ct-get-maxconns"); got != "1000\n" {
		t.Errorf("ct-get-maxconns = %q", got)
	}
	appctl("dpctl/ct-set-limits", "default=10", "zone=6,limit=3")
	if got := appctl("dpctl/ct-get-limits", "zone=6"); !strings.Contains(got, "zone=6,limit=3,count=1") {
		t.Errorf("ct-get-limits zone=6 = %q", got)
	}
	// Open vSwitch's words (dpctl.c), as its test suite expects them.
	for _, c := range []struct{ cmd, want string }{
		{"dpctl/ct-get-tcp-seq-chk", "TCP sequence checking: enabled\n"},
		{"dpctl/ct-disable-tcp-seq-chk", "disabling TCP sequence checking successful\n"},
		{"dpctl/ct-get-tcp-seq-chk", "TCP sequence checking: disabled\n"},
		{"dpctl/ct-enable-tcp-seq-chk", "enabling TCP sequence checking successful\n"},
		{"dpctl/ct-get-tcp-seq-chk", "TCP sequence checking: enabled\n"},
	} {
		if got := appctl(c.cmd); got != c.want {
			t.Errorf("%s printed %q, want %q", c.cmd, got, c.want)
		}
	}
}

// TestFDBCommandsShowWhatMacLearnLearned: a datapath flow ending in the
// bridge's mac_learn action learns source MACs into the bridge's table;
// fdb/show prints them with OpenFlow port numbers, fdb/add adds a static
// entry, fdb/stats-show counts, fdb/flush empties the table.
func TestFDBCommandsShowWhatMacLearnLearned(t *testing.T) {
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	_, env := startDaemon(t)
	appctl := appctlFunc(t, env)
	run(t, env, "ovs-vsctl", "--timeout=20", "init")
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
		"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=5",
		"--", "add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy", "ofport_request=6")
	port := odpPorts(t, env)
	p1, p2 := port("p1"), port("p2")
	// br0 is the first bridge: its MAC table is mac_learn(table=1).
	appctl("dpctl/add-flow", "recirc_id(0),in_port("+p1+")", "mac_learn(table=1,ports("+p1+","+p2+"))")
	appctl("netdev-dummy/receive", "p1", "eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=17,tos=0,ttl=64,frag=no),udp(src=1,dst=2)")
	waitFor(t, "the learned MAC", func() bool { return strings.Contains(appctl("fdb/show", "br0"), "50:54:00:00:00:01") })
	got := appctl("fdb/show", "br0")
	if !strings.HasPrefix(got, " port  VLAN  MAC                Age\n    5     0  50:54:00:00:00:01    ") {
		t.Errorf("fdb/show:\n%s", got)
	}
	appctl("fdb/add", "br0", "p2", "10", "50:54:00:00:00:09")
	if got := appctl("fdb/show", "br0"); !strings.Contains(got, "    6    10  50:54:00:00:00:09  static\n") {
		t.Errorf("fdb/show after fdb/add:\n%s", got)
	}
	if got := appctl("fdb/stats-show", "br0"); !strings.Contains(got, "Current/maximum MAC entries in the table: 2/") {
		t.Errorf("fdb/stats-show:\n%s", got)
	}
	if got := appctl("fdb/flush", "br0"); got != "table successfully flushed\n" {
		t.Errorf("fdb/flush printed %q", got)
	}
	if got := appctl("fdb/show", "br0"); strings.Contains(got, "50:54:00:00:00:01") {
		t.Errorf("fdb/show after flush still shows the learned MAC:\n%s", got)
	}
}

// appctlFunc returns a function running ovs-appctl against the daemon.
func appctlFunc(t *testing.T, env []string) func(args ...string) string {
	return func(args ...string) string {
		return run(t, env, append([]string{"ovs-appctl", "-t", "gvs-vswitchd"}, args...)...)
	}
}

// odpPorts returns a function giving the datapath port number of an
// interface, as `dpctl/show` lists it.
func odpPorts(t *testing.T, env []string) func(name string) string {
	show := appctlFunc(t, env)("dpctl/show")
	return func(name string) string {
		for _, l := range strings.Split(show, "\n") {
			if f := strings.Fields(l); len(f) >= 3 && f[0] == "port" && f[2] == name {
				return strings.TrimSuffix(f[1], ":")
			}
		}
		t.Fatalf("no port %s in:\n%s", name, show)
		return ""
	}
}

// TestManagementConnectionIsProbedAfterAMinuteAsOpenVSwitch: a
// connection to <br>.mgmt that sends nothing gets an echo request after
// 60 s, Open vSwitch's fixed interval for its service connections, and
// is closed 60 s later when the echo goes unanswered (waitProbe in
// hardening_test.go). Not run with -short: it takes two minutes.
func TestManagementConnectionIsProbedAfterAMinuteAsOpenVSwitch(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits two minutes for the probe and the close")
	}
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	_, env := startDaemon(t)
	run(t, env, "ovs-vsctl", "--timeout=20", "init")
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail-mode=secure")
	var dir string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "OVS_RUNDIR="); ok {
			dir = v
		}
	}
	c, err := net.Dial("unix", filepath.Join(dir, "br0.mgmt"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(ofHello)
	echo, closed := waitProbe(c, 130*time.Second)
	if want := 60 * time.Second; echo < want-time.Second || echo > want+2*time.Second {
		t.Errorf("br0.mgmt: echo request after %v, want about %v", echo, want)
	}
	if want := 120 * time.Second; closed < want-time.Second || closed > want+2*time.Second {
		t.Errorf("br0.mgmt: closed after %v, want about %v", closed, want)
	}
}
