package tests

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/internal/ovsoracle"
)

// ovnCluster runs Debian's OVN central (NB and SB ovsdb-servers,
// ovn-northd) and ovn-controller against gvs-vswitchd, all in a temporary
// directory, and stops them at cleanup.
type ovnCluster struct {
	t      *testing.T
	dir    string
	gvsEnv []string
	nb, sb string // database sockets
	// switches are the database sockets of the chassis' switches, and
	// controllers the log files of their ovn-controllers (same order).
	switches, controllers []string
	// monitorAll starts the controllers with ovn-monitor-all=true (every
	// Southbound row instead of conditional monitoring).
	monitorAll bool
}

// daemon runs an OVN daemon (detached, with pidfile) and stops it by
// its PID at cleanup.
func (o *ovnCluster) daemon(pidfile string, args ...string) {
	o.t.Helper()
	// ovn-controller finds br-int.mgmt in gvs-vswitchd's run directory.
	env := append(os.Environ(), "OVN_RUNDIR="+o.dir, "OVS_RUNDIR="+filepath.Dir(gvsDB(o.gvsEnv)), "OVN_LOGDIR="+o.dir)
	ovsoracle.Detached(o.t, env, o.dir, pidfile, args...)
}

func startOVN(t *testing.T) *ovnCluster {
	t.Helper()
	requireOVN(t)
	_, gvsEnv := startDaemon(t)
	return startOVNOn(t, gvsEnv, "netdev")
}

// requireOVN fails (under CI) or skips when OVN's binaries are missing.
func requireOVN(t *testing.T) {
	t.Helper()
	for _, b := range []string{"ovsdb-server", "ovsdb-tool", "ovn-northd", "ovn-controller", "ovn-nbctl", "ovs-vsctl"} {
		pkg := "ovn-central"
		switch b {
		case "ovsdb-server", "ovsdb-tool", "ovs-vsctl":
			pkg = "openvswitch-switch"
		case "ovn-controller":
			pkg = "ovn-host"
		}
		nstest.RequireBinary(t, b, pkg)
	}
	nstest.Require(t, "tests")
}

// startOVNOn runs OVN central and ovn-controller against the switch whose
// ovs-vsctl environment is env (gvs-vswitchd or Open vSwitch), with br-int
// of datapath type dpType.
func startOVNOn(t *testing.T, env []string, dpType string) *ovnCluster {
	t.Helper()
	o := startOVNCentral(t, env)
	o.startController(env, "hv1", "127.0.0.1", dpType, "controller")
	return o
}

// startOVNCentral runs the NB and SB databases and ovn-northd; env is the
// ovs-vsctl environment of the (first) switch.
func startOVNCentral(t *testing.T, env []string) *ovnCluster {
	t.Helper()
	o := &ovnCluster{t: t, dir: t.TempDir(), gvsEnv: env}
	// On failure, the controllers' logs say what they were waiting for
	// (ovsoracle logs northd's).
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		logs, _ := filepath.Glob(filepath.Join(o.dir, "controller*.log"))
		for _, name := range logs {
			if b, err := os.ReadFile(name); err == nil {
				if len(b) > 4000 {
					b = b[len(b)-4000:]
				}
				t.Logf("%s (tail):\n%s", filepath.Base(name), b)
			}
		}
	})
	c := ovsoracle.StartOVNCentral(t, o.dir)
	o.nb, o.sb = c.NB, c.SB
	return o
}

