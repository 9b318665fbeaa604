package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gvs-project/gvs/cmd/vswitchd"
	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/internal/statefile"
	"github.com/gvs-project/gvs/internal/version"
)

// restartRig is gvs-vswitchd as a process (its embedded database in
// dir) with br0 in fail-secure mode between two namespaces, restarted
// the way Open vSwitch's ovs-ctl restarts ovs-vswitchd.
//
// With ovs set it is Open vSwitch's ovs-vswitchd (netdev datapath) on
// its own ovsdb-server, which stays up across the restarts.
type restartRig struct {
	t        *testing.T
	ovs      bool
	bin, dir string
	prog     string // gvs-vswitchd or ovs-vswitchd
	env      []string
	cmd      *exec.Cmd
	a, b     nsPort
}

func newRestartRig(t *testing.T, args ...string) *restartRig {
	return newRestartRigFor(t, false, args...)
}

func newRestartRigFor(t *testing.T, ovs bool, args ...string) *restartRig {
	t.Helper()
	return newRestartRigDB(t, ovs, ovs, args...)
}

// newRestartRigDB is newRestartRigFor with Open vSwitch's ovsdb-server
// serving RUNDIR/db.sock when extDB is set (gvs then gets
// unix:RUNDIR/db.sock as its DATABASE after args: pass it again to
// later starts).
func newRestartRigDB(t *testing.T, ovs, extDB bool, args ...string) *restartRig {
	t.Helper()
	nstest.Require(t, "tests", "python3")
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
	nstest.RequireBinary(t, "ovs-appctl", "openvswitch-common")
	r := &restartRig{t: t, ovs: ovs, dir: t.TempDir(), prog: "gvs-vswitchd"}
	r.env = append(os.Environ(), "OVS_RUNDIR="+r.dir, "OVS_DBDIR="+r.dir, "OVS_LOGDIR="+r.dir)
	if ovs {
		nstest.RequireBinary(t, "ovs-vswitchd", "openvswitch-switch")
		r.prog = "ovs-vswitchd"
	} else {
		r.bin = daemonBinary(t)
	}
	if extDB {
		nstest.RequireBinary(t, "ovsdb-server", "openvswitch-switch")
		nstest.RequireBinary(t, "ovsdb-tool", "openvswitch-common")
		r.env = append(r.env, "OVS_SYSCONFDIR="+r.dir, "OVS_PKGDATADIR=/usr/share/openvswitch")
		db := filepath.Join(r.dir, "conf.db")
		run(t, r.env, "ovsdb-tool", "create", db, "/usr/share/openvswitch/vswitch.ovsschema")
		run(t, r.env, "ovsdb-server", "--remote=punix:"+filepath.Join(r.dir, "db.sock"), "--pidfile="+filepath.Join(r.dir, "ovsdb-server.pid"),
			"--log-file="+filepath.Join(r.dir, "ovsdb-server.log"), "--no-chdir", "--detach", db)
		t.Cleanup(func() {
			var pid int
			if b, err := os.ReadFile(filepath.Join(r.dir, "ovsdb-server.pid")); err == nil {
				fmt.Sscan(string(b), &pid)
			}
			if pid > 0 {
				syscall.Kill(pid, syscall.SIGTERM)
			}
		})
		if !ovs {
			args = append(args, "unix:"+filepath.Join(r.dir, "db.sock"))
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			logTail(t, filepath.Join(r.dir, r.prog+".log"), 40)
		}
		if os.Getenv("GVS_RESTART_LOG") != "" {
			logTail(t, filepath.Join(r.dir, r.prog+".log"), 60)
		}
		if r.cmd != nil {
			r.cmd.Process.Kill()
			r.cmd.Wait()
		}
	})
	r.start(args...)
	r.vsctl("init")
	r.vsctl("add-br", "br0", "--", "set", "bridge", "br0", "fail_mode=secure", "datapath_type=netdev")
	r.a = vethPort(t, r.vsctl, "a", "10.9.0.1", 1)
	r.b = vethPort(t, r.vsctl, "b", "10.9.0.2", 2)
	return r
}

