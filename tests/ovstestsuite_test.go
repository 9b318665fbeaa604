package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

// ovsSuiteEnv starts what Open vSwitch's test suite starts before the
// switch (ofproto-macros.at, _OVS_VSWITCHD_START): a database created
// with ovsdb-tool, ovsdb-server on $OVS_RUNDIR/db.sock, `ovs-vsctl
// --no-wait init`. It returns the test directory, the environment the
// suite gives its commands, and the link named ovs-vswitchd to gvs.
func ovsSuiteEnv(t *testing.T) (dir string, env []string, link string) {
	t.Helper()
	for _, b := range []string{"ovsdb-tool", "ovsdb-server", "ovs-vsctl", "ovs-appctl", "ovs-ofctl"} {
		nstest.RequireBinary(t, b, "openvswitch-switch")
	}
	bin := daemonBinary(t)
	dir = t.TempDir()
	link = filepath.Join(dir, "bin", "ovs-vswitchd")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	env = append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir, "OVS_SYSCONFDIR="+dir,
		"OVS_SYSLOG_METHOD=null", "OVS_CTL_TIMEOUT=30")
	inDir := func(args ...string) {
		t.Helper()
		c := exec.Command(args[0], args[1:]...)
		c.Env, c.Dir = env, dir
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	inDir("ovsdb-tool", "create", "conf.db", "/usr/share/openvswitch/vswitch.ovsschema")
	inDir("ovsdb-server", "--detach", "--no-chdir", "--pidfile", "--log-file", "--remote=punix:"+filepath.Join(dir, "db.sock"))
	t.Cleanup(func() {
		c := exec.Command("ovs-appctl", "-t", "ovsdb-server", "exit")
		c.Env = env
		c.Run()
	})
	inDir("ovs-vsctl", "--no-wait", "init")
	return dir, env, link
}

// startSuiteDaemon runs OVS_VSWITCHD_START's ovs-vswitchd command line
// and returns what it printed (stdout and stderr).
func startSuiteDaemon(t *testing.T, dir string, env []string, link string) string {
	t.Helper()
	var out bytes.Buffer
	c := exec.Command(link, "--enable-dummy", "--disable-system", "--disable-system-route", "--detach",
		"--no-chdir", "--pidfile", "--log-file", "-vvconn", "-vofproto_dpif", "-vunixctl")
	c.Env, c.Dir, c.Stdout, c.Stderr = env, dir, &out, &out
	if err := c.Run(); err != nil {
		t.Fatalf("ovs-vswitchd --detach: %v\n%s", err, out.String())
	}
	t.Cleanup(func() {
		c := exec.Command("ovs-appctl", "-t", "ovs-vswitchd", "exit", "--cleanup")
		c.Env = env
		c.Run()
	})
	return out.String()
}

// addOfBr0 is ofproto-macros.at's add_of_br 0 with add_of_ports br0 1 2.
func addOfBr0(t *testing.T, env []string) {
	t.Helper()
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0",
		"datapath-type=dummy", "fail-mode=secure", "other-config:datapath-id=fedcba9876543210",
		"other-config:hwaddr=aa:55:aa:55:00:00", "protocols=[OpenFlow10,OpenFlow11,OpenFlow12,OpenFlow13,OpenFlow14,OpenFlow15]",
		"--", "add-port", "br0", "p1", "--", "set", "Interface", "p1", "type=dummy", "ofport_request=1",
		"--", "add-port", "br0", "p2", "--", "set", "Interface", "p2", "type=dummy", "ofport_request=2")
}