// startController runs ovn-controller (files NAME.pid and NAME.log)
// for chassis sysID with tunnel endpoint encapIP against the switch whose
// ovs-vsctl environment is env, and waits for it to create br-int.
func (o *ovnCluster) startController(env []string, sysID, encapIP, dpType, name string) {
	t := o.t
	t.Helper()
	vsctl := func(args ...string) string {
		return run(t, env, append([]string{"ovs-vsctl", "--timeout=30"}, args...)...)
	}
	vsctl("set", "open", ".", "external_ids:system-id="+sysID, "external_ids:ovn-remote=unix:"+o.sb,
		"external_ids:ovn-encap-type=geneve", "external_ids:ovn-encap-ip="+encapIP,
		"external_ids:ovn-bridge-datapath-type="+dpType, "external_ids:ovn-monitor-all="+strconv.FormatBool(o.monitorAll))
	saved := o.gvsEnv
	o.gvsEnv = env
	o.switches = append(o.switches, gvsDB(env))
	o.controllers = append(o.controllers, filepath.Join(o.dir, name+".log"))
	o.daemon(filepath.Join(o.dir, name+".pid"), "ovn-controller", "unix:"+gvsDB(env),
		"--pidfile="+filepath.Join(o.dir, name+".pid"), "--log-file="+filepath.Join(o.dir, name+".log"),
		"--detach", "--no-chdir")
	o.gvsEnv = saved
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(vsctl("list-br"), "br-int") {
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(o.dir, name+".log"))
			t.Fatalf("ovn-controller did not create br-int; its log:\n%s", log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// gvsDB is gvs-vswitchd's database socket in its run directory.
func gvsDB(env []string) string {
	for _, kv := range env {
		if strings.HasPrefix(kv, "OVS_RUNDIR=") {
			return filepath.Join(strings.TrimPrefix(kv, "OVS_RUNDIR="), "db.sock")
		}
	}
	return ""
}

func (o *ovnCluster) vsctl(args ...string) string {
	o.t.Helper()
	return run(o.t, o.gvsEnv, append([]string{"ovs-vsctl", "--timeout=30"}, args...)...)
}

func (o *ovnCluster) nbctl(args ...string) string {
	o.t.Helper()
	args = append([]string{"--timeout=60", "--db=unix:" + o.nb}, args...)
	if !slices.Contains(args, "--wait=hv") {
		return run(o.t, nil, append([]string{"ovn-nbctl"}, args...)...)
	}
	out, err := exec.Command("ovn-nbctl", args...).CombinedOutput()
	if err != nil {
		o.t.Fatalf("ovn-nbctl %s: %v\n%s\nwho has not caught up:\n%s", strings.Join(args, " "), err, out, o.syncState())
	}
	return string(out)
}

// syncState says how far each chassis got when --wait=hv did not return:
// the configuration sequence numbers northd and the chassis report, and
// what each switch's br-int holds.
func (o *ovnCluster) syncState() string {
	var b strings.Builder
	show := func(name string, args ...string) {
		out, err := exec.Command(name, args...).CombinedOutput()
		fmt.Fprintf(&b, "$ %s %s (%v)\n%s", name, strings.Join(args, " "), err, out)
	}
	show("ovn-nbctl", "--db=unix:"+o.nb, "--columns=nb_cfg,sb_cfg,hv_cfg", "list", "NB_Global")
	show("ovn-sbctl", "--db=unix:"+o.sb, "--columns=name,nb_cfg", "list", "Chassis_Private")
	for i, db := range o.switches {
		show("ovs-vsctl", "--db=unix:"+db, "--timeout=5", "get", "bridge", "br-int", "external_ids")
		show("ovs-ofctl", "--timeout=5", "dump-aggregate", "unix:"+filepath.Join(filepath.Dir(db), "br-int.mgmt"))
		// What the controller itself has: its bindings and logical flows
		// (few of them, with nb_cfg 0, means its Southbound view is
		// incomplete, not that the switch lost flows).
		if pid, err := os.ReadFile(strings.TrimSuffix(o.controllers[i], ".log") + ".pid"); err == nil {
			ctl := filepath.Join(o.dir, "ovn-controller."+strings.TrimSpace(string(pid))+".ctl")
			show("ovn-appctl", "-t", ctl, "debug/dump-local-bindings")
			show("ovn-appctl", "-t", ctl, "lflow-cache/show-stats")
		}
		show("tail", "-n", "40", o.controllers[i])
		show("tail", "-n", "60", filepath.Join(filepath.Dir(db), "gvs-vswitchd.log"))
	}
	return b.String()
}

// vif plugs a VIF for logical port name: an internal port of br-int
// moved into its own network namespace with the port's MAC and IP.
func (o *ovnCluster) vif(name, mac, cidr, gw string) string {
	o.t.Helper()
	o.vsctl("add-port", "br-int", name, "--", "set", "interface", name, "type=internal", "external_ids:iface-id="+name)
	ns := nstest.Netns(o.t)
	nstest.Run(o.t, "ip", "link", "set", name, "netns", ns)
	ex := func(args ...string) { nstest.Run(o.t, append([]string{"ip", "netns", "exec", ns}, args...)...) }
	ex("ip", "link", "set", name, "address", mac)
	ex("ip", "addr", "add", cidr, "dev", name)
	ex("ip", "link", "set", name, "up")
	ex("ip", "link", "set", "lo", "up")
	if gw != "" {
		ex("ip", "route", "add", "default", "via", gw)
	}
	return ns
}

// ping reports whether ns reaches ip (3 tries).
func ping(ns, ip string) bool {
	for i := 0; i < 3; i++ {
		if exec.Command("ip", "netns", "exec", ns, "ping", "-c", "1", "-W", "1", ip).Run() == nil {
			return true
		}
	}
	return false
}

// listening is the line a python3 server script passed to startListener
// runs right after listen(): it tells the test, on descriptor 3, that
// connections are accepted from now on.
const listening = "__import__('os').write(3, b'listening'); __import__('os').close(3)"

// startListener starts a python3 server script in namespace ns (stdout
// and stderr to the given writers, nil: discarded) and returns once the
// script has run the listening line, so that a client started next is
// not refused however long python3 took to start. The caller stops it.
func startListener(t *testing.T, ns, script string, stdout, stderr io.Writer) *exec.Cmd {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	srv := exec.Command("ip", "netns", "exec", ns, "python3", "-c", script)
	srv.Stdout, srv.Stderr = stdout, stderr
	srv.ExtraFiles = []*os.File{w}
	err = srv.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r) // until the script closes descriptor 3 or exits
		ready <- string(b)
	}()
	var got string
	select {
	case got = <-ready:
	case <-time.After(30 * time.Second):
		got = "nothing within 30 s"
	}
	if got != "listening" {
		srv.Process.Kill()
		srv.Wait()
		t.Fatalf("server in %s did not start listening (%s)", ns, got)
	}
	return srv
}