func (r *restartRig) vsctl(args ...string) string {
	r.t.Helper()
	return run(r.t, r.env, append([]string{"ovs-vsctl", "--timeout=20"}, args...)...)
}

func (r *restartRig) ofctl(args ...string) string {
	r.t.Helper()
	return run(r.t, r.env, append([]string{"ovs-ofctl"}, args...)...)
}

func (r *restartRig) appctl(args ...string) string {
	r.t.Helper()
	return run(r.t, r.env, append([]string{"ovs-appctl", "-t", r.prog}, args...)...)
}

// start starts the switch and waits for its database (gvs) or its
// control socket (Open vSwitch).
func (r *restartRig) start(args ...string) {
	r.t.Helper()
	if r.ovs {
		c := exec.Command("ovs-vswitchd", "--no-chdir", "--log-file="+filepath.Join(r.dir, "ovs-vswitchd.log"),
			"--pidfile="+filepath.Join(r.dir, "ovs-vswitchd.pid"), "unix:"+filepath.Join(r.dir, "db.sock"))
		c.Env, c.Dir = r.env, r.dir
		if err := c.Start(); err != nil {
			r.t.Fatal(err)
		}
		r.cmd = c
		ctl := filepath.Join(r.dir, fmt.Sprintf("ovs-vswitchd.%d.ctl", c.Process.Pid))
		waitFor(r.t, "ovs-vswitchd's control socket", func() bool { _, err := os.Stat(ctl); return err == nil })
		return
	}
	c := exec.Command(r.bin, append([]string{"--no-chdir", "--pidfile", "--log-file"}, args...)...)
	c.Env, c.Dir = r.env, r.dir
	if err := c.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.cmd = c
	waitFor(r.t, "the database socket", func() bool {
		return exec.Command("ovs-vsctl", "--db=unix:"+filepath.Join(r.dir, "db.sock"), "--no-wait", "--timeout=1", "show").Run() == nil
	})
}

// stop stops the daemon: "exit" (ovs-appctl exit), "term" (SIGTERM) or
// "kill" (SIGKILL).
func (r *restartRig) stop(how string) {
	r.t.Helper()
	switch how {
	case "exit":
		r.appctl("exit")
	case "term":
		r.cmd.Process.Signal(syscall.SIGTERM)
	case "kill":
		r.cmd.Process.Signal(syscall.SIGKILL)
	}
	done := make(chan struct{})
	go func() { r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		r.t.Fatalf("gvs-vswitchd did not stop after %s", how)
	}
	r.cmd = nil
}

// firewallFlows is a ct(commit)/+est pipeline with a stateful drop of
// new connections from the far side (port 2).
var firewallFlows = []string{
	"table=0,priority=100,arp,actions=NORMAL",
	"table=0,priority=50,ip,ct_state=-trk,actions=ct(table=1,zone=9)",
	"table=1,priority=100,ip,in_port=1,ct_state=+trk+new,actions=ct(commit,zone=9),output:2",
	"table=1,priority=100,ip,in_port=1,ct_state=+trk+est,actions=output:2",
	"table=1,priority=100,ip,in_port=2,ct_state=+trk+est,actions=output:1",
	"table=1,priority=90,ip,in_port=2,ct_state=+trk+new,actions=drop",
	"table=1,priority=1,actions=drop",
}

func (r *restartRig) addFirewallFlows() {
	r.t.Helper()
	for _, f := range firewallFlows {
		r.ofctl("add-flow", "br0", f)
	}
}