// suiteAppctl runs ovs-appctl and returns its stdout, stderr and exit status.
func suiteAppctl(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	c := exec.Command("ovs-appctl", args...)
	c.Env, c.Stdout, c.Stderr = env, &stdout, &stderr
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("ovs-appctl %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), code
}

// TestTimeCommandsAndRevalidatorPurgeAnswerAsOpenVSwitch: the test
// suite's time/stop, time/warp and revalidator/purge exist and answer
// as Open vSwitch 3.1 does ("warped"; "invalid MSECS" exit 2), a warp
// lets at least the warped span pass (a hard_timeout=1 flow is gone
// after warping 2 s), and revalidator/purge empties the datapath's
// flow table.
func TestTimeCommandsAndRevalidatorPurgeAnswerAsOpenVSwitch(t *testing.T) {
	t.Parallel()
	dir, env, link := ovsSuiteEnv(t)
	startSuiteDaemon(t, dir, env, link)
	addOfBr0(t, env)

	if out, errOut, code := suiteAppctl(t, env, "time/stop"); out != "" || errOut != "" || code != 0 {
		t.Errorf("time/stop: %q %q exit %d, want silence and 0", out, errOut, code)
	}
	start := time.Now()
	if out, _, code := suiteAppctl(t, env, "time/warp", "100"); out != "warped\n" || code != 0 {
		t.Errorf("time/warp 100: %q exit %d, want \"warped\" and 0", out, code)
	}
	if el := time.Since(start); el < 100*time.Millisecond {
		t.Errorf("time/warp 100 returned after %v", el)
	}
	for _, bad := range [][]string{{"0"}, {"x"}, {"-1", "100"}} {
		_, errOut, code := suiteAppctl(t, env, append([]string{"time/warp"}, bad...)...)
		if code != 2 || !strings.HasPrefix(errOut, "invalid MSECS\n") {
			t.Errorf("time/warp %v: exit %d stderr %q, want 2 and \"invalid MSECS\"", bad, code, errOut)
		}
	}

	run(t, env, "ovs-ofctl", "add-flow", "br0", "hard_timeout=1,in_port=1,actions=output:2")
	if out, _, _ := suiteAppctl(t, env, "time/warp", "2000", "100"); out != "warped\n" {
		t.Fatalf("time/warp 2000 100: %q", out)
	}
	if flows := run(t, env, "ovs-ofctl", "dump-flows", "br0"); strings.Contains(flows, "hard_timeout=1") {
		t.Errorf("hard_timeout=1 flow still there after time/warp 2000 100:\n%s", flows)
	}

	run(t, env, "ovs-ofctl", "add-flow", "br0", "in_port=1,actions=output:2")
	run(t, env, "ovs-appctl", "netdev-dummy/receive", "p1",
		"in_port(1),eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)")
	waitFor(t, "a datapath flow", func() bool {
		return strings.Contains(run(t, env, "ovs-appctl", "dpctl/dump-flows"), "actions:2")
	})
	if out, errOut, code := suiteAppctl(t, env, "revalidator/purge"); out != "" || errOut != "" || code != 0 {
		t.Errorf("revalidator/purge: %q %q exit %d", out, errOut, code)
	}
	if flows := run(t, env, "ovs-appctl", "dpctl/dump-flows"); strings.Contains(flows, "actions:") {
		t.Errorf("datapath flows after revalidator/purge:\n%s", flows)
	}
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// TestStartsAsOpenVSwitchsTestSuiteStartsOvsVswitchd runs gvs through
// OVS_VSWITCHD_START's command line exactly (no DATABASE, -v options
// naming Open vSwitch's log modules) and then what OVS_VSWITCHD_STOP
// checks: the start must print nothing, leave ovsdb-server's db.sock in
// place and be its client (ovs-vsctl waits for cur_cfg), accept `vlog/set`
// for Open vSwitch's modules, number dummy MACs as netdev-dummy does
// (ovs-ofctl show, as Open vSwitch 3.1 prints it here), write no
// WARN/ERR line to any log, and exit on `ovs-appctl exit`.
func TestStartsAsOpenVSwitchsTestSuiteStartsOvsVswitchd(t *testing.T) {
	dir, env, link := ovsSuiteEnv(t)
	sock := filepath.Join(dir, "db.sock")
	before := inode(t, sock)

	out := startSuiteDaemon(t, dir, env, link)
	if out != "" {
		t.Errorf("start printed %q; the suite requires silence", out)
	}
	if got := inode(t, sock); got != before {
		t.Fatalf("db.sock was replaced (inode %d -> %d): the daemon must use ovsdb-server's", before, got)
	}
	addOfBr0(t, env)
	if cur, next := run(t, env, "ovs-vsctl", "get", "Open_vSwitch", ".", "cur_cfg"),
		run(t, env, "ovs-vsctl", "get", "Open_vSwitch", ".", "next_cfg"); cur != next {
		t.Errorf("cur_cfg %q != next_cfg %q after ovs-vsctl returned", cur, next)
	}
	for _, spec := range []string{"vconn:dbg", "ofproto_dpif:dbg", "ct_dpif:dbg", "dpif_netdev:file:dbg"} {
		run(t, env, "ovs-appctl", "vlog/set", spec)
	}

	show := run(t, env, "ovs-ofctl", "show", "br0")
	for _, want := range []string{" 1(p1): addr:aa:55:aa:55:00:01", " 2(p2): addr:aa:55:aa:55:00:02"} {
		if !strings.Contains(show, want+"\n") {
			t.Errorf("ovs-ofctl show br0 lacks %q:\n%s", want, show)
		}
	}

	// ofproto/trace names the input port as ofproto-dpif.at does.
	run(t, env, "ovs-ofctl", "add-flow", "br0", "in_port=1,actions=output:2")
	trace := run(t, env, "ovs-appctl", "ofproto/trace", "br0", "in_port=p1,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07")
	if !strings.HasSuffix(trace, "Datapath actions: 2\n") {
		t.Errorf("ofproto/trace br0 in_port=p1,...:\n%s", trace)
	}
	trace = run(t, env, "ovs-appctl", "ofproto/trace", "br0", "in_port=p1,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07", "-generate")
	if !strings.HasSuffix(trace, "Datapath actions: 2\n") {
		t.Errorf("ofproto/trace br0 in_port=p1,... -generate:\n%s", trace)
	}
	// ... and a datapath flow alone, its in_port named.
	trace = run(t, env, "ovs-appctl", "ofproto/trace", "in_port(p1)")
	if !strings.HasSuffix(trace, "Datapath actions: 2\n") {
		t.Errorf("ofproto/trace in_port(p1):\n%s", trace)
	}
	run(t, env, "ovs-ofctl", "del-flows", "br0")

	// ofproto.at "port stats": a dummy device counts packets and bytes
	// only; ovs-ofctl prints the unavailable counters as "?".
	ports := run(t, env, "ovs-ofctl", "dump-ports", "br0", "LOCAL")
	for _, want := range []string{
		"  port LOCAL: rx pkts=0, bytes=0, drop=?, errs=?, frame=?, over=?, crc=?\n",
		"           tx pkts=0, bytes=0, drop=?, errs=?, coll=?\n",
	} {
		if !strings.Contains(ports, want) {
			t.Errorf("ovs-ofctl dump-ports br0 LOCAL lacks %q:\n%s", want, ports)
		}
	}

	// check_logs: no WARN, ERR or EMER line in any *.log.
	bad := regexp.MustCompile(`\|(WARN|ERR|EMER)\|`)
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		for _, line := range strings.Split(string(b), "\n") {
			if bad.MatchString(line) {
				t.Errorf("%s: %s", filepath.Base(l), line)
			}
		}
	}

	// OVS_APP_EXIT_AND_WAIT: the pid in the pidfile goes away.
	pidfile := filepath.Join(dir, "ovs-vswitchd.pid")
	run(t, env, "ovs-appctl", "-t", "ovs-vswitchd", "exit")
	end := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(pidfile); os.IsNotExist(err) {
			break
		}
		if time.Now().After(end) {
			t.Fatal("ovs-vswitchd.pid still there 10s after exit")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDpctlManagesDatapathsAndPortsAsOpenVSwitch follows dpctl.at: a
// datapath made with dpctl/add-dp gets ports with add-if (numbered as
// asked), refuses duplicates and type changes with Open vSwitch's
// messages, loses them with del-if, takes flows from a file with
// add-flows/mod-flows/del-flows, and goes with del-dp.
func TestDpctlManagesDatapathsAndPortsAsOpenVSwitch(t *testing.T) {
	dir, env, link := ovsSuiteEnv(t)
	startSuiteDaemon(t, dir, env, link)
	addOfBr0(t, env)
	ok := func(args ...string) string {
		t.Helper()
		out, errOut, code := suiteAppctl(t, env, args...)
		if code != 0 {
			t.Fatalf("ovs-appctl %v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	fails := func(want string, args ...string) {
		t.Helper()
		_, errOut, code := suiteAppctl(t, env, args...)
		if code != 2 || errOut != want+"\novs-appctl: ovs-vswitchd: server returned an error\n" {
			t.Errorf("ovs-appctl %v: exit %d stderr %q, want 2 and %q", args, code, errOut, want)
		}
	}
	ok("dpctl/add-dp", "dummy@br0")
	fails("ovs-vswitchd: add_dp (File exists)", "dpctl/add-dp", "dummy@br0")
	ok("dpctl/add-if", "dummy@br0", "vif1.0,type=dummy,port_no=5")
	const shown = "dummy@br0:\n  lookups: hit:0 missed:0 lost:0\n  flows: 0\n  port 0: br0 (dummy-internal)\n"
	if got := ok("dpctl/show", "dummy@br0"); got != shown+"  port 5: vif1.0 (dummy)\n" {
		t.Errorf("dpctl/show dummy@br0:\n%s", got)
	}
	fails("ovs-vswitchd: adding vif1.0 to dummy@br0 failed (File exists)", "dpctl/add-if", "dummy@br0", "vif1.0,type=dummy")
	ok("dpctl/set-if", "dummy@br0", "vif1.0,port_no=5")
	fails("ovs-vswitchd: vif1.0: can't change type from dummy to system", "dpctl/set-if", "dummy@br0", "vif1.0,type=system")
	ok("dpctl/set-if", "dummy@br0", "br0,type=dummy-internal")
	ok("dpctl/del-if", "dummy@br0", "vif1.0")
	if got := ok("dpctl/show", "dummy@br0"); got != shown {
		t.Errorf("dpctl/show dummy@br0 after del-if:\n%s", got)
	}
	fails("ovs-vswitchd: no port named vif1.0", "dpctl/del-if", "dummy@br0", "vif1.0")

	flows := filepath.Join(dir, "flows.txt")
	write := func(s string) {
		if err := os.WriteFile(flows, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const f2 = "in_port(1),eth(src=00:00:00:00:00:01,dst=00:00:00:00:00:02),eth_type(0x1234)"
	write(f2 + " 2\n")
	ok("dpctl/add-flows", "dummy@br0", flows)
	if got := ok("dpctl/dump-flows", "dummy@br0"); !strings.Contains(got, "eth_type(0x1234), packets:0, bytes:0, used:never, actions:2\n") {
		t.Errorf("after add-flows:\n%s", got)
	}
	write(f2 + " 3\n")
	ok("dpctl/mod-flows", "dummy@br0", flows)
	if got := ok("dpctl/dump-flows", "dummy@br0"); !strings.Contains(got, "actions:3\n") {
		t.Errorf("after mod-flows:\n%s", got)
	}
	write(f2 + "\n")
	ok("dpctl/del-flows", "dummy@br0", flows)
	if got := ok("dpctl/dump-flows", "dummy@br0"); strings.Contains(got, "actions:") {
		t.Errorf("after del-flows:\n%s", got)
	}

	ok("dpctl/del-dp", "dummy@br0")
	fails("ovs-vswitchd: opening datapath (No such device)", "dpctl/del-dp", "dummy@br0")
}

func waitFileContains(t *testing.T, path, want string, timeout time.Duration) string {
	t.Helper()
	end := time.Now().Add(timeout)
	for {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), want) {
			return string(b)
		}
		if time.Now().After(end) {
			t.Fatalf("%s lacks %q after %v:\n%s", filepath.Base(path), want, timeout, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSecondDaemonWaitsForTheLockThenTakesOver follows ovs-vswitchd.at
// "start additional ovs-vswitchd process" and "switch over to another
// ovs-vswitchd process": a second daemon on the same database logs one
// ERR and stays idle while the first holds the ovs_vswitchd lock, then
// configures br0 (logging Open vSwitch's two "bridge br0:" lines) when
// the first is killed, and exits through its own control socket.
func TestSecondDaemonWaitsForTheLockThenTakesOver(t *testing.T) {
	dir, env, link := ovsSuiteEnv(t)
	startSuiteDaemon(t, dir, env, link)
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0",
		"datapath-type=dummy", "fail-mode=secure", "other-config:datapath-id=fedcba9876543210",
		"other-config:hwaddr=aa:55:aa:55:00:00")

	second := exec.Command(link, "--log-file=fakelog", "--enable-dummy", "--unixctl=unixctl2", "--pidfile=ovs-vswitchd-2.pid")
	second.Env, second.Dir = env, dir
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- second.Wait() }()
	t.Cleanup(func() {
		second.Process.Kill()
		<-done
	})
	fakelog := filepath.Join(dir, "fakelog")
	log := waitFileContains(t, fakelog, "|ERR|", 10*time.Second)
	// Other lines may follow by the time the ERR is seen.
	want := regexp.MustCompile(`(?m)\|vswitchd\|ERR\|another ovs-vswitchd process is running, disabling this process \(pid \d+\) until it goes away$`)
	if !want.MatchString(log) {
		t.Errorf("fakelog:\n%s", log)
	}
	if strings.Contains(log, "bridge br0") {
		t.Errorf("the second daemon configured br0 while the first held the lock:\n%s", log)
	}

	pid, err := os.ReadFile(filepath.Join(dir, "ovs-vswitchd.pid"))
	if err != nil {
		t.Fatal(err)
	}
	run(t, env, "kill", strings.TrimSpace(string(pid)))
	log = waitFileContains(t, fakelog, "using datapath ID", 10*time.Second)
	var bridgeLines []string
	for _, l := range strings.Split(log, "\n") {
		if i := strings.Index(l, "|INFO|bridge br0"); i >= 0 {
			bridgeLines = append(bridgeLines, l[i+len("|INFO|"):])
		}
	}
	if got := strings.Join(bridgeLines, "\n"); got != "bridge br0: added interface br0 on port 65534\nbridge br0: using datapath ID fedcba9876543210" {
		t.Errorf("bridge br0 lines:\n%s", got)
	}
	if n := strings.Count(log, "|ERR|"); n != 1 {
		t.Errorf("%d ERR lines in fakelog, want 1:\n%s", n, log)
	}
	run(t, env, "ovs-appctl", "-t", filepath.Join(dir, "unixctl2"), "exit")
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("second daemon: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("second daemon still running 10s after exit")
	}
	done <- nil // for the cleanup
}

// TestUnreachableDatabaseIsRetriedQuietly follows ovs-vswitchd.at
// "invalid database path": the daemon keeps running (and answering
// exit) while its database socket does not exist, and logs no WARN or
// ERR line about it.
func TestUnreachableDatabaseIsRetriedQuietly(t *testing.T) {
	t.Parallel()
	for _, b := range []string{"ovs-appctl"} {
		nstest.RequireBinary(t, b, "openvswitch-switch")
	}
	dir := t.TempDir()
	link := filepath.Join(dir, "ovs-vswitchd")
	if err := os.Symlink(daemonBinary(t), link); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
	c := exec.Command(link, "unix:invalid.db.sock", "--log-file", "--enable-dummy", "--pidfile")
	c.Env, c.Dir = env, dir
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	t.Cleanup(func() { c.Process.Kill(); <-done })
	waitFor(t, "ovs-vswitchd.pid", func() bool {
		_, err := os.Stat(filepath.Join(dir, "ovs-vswitchd.pid"))
		return err == nil
	})
	time.Sleep(2500 * time.Millisecond) // a few reconnection attempts
	select {
	case err := <-done:
		t.Fatalf("the daemon exited while the database was unreachable: %v", err)
	default:
	}
	run(t, env, "ovs-appctl", "-t", "ovs-vswitchd", "exit")
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10s after exit")
	}
	done <- nil
	b, _ := os.ReadFile(filepath.Join(dir, "ovs-vswitchd.log"))
	if regexp.MustCompile(`\|(WARN|ERR|EMER)\|`).Match(b) {
		t.Errorf("ovs-vswitchd.log:\n%s", b)
	}
}