// tcpTransfer sends n bytes from ns to ip:port where a server in srvNS
// counts them, and returns the count the server reports.
func tcpTransfer(t *testing.T, ns, srvNS, ip string, port, n int) string {
	t.Helper()
	srv := startListener(t, srvNS, fmt.Sprintf(`
import socket
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('0.0.0.0',%d)); s.listen(1); s.settimeout(20)
`+listening+`
c,a=s.accept(); d=0
while True:
    x=c.recv(65536)
    if not x: break
    d+=len(x)
c.sendall(b'got %%d' %% d); c.close()`, port), nil, nil)
	defer func() { srv.Process.Kill(); srv.Wait() }()
	out, err := exec.Command("ip", "netns", "exec", ns, "python3", "-c", fmt.Sprintf(`
import socket
s=socket.create_connection(('%s',%d),timeout=10); s.sendall(b'x'*%d); s.shutdown(socket.SHUT_WR); print(s.recv(100).decode())`, ip, port, n)).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("error: %v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

var ovnControllerTrouble = regexp.MustCompile(`(?m)^.*\|(WARN|ERR|EMER)\|.*$`)

// ovnScenario is what a switch did under OVN's scenario: one line per
// check ("name: ok" or "name: FAILED ...") and the number of flows
// ovn-controller installed into br-int at the end.
type ovnScenario struct {
	steps []string
	flows string
}

func (r *ovnScenario) check(name string, ok bool, detail string) {
	if ok {
		r.steps = append(r.steps, name+": ok")
	} else {
		r.steps = append(r.steps, name+": FAILED "+detail)
	}
}

// runOVNScenario drives the switch behind o through OVN: two VIFs on a
// logical switch ping each other; a logical router connects a second
// switch (ping and a 1 MB TCP transfer across it, TTL decremented); an
// allow-related ACL lets TCP to port 80 and its replies through while
// other inbound IPv4 is dropped, and deleting the drop ACL with --wait=hv
// takes effect at once; a load balancer VIP; DHCP through ovn-controller.
func runOVNScenario(t *testing.T, o *ovnCluster) ovnScenario {
	var r ovnScenario
	o.nbctl("ls-add", "sw0")
	o.nbctl("lsp-add", "sw0", "vm1", "--", "lsp-set-addresses", "vm1", "50:54:00:00:00:01 10.0.0.1")
	o.nbctl("lsp-add", "sw0", "vm2", "--", "lsp-set-addresses", "vm2", "50:54:00:00:00:02 10.0.0.2")
	ns1 := o.vif("vm1", "50:54:00:00:00:01", "10.0.0.1/24", "10.0.0.254")
	ns2 := o.vif("vm2", "50:54:00:00:00:02", "10.0.0.2/24", "")
	o.nbctl("--wait=hv", "sync")
	r.check("ping on the logical switch", ping(ns1, "10.0.0.2"), "")

	o.nbctl("ls-add", "sw1")
	o.nbctl("lsp-add", "sw1", "vm3", "--", "lsp-set-addresses", "vm3", "50:54:00:00:00:03 10.0.1.3")
	o.nbctl("lr-add", "lr0")
	o.nbctl("lrp-add", "lr0", "lrp0", "00:00:00:00:ff:01", "10.0.0.254/24")
	o.nbctl("lrp-add", "lr0", "lrp1", "00:00:00:00:ff:02", "10.0.1.254/24")
	for _, p := range [][2]string{{"sw0", "lrp0"}, {"sw1", "lrp1"}} {
		lsp := p[0] + "-lr0"
		o.nbctl("lsp-add", p[0], lsp, "--", "lsp-set-type", lsp, "router", "--", "lsp-set-addresses", lsp, "router",
			"--", "lsp-set-options", lsp, "router-port="+p[1])
	}
	ns3 := o.vif("vm3", "50:54:00:00:00:03", "10.0.1.3/24", "10.0.1.254")
	o.nbctl("--wait=hv", "sync")
	r.check("ping across the logical router", ping(ns1, "10.0.1.3"), "")
	out, _ := exec.Command("ip", "netns", "exec", ns1, "ping", "-c", "1", "-W", "1", "10.0.1.3").CombinedOutput()
	r.check("TTL decremented once by the router", strings.Contains(string(out), "ttl=63"), string(out))
	got := tcpTransfer(t, ns1, ns3, "10.0.1.3", 8080, 1<<20)
	r.check("1 MB TCP across the router", got == "got 1048576", got)

	o.nbctl("--wait=hv", "acl-add", "sw1", "to-lport", "1000", `outport == "vm3" && ip4 && tcp.dst == 80`, "allow-related")
	o.nbctl("--wait=hv", "acl-add", "sw1", "to-lport", "900", `outport == "vm3" && ip4`, "drop")
	// --wait=hv returns once the OpenFlow tables have the ACL; the
	// datapath's cached megaflows follow at the next revalidation, which
	// in Open vSwitch can be half a second or more later (the scenario
	// also runs against it).
	time.Sleep(time.Second)
	r.check("drop ACL stops ICMP", !ping(ns1, "10.0.1.3"), "")
	got = tcpTransfer(t, ns1, ns3, "10.0.1.3", 80, 1<<20)
	r.check("allow-related ACL passes TCP to port 80 and replies", got == "got 1048576", got)
	got = tcpTransfer(t, ns1, ns3, "10.0.1.3", 8080, 1000)
	r.check("drop ACL stops TCP to port 8080", got != "got 1000", got)
	o.nbctl("--wait=hv", "acl-del", "sw1", "to-lport", "900", `outport == "vm3" && ip4`)
	r.check("deleting the drop ACL (--wait=hv) lets ICMP through", ping(ns1, "10.0.1.3"), "")

	// ICMP errors come from ovn-controller (icmp4 action through a
	// packet-in and packet-out): TTL 1 expires at the router.
	out, _ = exec.Command("ip", "netns", "exec", ns1, "ping", "-c", "1", "-W", "2", "-t", "1", "10.0.1.3").CombinedOutput()
	r.check("the router answers TTL 1 with time exceeded", strings.Contains(string(out), "From 10.0.0.254") &&
		strings.Contains(string(out), "Time to live exceeded"), string(out))

	// A load balancer VIP on sw0 with two backends, vm3 (across the
	// router) and vm2: ct(nat) to a backend and back.
	o.nbctl("lb-add", "lb0", "10.0.1.100:80", "10.0.1.3:80,10.0.0.2:80", "tcp")
	o.nbctl("--wait=hv", "ls-lb-add", "sw0", "lb0")
	got = lbSpread(t, ns1, "10.0.1.100", 80, 20, ns3, ns2)
	r.check("20 connections to the VIP reach both backends, replies un-NATed", got == "ok", got)

	// DHCP: ovn-controller answers a DISCOVER through a paused packet-in
	// (put_dhcp_opts) and NXT_RESUME; the OFFER carries vm2's address.
	o.nbctl("dhcp-options-create", "10.0.0.0/24")
	uuid := strings.TrimSpace(o.nbctl("--bare", "--columns=_uuid", "find", "dhcp_options", "cidr=\"10.0.0.0/24\""))
	o.nbctl("dhcp-options-set-options", uuid, "lease_time=3600", "router=10.0.0.254", "server_id=10.0.0.254",
		"server_mac=00:00:00:00:ff:01")
	o.nbctl("--wait=hv", "lsp-set-dhcpv4-options", "vm2", uuid)
	script, _ := filepath.Abs("testdata/dhcp_discover.py")
	offer, err := exec.Command("ip", "netns", "exec", ns2, "python3", script, "vm2", "50:54:00:00:00:02").CombinedOutput()
	r.check("DHCP offer from ovn-controller", err == nil && strings.TrimSpace(string(offer)) == "10.0.0.2", fmt.Sprintf("%q %v", offer, err))

	agg := run(t, o.gvsEnv, "ovs-ofctl", "-O", "OpenFlow15", "--timeout=20", "dump-aggregate", "br-int")
	if i := strings.Index(agg, "flow_count="); i >= 0 {
		r.flows = strings.Fields(agg[i+len("flow_count="):])[0]
	}
	return r
}

// lbSpread opens n TCP connections from ns to vip:port, each a new
// source port, with a server on port in every backend namespace that
// answers with its own address; it returns "ok" when every connection was
// answered from the VIP (replies un-NATed) and every backend took at
// least one, else what happened.
func lbSpread(t *testing.T, ns, vip string, port, n int, backends ...string) string {
	t.Helper()
	var srvs []*exec.Cmd
	var outs []*strings.Builder
	stop := func() {
		for _, srv := range srvs {
			srv.Process.Kill()
			srv.Wait()
		}
	}
	defer stop()
	for _, b := range backends {
		var out strings.Builder
		srv := startListener(t, b, fmt.Sprintf(`
import socket
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('0.0.0.0',%d)); s.listen(64); s.settimeout(15)
`+listening+`
n=0
try:
    while n < %d:
        c,a=s.accept(); c.sendall(b'hello'); c.close(); n+=1
        print(n, flush=True)
except socket.timeout:
    pass`, port, n), &out, nil)
		srvs, outs = append(srvs, srv), append(outs, &out)
	}
	out, err := exec.Command("ip", "netns", "exec", ns, "python3", "-c", fmt.Sprintf(`
import socket
ok=0
for i in range(%d):
    s=socket.create_connection(('%s',%d),timeout=5)
    if s.getpeername()[0]=='%s' and s.recv(10)==b'hello': ok+=1
    s.close()
print(ok)`, n, vip, port, vip)).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("client: %v: %s", err, out)
	}
	if strings.TrimSpace(string(out)) != strconv.Itoa(n) {
		return fmt.Sprintf("%s of %d connections answered from the VIP", strings.TrimSpace(string(out)), n)
	}
	stop() // the servers' output is complete once they have exited
	srvs = nil
	for i, o := range outs {
		if strings.TrimSpace(o.String()) == "" {
			return fmt.Sprintf("backend %d took no connection", i)
		}
	}
	return "ok"
}

// controllerTrouble returns the warnings and errors in an ovn-controller
// log, except those that are about the host rather than the switch.
func controllerTrouble(log string) []string {
	var trouble []string
	for _, l := range ovnControllerTrouble.FindAllString(log, -1) {
		// The representor plug provider is absent on this host, not a
		// switch problem.
		if strings.Contains(l, "vif_plug_provider") {
			continue
		}
		// ovn-controller connects to br-int.mgmt as soon as its own
		// transaction creating br-int commits, which can be before the
		// switch has seen the bridge (no socket yet) or between the
		// socket's bind and listen (refused); rconn retries and
		// connects. Open vSwitch's punix has the same two windows.
		if strings.Contains(l, "br-int.mgmt: connection failed (No such file or directory)") ||
			strings.Contains(l, "br-int.mgmt: connection failed (Connection refused)") {
			continue
		}
		trouble = append(trouble, l)
	}
	return trouble
}

// The names of the OVN scenarios, for onGvs and the subtests.
const (
	mainOVNScenario    = "switch, router, ACLs, load balancer, DHCP"
	gatewayOVNScenario = "gateway router SNAT and floating IP"
)

// gvsOVNRuns keeps what each OVN scenario did on gvs-vswitchd, by name,
// until another test has judged it. Each scenario is judged by two tests
// (every check passes; the checks come out as on Open vSwitch), which so
// start OVN and move its traffic on gvs once between them. A run cut
// short by a failed test is not kept, and a test never takes a run it
// made itself (under -count=N each round runs it anew).
var gvsOVNRuns = struct {
	sync.Mutex
	kept map[string]gvsOVNRun
}{kept: map[string]gvsOVNRun{}}

type gvsOVNRun struct {
	r   ovnScenario
	log string // ovn-controller's log
	by  string // the test that ran it
}

// onGvs returns what scenario did on gvs-vswitchd under OVN (startOVN)
// and ovn-controller's log: the run another test left, or a new one,
// which it leaves for the next test. The caller holds brIntDevices.
func onGvs(t *testing.T, name string, scenario func(*testing.T, *ovnCluster) ovnScenario) (ovnScenario, string) {
	t.Helper()
	gvsOVNRuns.Lock()
	defer gvsOVNRuns.Unlock()
	if run, ok := gvsOVNRuns.kept[name]; ok && run.by != t.Name() {
		delete(gvsOVNRuns.kept, name)
		t.Logf("judging the run of %q on gvs that %s made", name, run.by)
		return run.r, run.log
	}
	o := startOVN(t)
	run := gvsOVNRun{r: scenario(t, o), by: t.Name()}
	log, _ := os.ReadFile(filepath.Join(o.dir, "controller.log"))
	run.log = string(log)
	gvsOVNRuns.kept[name] = run
	return run.r, run.log
}

// TestOVNDrivesGvs runs Debian's OVN (northd, NB/SB databases and
// ovn-controller) against gvs-vswitchd through runOVNScenario: every check
// passes and no OpenFlow error or warning appears in ovn-controller's log.
func TestOVNDrivesGvs(t *testing.T) {
	parallelHolding(t, &brIntDevices)
	requireOVN(t)
	r, log := onGvs(t, mainOVNScenario, runOVNScenario)
	for _, s := range r.steps {
		if !strings.HasSuffix(s, ": ok") {
			t.Error(s)
		}
	}
	if trouble := controllerTrouble(log); len(trouble) > 0 {
		t.Errorf("ovn-controller logged:\n%s", strings.Join(trouble, "\n"))
	}
}

// TestOVNScenarioSameOnOpenVSwitch runs the same OVN scenario against
// Open vSwitch's ovs-vswitchd with its userspace (netdev) datapath and
// against gvs-vswitchd: every check must come out the same, and
// ovn-controller must install the same number of flows into both.
func TestOVNScenarioSameOnOpenVSwitch(t *testing.T) {
	parallelHolding(t, &brIntDevices)
	requireOVN(t)
	nstest.RequireBinary(t, "ovs-vswitchd", "openvswitch-switch")
	for _, sc := range []struct {
		name string
		run  func(*testing.T, *ovnCluster) ovnScenario
	}{{mainOVNScenario, runOVNScenario}, {gatewayOVNScenario, runGatewayScenario}} {
		t.Run(sc.name, func(t *testing.T) {
			ovsEnv, stopOVS := startOpenVSwitchNetdev(t)
			run(t, ovsEnv, "ovs-vsctl", "--timeout=20", "init")
			want := sc.run(t, startOVNOn(t, ovsEnv, "netdev"))
			stopOVS()
			got, _ := onGvs(t, sc.name, sc.run)
			if strings.Join(got.steps, "\n") != strings.Join(want.steps, "\n") {
				t.Errorf("the scenario differs\n--- Open vSwitch (netdev):\n%s\n--- gvs:\n%s",
					strings.Join(want.steps, "\n"), strings.Join(got.steps, "\n"))
			}
			if got.flows == "" || got.flows != want.flows {
				t.Errorf("ovn-controller installed %s flows into Open vSwitch and %s into gvs", want.flows, got.flows)
			}
			t.Logf("both switches: %d checks, %s flows", len(got.steps), got.flows)
		})
	}
}