// restart restarts gvs-vswitchd as ovs-ctl restarts ovs-vswitchd: save
// the flows (ovs-save: dump-flows --no-names --no-stats), set
// other_config:flow-restore-wait=true, stop, start, restore the flows in
// one bundle (replace-flows --bundle), clear flow-restore-wait. It
// returns how long the daemon was down (stop to flows restored).
func (r *restartRig) restart(stopHow string, args ...string) time.Duration {
	r.t.Helper()
	flows := r.saveFlows()
	r.vsctl("set", "open_vswitch", ".", "other_config:flow-restore-wait=true")
	t0 := time.Now()
	r.stop(stopHow)
	r.start(args...)
	r.waitBridge()
	if got := r.ofctl("dump-flows", "br0"); strings.Contains(got, "table=") {
		r.t.Fatalf("flows before restoring them:\n%s", got)
	}
	r.restoreFlows(flows)
	r.vsctl("--no-wait", "--if-exists", "remove", "open_vswitch", ".", "other_config", "flow-restore-wait=true")
	return time.Since(t0)
}

// saveFlows saves br0's flows as ovs-save does and returns the file.
func (r *restartRig) saveFlows() string {
	r.t.Helper()
	dump := r.ofctl("-O", "OpenFlow14", "dump-flows", "--no-names", "--no-stats", "br0")
	var lines []string
	for _, l := range strings.Split(dump, "\n") {
		if strings.TrimSpace(l) != "" && !strings.Contains(l, "_FLOW reply") {
			lines = append(lines, l)
		}
	}
	flows := filepath.Join(r.dir, "br0.flows.dump")
	if err := os.WriteFile(flows, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		r.t.Fatal(err)
	}
	return flows
}

// restoreFlows installs saved flows in one bundle, as ovs-ctl does.
func (r *restartRig) restoreFlows(flows string) {
	r.t.Helper()
	r.ofctl("-O", "OpenFlow14", "--bundle", "replace-flows", "br0", flows)
}

// waitBridge waits until br0 answers OpenFlow with both ports, as
// ovs-ctl's flow restore needs (it runs once the daemon is up).
func (r *restartRig) waitBridge() {
	r.t.Helper()
	waitFor(r.t, "br0 with its ports", func() bool {
		c := exec.Command("ovs-ofctl", "show", "br0")
		c.Env = r.env
		out, err := c.Output()
		return err == nil && strings.Contains(string(out), " 1(") && strings.Contains(string(out), " 2(")
	})
}

