package tests

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/version"
)

// handoverVersion is the version string of the second build the
// handover tests hand over to.
const handoverVersion = "9.9.9-handover"

// otherBuild is gvs-vswitchd built from this tree with another version
// string (an upgrade), in t.TempDir().
func otherBuild(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gvs-vswitchd")
	out, err := exec.Command("go", "build", "-ldflags", "-X github.com/gvs-project/gvs/internal/version.build="+handoverVersion,
		"-o", bin, "github.com/gvs-project/gvs/cmd/gvs-vswitchd").CombinedOutput()
	if err != nil {
		t.Fatalf("building gvs-vswitchd %s: %v\n%s", handoverVersion, err, out)
	}
	return bin
}

// handover starts bin (the rig's binary when "") with the rig's command
// line plus --handover and env, and waits until the running daemon has
// exited: the new one then runs the switch. It returns how long the
// handover took from the successor's start.
func (r *restartRig) handover(bin string, env []string, args ...string) time.Duration {
	r.t.Helper()
	if bin == "" {
		bin = r.bin
	}
	var out bytes.Buffer
	c := exec.Command(bin, append(append([]string{"--no-chdir", "--pidfile", "--log-file"}, args...), "--handover")...)
	c.Env, c.Dir = append(append([]string(nil), r.env...), env...), r.dir
	c.Stdout, c.Stderr = &out, &out
	t0 := time.Now()
	if err := c.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() {
		if c.ProcessState == nil {
			c.Process.Kill()
			c.Wait()
		}
	})
	old := r.cmd
	for end := time.Now().Add(30 * time.Second); !exited(old.Process); {
		if exited(c.Process) {
			err := c.Wait()
			r.t.Fatalf("the successor exited (%v) before taking over:\n%s", err, out.String())
		}
		if time.Now().After(end) {
			c.Process.Kill()
			c.Wait()
			r.t.Fatalf("no handover in 30 s:\n%s", out.String())
		}
		time.Sleep(time.Millisecond)
	}
	old.Wait()
	took := time.Since(t0)
	if code := old.ProcessState.ExitCode(); code != 0 {
		r.t.Fatalf("the old daemon exited with status %d after the handover", code)
	}
	r.cmd = c
	return took
}

// exited reports whether a child process has ended (a zombie, not yet
// waited for, or gone), without waiting for it.
func exited(p *os.Process) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z'
}

// handoverRefused starts a successor as handover does and expects it to
// fail: it returns its exit status and output; the old daemon must
// still run.
func (r *restartRig) handoverRefused(env []string, args ...string) (int, string) {
	r.t.Helper()
	c := exec.Command(r.bin, append(append([]string{"--no-chdir", "--pidfile", "--log-file"}, args...), "--handover")...)
	c.Env, c.Dir = append(append([]string(nil), r.env...), env...), r.dir
	out, err := c.CombinedOutput()
	if err == nil {
		r.t.Fatalf("the successor took over:\n%s", out)
	}
	if r.cmd.Process.Signal(syscall.Signal(0)) != nil {
		r.t.Fatalf("the old daemon is gone after a refused handover")
	}
	return c.ProcessState.ExitCode(), string(out)
}

// pingRun pings b from a every 10 ms in the background.
type pingRun struct {
	c   *exec.Cmd
	out bytes.Buffer
}

func startPing(t *testing.T, r *restartRig, n int) *pingRun {
	t.Helper()
	p := &pingRun{c: exec.Command("ip", "netns", "exec", r.a.ns, "ping", "-n", "-q", "-i", "0.01", "-c", strconv.Itoa(n), "-W", "1", r.b.ip)}
	p.c.Stdout, p.c.Stderr = &p.out, &p.out
	if err := p.c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.c.ProcessState == nil {
			p.c.Process.Kill()
			p.c.Wait()
		}
	})
	return p
}

var pingSummary = regexp.MustCompile(`(\d+) packets transmitted, (\d+) received`)

// result waits for ping to end and returns requests sent and replies
// received.
func (p *pingRun) result(t *testing.T) (sent, got int) {
	t.Helper()
	p.c.Wait()
	m := pingSummary.FindStringSubmatch(p.out.String())
	if m == nil {
		t.Fatalf("ping: %s", p.out.String())
	}
	sent, _ = strconv.Atoi(m[1])
	got, _ = strconv.Atoi(m[2])
	return sent, got
}

// openflowState is what the OpenFlow clients see of br0: flows without
// their counters and ages, groups, meters and the TLV map.
func (r *restartRig) openflowState() string {
	r.t.Helper()
	var b strings.Builder
	for _, args := range [][]string{
		{"-O", "OpenFlow15", "dump-flows", "--no-stats", "br0"},
		{"-O", "OpenFlow15", "dump-groups", "br0"},
		{"-O", "OpenFlow15", "dump-meters", "br0"},
		{"dump-tlv-map", "br0"},
	} {
		b.WriteString(r.ofctl(args...))
	}
	return b.String()
}