// conntrackLines returns dpctl/dump-conntrack zone=9, sorted.
func (r *restartRig) conntrackLines() []string {
	r.t.Helper()
	var out []string
	for _, l := range strings.Split(r.appctl("dpctl/dump-conntrack", "zone=9"), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

var dropPackets = regexp.MustCompile(`n_packets=(\d+),.*priority=90,ct_state=\+new\+trk,ip,in_port=2 actions=drop`)

// farSideDrops is the packet count of the stateful drop flow.
func (r *restartRig) farSideDrops() int {
	r.t.Helper()
	m := dropPackets.FindStringSubmatch(r.ofctl("dump-flows", "br0", "table=1"))
	if m == nil {
		r.t.Fatalf("no drop flow in:\n%s", r.ofctl("dump-flows", "br0"))
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// tcpPush is a long-lived TCP connection from a (client) to b (server)
// over which the server pushes 8 bytes every 20 ms and the client only
// acknowledges: after a restart the far side speaks first. The client
// keeps the byte count in a file.
type tcpPush struct {
	t        *testing.T
	srv, cli *exec.Cmd
	count    string
	out      strings.Builder
}

func startTCPPush(t *testing.T, r *restartRig, port int) *tcpPush {
	t.Helper()
	p := &tcpPush{t: t, count: filepath.Join(r.dir, fmt.Sprintf("tcp%d.count", port))}
	p.srv = exec.Command("ip", "netns", "exec", r.b.ns, "python3", "-c", fmt.Sprintf(`
import socket, time, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('0.0.0.0', %d)); s.listen(1); s.settimeout(10)
c, a = s.accept(); n = 0
try:
    while True:
        c.sendall(b'%%08d' %% n); n += 1; time.sleep(0.02)
except Exception as e:
    print('server error after %%d sends: %%r' %% (n, e), flush=True); sys.exit(1)`, port))
	p.cli = exec.Command("ip", "netns", "exec", r.a.ns, "python3", "-c", fmt.Sprintf(`
import socket, sys, os, time
for i in range(50):
    try:
        s = socket.create_connection(('%s', %d), timeout=60); break
    except OSError:
        time.sleep(0.1)
n = 0
while True:
    try:
        x = s.recv(65536)
    except Exception as e:
        print('client error after %%d bytes: %%r' %% (n, e), flush=True); sys.exit(1)
    if not x:
        print('client: connection closed after %%d bytes' %% n, flush=True); sys.exit(1)
    n += len(x)
    open('%[3]s.tmp', 'w').write(str(n)); os.rename('%[3]s.tmp', '%[3]s')`, r.b.ip, port, p.count))
	p.srv.Stdout, p.srv.Stderr = &p.out, &p.out
	p.cli.Stdout, p.cli.Stderr = &p.out, &p.out
	if err := p.srv.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := p.cli.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.stop)
	waitFor(t, "data over the TCP connection", func() bool { return p.bytes() >= 400 })
	return p
}

func (p *tcpPush) bytes() int {
	b, _ := os.ReadFile(p.count)
	n, _ := strconv.Atoi(string(b))
	return n
}

// alive fails the test if either end has exited (a reset or a close).
func (p *tcpPush) alive() {
	p.t.Helper()
	for _, c := range []*exec.Cmd{p.srv, p.cli} {
		if c.ProcessState != nil || c.Process.Signal(syscall.Signal(0)) != nil {
			p.t.Fatalf("the TCP connection ended: %s", p.out.String())
		}
	}
}

func (p *tcpPush) stop() {
	for _, c := range []*exec.Cmd{p.srv, p.cli} {
		if c.Process != nil {
			c.Process.Kill()
			c.Wait()
		}
	}
}

// TestConntrackStateFileKeepsTCPThroughFirewallAcrossRestart restarts
// gvs-vswitchd the way ovs-ctl restarts ovs-vswitchd (flows saved and
// restored under flow-restore-wait) while a TCP connection runs through
// a ct(commit)/+est firewall that drops new connections from the far
// side. With --conntrack-state the connection's entry comes back
// (dpctl/dump-conntrack shows the same lines), the far side's segments
// are +est again and the connection carries on without a reset. A
// second restart whose state file is gone shows what the file buys: the
// far side's segments of the same connection are +new and dropped, and
// no data arrives.
func TestConntrackStateFileKeepsTCPThroughFirewallAcrossRestart(t *testing.T) {
	parallelHolding(t, &br0Devices)
	state := "--conntrack-state=ct.state" // relative to the daemon's directory
	r := newRestartRig(t, state)
	r.addFirewallFlows()
	conn := startTCPPush(t, r, 5001)
	before := r.conntrackLines()
	if len(before) != 1 || !strings.Contains(before[0], "tcp,orig=(src=10.9.0.1,dst=10.9.0.2,") || !strings.Contains(before[0], "dport=5001") {
		t.Fatalf("conntrack before the restart: %q", before)
	}

	down := r.restart("exit", state)
	if after := r.conntrackLines(); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Fatalf("conntrack after the restart:\n%s\nbefore:\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
	}
	if _, err := os.Stat(filepath.Join(r.dir, "ct.state")); !os.IsNotExist(err) {
		t.Fatalf("the state file was not consumed at start: %v", err)
	}
	n0 := r.bytes(conn)
	waitFor(t, "data over the TCP connection after the restart", func() bool { conn.alive(); return r.bytes(conn) >= n0+400 })
	conn.alive()
	if d := r.farSideDrops(); d != 0 {
		t.Fatalf("%d far-side packets dropped as +new after a restart with the state file", d)
	}
	logb, _ := os.ReadFile(filepath.Join(r.dir, "gvs-vswitchd.log"))
	if !strings.Contains(string(logb), "restored conntrack state") || !strings.Contains(string(logb), "1 connections restored") {
		t.Fatalf("the log does not say what was restored:\n%s", logb)
	}
	t.Logf("restart with the state file: %v from stop to flows restored, connection kept", down.Round(time.Millisecond))

	// The same restart without the file (a plain restart).
	r.vsctl("set", "open_vswitch", ".", "other_config:flow-restore-wait=true")
	r.stop("term")
	if err := os.Remove(filepath.Join(r.dir, "ct.state")); err != nil {
		t.Fatalf("SIGTERM did not save the state: %v", err)
	}
	r.start(state)
	r.waitBridge()
	for _, f := range firewallFlows {
		r.ofctl("add-flow", "br0", f)
	}
	r.vsctl("--if-exists", "remove", "open_vswitch", ".", "other_config", "flow-restore-wait=true")
	n1 := r.bytes(conn)
	waitFor(t, "the far side's retransmissions to hit the drop flow", func() bool { return r.farSideDrops() > 0 })
	time.Sleep(500 * time.Millisecond)
	if n := r.bytes(conn); n != n1 {
		t.Fatalf("data arrived after a restart without the state file (%d -> %d bytes)", n1, n)
	}
	if got := r.conntrackLines(); len(got) != 0 {
		t.Fatalf("conntrack after a restart without the state file: %q", got)
	}
	logb, _ = os.ReadFile(filepath.Join(r.dir, "gvs-vswitchd.log"))
	if !strings.Contains(string(logb), "no conntrack state to restore") {
		t.Fatalf("the log does not say that nothing was restored")
	}
}

func (r *restartRig) bytes(p *tcpPush) int { return p.bytes() }

// TestCtSaveAndRestoreCommands saves the conntrack table with
// dpctl/ct-save, flushes it, brings it back with dpctl/ct-restore, and
// checks the errors for a missing file, a file that is not a state file
// and a damaged one.
func TestCtSaveAndRestoreCommands(t *testing.T) {
	parallelHolding(t, &br0Devices)
	r := newRestartRig(t)
	r.addFirewallFlows()
	conn := startTCPPush(t, r, 5003)
	// No packet may pass ct() between the flush and the restore (it would
	// commit the connection anew): the flows go while the table is saved,
	// flushed and restored, and come back before the connection is checked.
	r.ofctl("del-flows", "br0")
	time.Sleep(100 * time.Millisecond)
	before := r.conntrackLines()
	f := filepath.Join(r.dir, "saved.ct")
	if got := r.appctl("dpctl/ct-save", f); got != "saved 1 connections of ovs-netdev to "+f+"\n" {
		t.Fatalf("ct-save: %q", got)
	}
	r.appctl("dpctl/flush-conntrack")
	if got := r.appctl("dpctl/ct-restore", f); got != "1 connections restored, 0 expired, 0 already present, 0 over a limit, 0 expectations\n" {
		t.Fatalf("ct-restore: %q", got)
	}
	if got := r.conntrackLines(); strings.Join(got, "\n") != strings.Join(before, "\n") {
		t.Fatalf("after ct-restore: %q, before %q", got, before)
	}
	if got := r.appctl("dpctl/ct-restore", f); !strings.HasPrefix(got, "0 connections restored, 0 expired, 1 already present") {
		t.Fatalf("second ct-restore: %q", got)
	}
	r.addFirewallFlows()
	conn.alive()
	b, _ := os.ReadFile(f)
	os.WriteFile(f+".bad", b[:len(b)-10], 0o600)
	os.WriteFile(f+".txt", []byte("hello\n"), 0o600)
	sf, err := statefile.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	sf.GVSVersion = "9.9.9-future"
	sf.Sections[0].Version = 99
	if err := statefile.WriteFile(f+".v99", sf); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		f + ".v99":  "conntrack state refused: " + f + ".v99: section conntrack/ovs-netdev has version 99 (written by gvs 9.9.9-future); this gvs (" + version.String() + ") reads version 1",
		f + ".none": "conntrack state refused: stat " + f + ".none: no such file or directory",
		f + ".txt":  "conntrack state refused: " + f + ".txt: not a gvs state file",
		f + ".bad":  "conntrack state refused: " + f + ".bad: corrupt state file: checksum",
	} {
		c := exec.Command("ovs-appctl", "-t", "gvs-vswitchd", "dpctl/ct-restore", file)
		c.Env = r.env
		out, err := c.CombinedOutput()
		if err == nil || !strings.Contains(string(out), want) {
			t.Errorf("ct-restore %s: %v %q, want %q", file, err, out, want)
		}
	}
}

// TestConntrackStateFileRefusedAtStartLeavesTablesEmpty starts the
// daemon on a state file that fails its checks: it starts, says why the
// file was refused, and keeps the file as FILE.refused for inspection.
func TestConntrackStateFileRefusedAtStartLeavesTablesEmpty(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ct.state")
	good, err := statefile.Encode(&statefile.File{GVSVersion: "x", Sections: []statefile.Section{{Name: "conntrack/ovs-netdev", Version: 1, Data: []byte("CTS1")}}})
	if err != nil {
		t.Fatal(err)
	}
	good[len(good)-1] ^= 0xff
	if err := os.WriteFile(file, good, 0o600); err != nil {
		t.Fatal(err)
	}
	var logFile string
	_, env := startDaemonWith(t, func(c *vswitchd.Config) { c.ConntrackState, logFile = file, c.LogFile })
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev")
	if got := run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "dpctl/dump-conntrack"); got != "" {
		t.Fatalf("conntrack after a refused file: %q", got)
	}
	b, _ := os.ReadFile(logFile)
	if !strings.Contains(string(b), "conntrack state refused: starting with empty conntrack tables") || !strings.Contains(string(b), "corrupt state file: checksum") {
		t.Fatalf("log:\n%s", b)
	}
	if _, err := os.Stat(file + ".refused"); err != nil {
		t.Fatalf("the refused file was not kept: %v", err)
	}
}

// udpStream sends a numbered UDP datagram from a to b every millisecond
// for d and counts what arrives.
type udpStream struct {
	snd, rcv *exec.Cmd
	sout     strings.Builder
	rout     strings.Builder
}

func startUDPStream(t *testing.T, r *restartRig, d time.Duration) *udpStream {
	t.Helper()
	u := &udpStream{}
	secs := d.Seconds()
	u.rcv = exec.Command("ip", "netns", "exec", r.b.ns, "python3", "-c", fmt.Sprintf(`
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('0.0.0.0', 6000)); s.settimeout(0.2)
got = set(); last = None; gap = 0.0; end = time.monotonic() + %f + 3
while time.monotonic() < end:
    try:
        x, a = s.recvfrom(64)
    except socket.timeout:
        continue
    if x == b'end':
        break
    now = time.monotonic(); got.add(int(x))
    if last is not None: gap = max(gap, now - last)
    last = now
print(len(got), int(gap * 1000))`, secs))
	u.snd = exec.Command("ip", "netns", "exec", r.a.ns, "python3", "-c", fmt.Sprintf(`
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); n = 0
t = time.monotonic(); end = t + %f
while time.monotonic() < end:
    try:
        s.sendto(b'%%d' %% n, ('%s', 6000))
    except OSError:
        pass
    n += 1; t += 0.001; w = t - time.monotonic()
    if w > 0: time.sleep(w)
time.sleep(0.3)
for i in range(5):
    s.sendto(b'end', ('%s', 6000)); time.sleep(0.05)
print(n)`, secs, r.b.ip, r.b.ip))
	u.rcv.Stdout, u.rcv.Stderr = &u.rout, &u.rout
	u.snd.Stdout, u.snd.Stderr = &u.sout, &u.sout
	if err := u.rcv.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := u.snd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, c := range []*exec.Cmd{u.snd, u.rcv} {
			if c.ProcessState == nil {
				c.Process.Kill()
				c.Wait()
			}
		}
	})
	return u
}

// result waits for the stream to end and returns datagrams sent,
// received and the longest gap between two arrivals in milliseconds.
func (u *udpStream) result(t *testing.T) (sent, got, gapMs int) {
	t.Helper()
	if err := u.snd.Wait(); err != nil {
		t.Fatalf("UDP sender: %v %s", err, u.sout.String())
	}
	if err := u.rcv.Wait(); err != nil {
		t.Fatalf("UDP receiver: %v %s", err, u.rout.String())
	}
	fmt.Sscan(u.sout.String(), &sent)
	fmt.Sscan(u.rout.String(), &got, &gapMs)
	return sent, got, gapMs
}

// TestRestartLossSideBySide is the restart harness
// (tests/perf/restart/run.sh, GVS_RESTART_HARNESS=1): for gvs-vswitchd
// (handover, plain restart, restart with --conntrack-state, kill -9) and Open
// vSwitch's ovs-vswitchd on the netdev datapath (ovs-appctl exit and
// start with flow-restore-wait, kill -9), each behind the same ct
// firewall, it restarts the switch while a UDP stream (1 datagram/ms,
// a -> b) and a long-lived TCP connection whose far side speaks first
// run through it, and prints the datagrams lost, the longest gap in
// arrivals and whether the TCP connection carried on. A restart is
// ovs-ctl's sequence (flows saved, flow-restore-wait, stop, start,
// replace-flows --bundle, flow-restore-wait cleared); a handover is a
// successor started with --handover (the time is until the old daemon
// exited); after a kill -9
// the saved flows are reinstalled as soon as the bridge answers (a
// controller at its fastest).
func TestRestartLossSideBySide(t *testing.T) {
	if os.Getenv("GVS_RESTART_HARNESS") == "" {
		t.Skip("the restart harness runs with GVS_RESTART_HARNESS=1 (tests/perf/restart/run.sh)")
	}
	state := "--conntrack-state=ct.state"
	cases := []struct {
		name string
		ovs  bool
		args []string
		stop string // "exit": ovs-ctl restart; "kill": kill -9; "handover": --handover
	}{
		{"gvs, handover", false, nil, "handover"},
		{"gvs, plain restart", false, nil, "exit"},
		{"gvs, restart with --conntrack-state", false, []string{state}, "exit"},
		{"gvs, kill -9", false, []string{state}, "kill"},
		{"Open vSwitch, restart (flow-restore-wait)", true, nil, "exit"},
		{"Open vSwitch, kill -9", true, nil, "kill"},
	}
	var table []string
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRestartRigFor(t, c.ovs, c.args...)
			r.addFirewallFlows()
			conn := startTCPPush(t, r, 5001)
			u := startUDPStream(t, r, 5*time.Second)
			time.Sleep(1500 * time.Millisecond)
			var down time.Duration
			if c.stop == "handover" {
				down = r.handover("", nil, c.args...) // handover_test.go
			} else if c.stop == "kill" {
				flows := r.saveFlows()
				t0 := time.Now()
				r.stop("kill")
				r.start(c.args...)
				r.waitBridge()
				r.restoreFlows(flows)
				down = time.Since(t0)
			} else {
				down = r.restart("exit", c.args...)
			}
			n0 := conn.bytes()
			kept := true
			deadline := time.Now().Add(5 * time.Second)
			for conn.bytes() < n0+400 {
				if time.Now().After(deadline) || conn.srv.ProcessState != nil || conn.cli.ProcessState != nil {
					kept = false
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			sent, got, gap := u.result(t)
			line := fmt.Sprintf("%-42s lost %4d/%d  longest gap %5d ms  TCP kept %-5v (stop to flows restored %v)",
				c.name, sent-got, sent, gap, kept, down.Round(time.Millisecond))
			t.Log(line)
			table = append(table, line)
		})
	}
	for _, l := range table {
		t.Log("  " + l)
	}
}