// addHandoverState gives br0 what a handover must carry besides the
// firewall: a flow with a cookie, timeouts, flags and importance, a
// group, a meter and a TLV mapping.
func (r *restartRig) addHandoverState() {
	r.t.Helper()
	r.ofctl("add-tlv-map", "br0", "{class=0xffff,type=0,len=4}->tun_metadata0")
	r.ofctl("-O", "OpenFlow15", "add-meter", "br0", "meter=7,pktps,band=type=drop,rate=100000")
	r.ofctl("-O", "OpenFlow15", "add-group", "br0", "group_id=5,type=all,bucket=bucket_id=0,actions=output:2")
	r.ofctl("-O", "OpenFlow15", "add-flow", "br0",
		"table=5,cookie=0x1234,priority=7,idle_timeout=600,hard_timeout=900,importance=9,send_flow_rem,tun_metadata0=0x99,actions=meter:7,group:5")
}

// TestHandoverKeepsEveryPacketAndConnection runs a UDP stream (one
// datagram a millisecond), a long-lived TCP connection through the
// ct(commit)/+est firewall with its drop of +new from the far side, and
// a ping through gvs-vswitchd, and hands the switch over twice while
// they run: to a new process of the same build, then to a build with
// another version string (an upgrade). Not a datagram is lost, every
// ping is answered, the TCP connection carries on (its far side's
// segments are +est in the new processes: none hits the drop flow),
// dpctl/dump-conntrack shows the same connections, ovs-ofctl shows the
// same flows, groups, meters and TLV map, and ovs-vsctl and ovs-appctl
// work with the new process.
func TestHandoverKeepsEveryPacketAndConnection(t *testing.T) {
	upgrade := otherBuild(t) // before the traffic: building takes seconds
	dbPort, ofPort, mxPort := freePort(t), freePort(t), freePort(t)
	args := []string{"--remote=punix:db2.sock", "--remote=ptcp:" + dbPort + ":127.0.0.1", "--metrics-address=127.0.0.1:" + mxPort}
	r := newRestartRig(t, args...)
	r.vsctl("set-controller", "br0", "ptcp:"+ofPort+":127.0.0.1")
	r.addFirewallFlows()
	r.addHandoverState()
	conn := startTCPPush(t, r, 5011)
	u := startUDPStream(t, r, 6*time.Second)
	ping := startPing(t, r, 500)
	time.Sleep(time.Second)
	ctBefore := r.conntrackLines()
	ofBefore := r.openflowState()
	if !strings.Contains(strings.Join(ctBefore, "\n"), "dport=5011") || !strings.Contains(strings.Join(ctBefore, "\n"), "dport=6000") {
		t.Fatalf("conntrack before the handover: %q", ctBefore)
	}

	took1 := r.handover("", nil, args...)
	time.Sleep(time.Second)
	took2 := r.handover(upgrade, nil, args...)
	time.Sleep(500 * time.Millisecond)

	if got := r.appctl("version"); !strings.Contains(got, handoverVersion) {
		t.Fatalf("ovs-appctl version after the upgrade: %q", got)
	}
	if got := r.openflowState(); got != ofBefore {
		t.Fatalf("OpenFlow state after the handovers:\n%s\nbefore:\n%s", got, ofBefore)
	}
	if got := r.conntrackLines(); strings.Join(got, "\n") != strings.Join(ctBefore, "\n") {
		t.Fatalf("conntrack after the handovers:\n%s\nbefore:\n%s", strings.Join(got, "\n"), strings.Join(ctBefore, "\n"))
	}
	r.vsctl("set", "bridge", "br0", "external_ids:handed=yes")
	for _, db := range []string{"unix:" + filepath.Join(r.dir, "db2.sock"), "tcp:127.0.0.1:" + dbPort} {
		if got := r.vsctl("--db="+db, "get", "bridge", "br0", "external_ids:handed"); got != "yes\n" {
			t.Fatalf("ovs-vsctl --db=%s get: %q", db, got)
		}
	}
	if got := r.ofctl("dump-flows", "tcp:127.0.0.1:"+ofPort, "table=5"); !strings.Contains(got, "cookie=0x1234") {
		t.Fatalf("dump-flows over the ptcp controller listener: %q", got)
	}
	resp, err := http.Get("http://127.0.0.1:" + mxPort + "/metrics")
	if err != nil {
		t.Fatalf("metrics after the handovers: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("metrics after the handovers: %s", resp.Status)
	}
	r.ofctl("add-flow", "br0", "table=9,priority=1,actions=drop")
	if got := r.ofctl("dump-flows", "br0", "table=9"); !strings.Contains(got, "priority=1 actions=drop") {
		t.Fatalf("a flow added after the handovers: %q", got)
	}
	n0 := conn.bytes()
	waitFor(t, "data over the TCP connection after the handovers", func() bool { conn.alive(); return conn.bytes() >= n0+400 })
	conn.alive()
	if d := r.farSideDrops(); d != 0 {
		t.Fatalf("%d far-side packets dropped as +new after the handovers", d)
	}
	sent, got, gap := u.result(t)
	if sent < 5000 || got != sent {
		t.Fatalf("UDP: %d of %d datagrams arrived (longest gap %d ms)\n%s%s", got, sent, gap, r.appctl("dpctl/show"), r.ofctl("dump-ports", "br0"))
	}
	psent, pgot := ping.result(t)
	if psent != 500 || pgot != psent {
		t.Fatalf("ping: %d replies to %d requests", pgot, psent)
	}
	logb, _ := os.ReadFile(filepath.Join(r.dir, "gvs-vswitchd.log"))
	if strings.Contains(string(logb), "listen attempt failed") || strings.Contains(string(logb), "Address already in use") {
		t.Fatalf("a listener was not handed over:\n%s", logb)
	}
	for _, want := range []string{"handed over to the successor: exiting without closing ports",
		"handover: took over 3 ports from gvs " + version.String(), "handover: took over 3 ports from gvs " + version.String()} {
		if !strings.Contains(string(logb), want) {
			t.Fatalf("the log does not say %q:\n%s", want, logb)
		}
	}
	// The successors start with their predecessor's first-pass
	// megaflows (the UDP, TCP and ping flows at least), translated again.
	warm := regexp.MustCompile(`handover: took over 3 ports .*netdev: (\d+) megaflows`).FindAllStringSubmatch(string(logb), -1)
	if len(warm) != 2 {
		t.Fatalf("the log does not say how many megaflows each successor prewarmed:\n%s", logb)
	}
	for _, w := range warm {
		if n, _ := strconv.Atoi(w[1]); n < 3 {
			t.Fatalf("a successor prewarmed %s megaflows, want at least 3:\n%s", w[1], logb)
		}
	}
	t.Logf("handovers took %v and %v; UDP %d/%d, longest gap %d ms; ping %d/%d; megaflows prewarmed %s and %s", took1.Round(time.Millisecond), took2.Round(time.Millisecond), got, sent, gap, pgot, psent, warm[0][1], warm[1][1])
}

// TestHandoverRefusedStateLeavesTheOldDaemonForwarding starts a
// successor that reads another version of the OpenFlow state (the
// test-only GVS_TEST_HANDOVER_OPENFLOW_STATE_VERSION): it exits non-zero
// saying why, applies nothing, and the running daemon goes on
// forwarding (no datagram of a UDP stream lost, the TCP connection
// kept) with its pidfile, flows and conntrack. A successor that fails
// later, once its bridge layer ran on the handed database, leaves the
// database file as the old daemon knows it (it writes nothing before it
// has taken over). A handover after that works.
func TestHandoverRefusedStateLeavesTheOldDaemonForwarding(t *testing.T) {
	r := newRestartRig(t)
	r.addFirewallFlows()
	conn := startTCPPush(t, r, 5012)
	u := startUDPStream(t, r, 3*time.Second)
	time.Sleep(500 * time.Millisecond)
	ofBefore := r.openflowState()
	pid := r.cmd.Process.Pid

	code, out := r.handoverRefused([]string{"GVS_TEST_HANDOVER_OPENFLOW_STATE_VERSION=99"})
	want := "gvs-vswitchd: handover: applying what " + version.String() + " handed over: state from gvs " + version.String() +
		" refused: section openflow/br0 has version 1, this gvs (" + version.String() + ") reads version 99\n"
	if code != 1 || out != want {
		t.Fatalf("the refused successor exited %d saying:\n%q\nwant:\n%q", code, out, want)
	}
	b, _ := os.ReadFile(filepath.Join(r.dir, "gvs-vswitchd.pid"))
	if strings.TrimSpace(string(b)) != strconv.Itoa(pid) {
		t.Fatalf("pidfile after a refused handover: %q, want %d", b, pid)
	}
	if got := r.openflowState(); got != ofBefore {
		t.Fatalf("OpenFlow state after a refused handover:\n%s\nbefore:\n%s", got, ofBefore)
	}
	sent, got, gap := u.result(t)
	if sent < 2500 || got != sent {
		t.Fatalf("UDP: %d of %d datagrams arrived (longest gap %d ms)", got, sent, gap)
	}
	n0 := conn.bytes()
	waitFor(t, "data over the TCP connection", func() bool { conn.alive(); return conn.bytes() >= n0+400 })
	logb, _ := os.ReadFile(filepath.Join(r.dir, "gvs-vswitchd.log"))
	if !strings.Contains(string(logb), "handover to "+version.String()+" failed, forwarding again: successor: state from gvs") {
		t.Fatalf("the old daemon's log does not say the handover failed:\n%s", logb)
	}
	if !strings.Contains(string(logb), "|vswitchd|ERR|"+strings.TrimSuffix(strings.TrimPrefix(want, "gvs-vswitchd: "), "\n")) {
		t.Fatalf("the successor's log line is missing:\n%s", logb)
	}
	// A successor that fails after its bridge layer ran on the handed
	// database (the handed ports cannot be adopted as dummies) wrote
	// nothing to it: the old daemon goes on with the file as it knows it,
	// and the next successor opens it.
	code, out = r.handoverRefused(nil, "--enable-dummy=override")
	if code != 1 || !strings.Contains(out, "adopting ports: handed port") {
		t.Fatalf("the failing successor exited %d saying:\n%s", code, out)
	}
	if db, _ := os.ReadFile(filepath.Join(r.dir, "conf.db")); bytes.Contains(db, []byte("the database says dummy")) {
		t.Fatal("the failed successor wrote its interface errors to the database")
	}
	r.vsctl("set", "bridge", "br0", "external_ids:after=failed")
	r.handover("", nil)
	if got := r.vsctl("get", "bridge", "br0", "external_ids:after"); got != "failed\n" {
		t.Fatalf("after the handover: %q", got)
	}
	n1 := conn.bytes()
	waitFor(t, "data over the TCP connection after the handover", func() bool { conn.alive(); return conn.bytes() >= n1+400 })
	// The successor's sockets are its own: they go when it exits.
	r.stop("exit")
	for _, f := range []string{"db.sock", "br0.mgmt", "br0.snoop", "gvs-vswitchd.handover", "gvs-vswitchd.pid"} {
		if _, err := os.Stat(filepath.Join(r.dir, f)); !os.IsNotExist(err) {
			t.Errorf("%s after the successor's exit: %v", f, err)
		}
	}
}

// TestHandoverWithAnExternalDatabase hands over a gvs-vswitchd that uses
// Open vSwitch's ovsdb-server (DATABASE given, as Debian runs it): the
// successor steals the ovs_vswitchd lock from the old daemon's session,
// and a UDP stream and a TCP connection through the firewall go on
// without a loss; ovs-vsctl and ovs-ofctl work with the new process. A
// successor that fails after stealing the lock (its ports cannot be
// adopted) leaves the old daemon forwarding and configuring.
func TestHandoverWithAnExternalDatabase(t *testing.T) {
	r := newRestartRigDB(t, false, true)
	args := []string{"unix:" + filepath.Join(r.dir, "db.sock")}
	r.addFirewallFlows()
	conn := startTCPPush(t, r, 5013)
	u := startUDPStream(t, r, 3*time.Second)
	time.Sleep(500 * time.Millisecond)
	ofBefore := r.openflowState()
	// A successor that fails once it runs its bridges (it would make
	// every interface a dummy: the handed ports cannot be adopted) has
	// stolen the lock by then: the old daemon goes on forwarding, and
	// ovsdb-server gives it the lock back when the successor's session
	// ends (a victim of "steal" that asked with "lock" stays queued).
	code, out := r.handoverRefused(nil, append([]string{"--enable-dummy=override"}, args...)...)
	if code != 1 || !strings.Contains(out, "gvs-vswitchd: handover: applying what "+version.String()+" handed over: adopting ports: handed port") {
		t.Fatalf("the failing successor exited %d saying:\n%s", code, out)
	}
	r.vsctl("set", "bridge", "br0", "external_ids:after=failed") // the old daemon reconfigures: waited for by ovs-vsctl
	r.handover("", nil, args...)
	if got := r.openflowState(); got != ofBefore {
		t.Fatalf("OpenFlow state after the handover:\n%s\nbefore:\n%s", got, ofBefore)
	}
	r.vsctl("set", "bridge", "br0", "external_ids:handed=yes")
	if got := r.vsctl("get", "bridge", "br0", "external_ids:handed"); got != "yes\n" {
		t.Fatalf("ovs-vsctl get: %q", got)
	}
	sent, got, gap := u.result(t)
	if sent < 2500 || got != sent {
		t.Fatalf("UDP: %d of %d datagrams arrived (longest gap %d ms)", got, sent, gap)
	}
	n0 := conn.bytes()
	waitFor(t, "data over the TCP connection after the handover", func() bool { conn.alive(); return conn.bytes() >= n0+400 })
}
