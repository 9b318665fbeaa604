package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

// chassis is one OVN hypervisor: gvs-vswitchd running as a process inside
// its own network namespace (so the routes it learns are that
// namespace's), with the tunnel endpoint address on br-phy's local port
// and a veth into the underlay, and an ovn-controller.
type chassis struct {
	ns     string
	dir    string   // the switch's run directory (its pidfile is TARGET.pid)
	env    []string // ovs-vsctl/ovs-appctl environment (OVS_RUNDIR)
	target string   // ovs-appctl -t name of the switch daemon
}

// chassisSwitch starts a switch daemon inside namespace ns with its files
// in dir and returns its ovs-appctl target name.
type chassisSwitch func(t *testing.T, ns, dir string, env []string) string

// gvsChassis runs gvs-vswitchd (binary bin, options extra) with its
// embedded database.
func gvsChassis(bin string, extra ...string) chassisSwitch {
	return func(t *testing.T, ns, dir string, env []string) string {
		cmd := exec.Command("ip", append([]string{"netns", "exec", ns, bin, "--log-file=" + filepath.Join(dir, "gvs-vswitchd.log"),
			"--pidfile=" + filepath.Join(dir, "gvs-vswitchd.pid")}, extra...)...)
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
			if t.Failed() {
				if b, err := os.ReadFile(filepath.Join(dir, "gvs-vswitchd.log")); err == nil {
					if len(b) > 3000 {
						b = b[len(b)-3000:]
					}
					t.Logf("%s gvs-vswitchd.log (tail):\n%s", ns, b)
				}
			}
		})
		return "gvs-vswitchd"
	}
}

// ovsChassis runs Open vSwitch's ovsdb-server and ovs-vswitchd (netdev
// datapath on real devices).
func ovsChassis(t *testing.T, ns, dir string, env []string) string {
	return ovsChassisWith()(t, ns, dir, env)
}

// ovsChassisWith is ovsChassis with ovs-vswitchd options extra.
func ovsChassisWith(extra ...string) chassisSwitch {
	return func(t *testing.T, ns, dir string, env []string) string {
		return startOVSChassis(t, ns, dir, env, extra)
	}
}

func startOVSChassis(t *testing.T, ns, dir string, env, extra []string) string {
	db := filepath.Join(dir, "conf.db")
	run(t, env, "ovsdb-tool", "create", db, "/usr/share/openvswitch/vswitch.ovsschema")
	for _, args := range [][]string{
		{"ovsdb-server", db, "--remote=punix:" + filepath.Join(dir, "db.sock"), "--pidfile=" + filepath.Join(dir, "ovsdb-server.pid"),
			"--log-file=" + filepath.Join(dir, "ovsdb-server.log"), "--detach", "--no-chdir"},
		append([]string{"ovs-vswitchd", "unix:" + filepath.Join(dir, "db.sock"), "--pidfile=" + filepath.Join(dir, "ovs-vswitchd.pid"),
			"--log-file=" + filepath.Join(dir, "ovs-vswitchd.log"), "--detach", "--no-chdir"}, extra...),
	} {
		pid := args[3]
		if args[0] == "ovs-vswitchd" {
			pid = args[2]
		}
		run(t, env, append([]string{"ip", "netns", "exec", ns}, args...)...)
		pidfile := strings.TrimPrefix(pid, "--pidfile=")
		t.Cleanup(func() { stopPidfile(pidfile) })
		if args[0] == "ovsdb-server" {
			run(t, env, "ovs-vsctl", "--no-wait", "init")
		}
	}
	return "ovs-vswitchd"
}

// startSwitchNode starts a switch daemon with start in a new network
// namespace, its files in a new directory, and waits for its database.
func startSwitchNode(t *testing.T, start chassisSwitch) *chassis {
	t.Helper()
	ns := nstest.Netns(t)
	dir := t.TempDir()
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
	target := start(t, ns, dir, env)
	waitFor(t, ns+" switch database", func() bool {
		_, err := os.Stat(filepath.Join(dir, "db.sock"))
		return err == nil
	})
	return &chassis{ns: ns, dir: dir, env: env, target: target}
}

// underlay moves link (from namespace srcNS, "" for this one) into the
// node's namespace as the port of a netdev bridge br-phy, whose local
// port gets the tunnel endpoint cidr (an IPv6 one without DAD).
func (c *chassis) underlay(t *testing.T, link, srcNS, cidr string) {
	t.Helper()
	in := func(args ...string) { nstest.InNetns(t, c.ns, args...) }
	if srcNS == "" {
		nstest.Run(t, "ip", "link", "set", link, "netns", c.ns)
	} else {
		nstest.InNetns(t, srcNS, "ip", "link", "set", link, "netns", c.ns)
	}
	in("ip", "link", "set", "lo", "up")
	// The underlay link is the switch's port, not an interface of the
	// host's stack: without this the namespace's kernel would also answer
	// ARP for the tunnel address on it, with the veth's own MAC, racing
	// the answer from br-phy (whichever the peer snoops last wins).
	in("sysctl", "-qw", "net.ipv4.conf."+link+".arp_ignore=1")
	in("ip", "link", "set", link, "up")
	run(t, c.env, "ovs-vsctl", "--timeout=30", "add-br", "br-phy", "--", "set", "bridge", "br-phy", "datapath_type=netdev",
		"--", "add-port", "br-phy", link)
	if strings.Contains(cidr, ":") {
		in("ip", "addr", "add", cidr, "dev", "br-phy", "nodad")
	} else {
		in("ip", "addr", "add", cidr, "dev", "br-phy")
	}
	in("ip", "link", "set", "br-phy", "up")
}

// startChassis runs a switch started by start in a new namespace, gives
// br-phy the tunnel address ip/24 and the underlay link, and starts
// ovn-controller for it.
func startChassis(t *testing.T, o *ovnCluster, start chassisSwitch, name, ip, underlay, srcNS string) *chassis {
	t.Helper()
	c := startSwitchNode(t, start)
	c.underlay(t, underlay, srcNS, ip+"/24")
	o.startController(c.env, name, ip, "netdev", "controller-"+name)
	return c
}

// vif plugs logical port lsp into br-int of the chassis: an internal port
// moved into its own namespace with the port's MAC and address.
func (c *chassis) vif(t *testing.T, lsp, mac, cidr string) string {
	t.Helper()
	run(t, c.env, "ovs-vsctl", "--timeout=30", "add-port", "br-int", lsp, "--", "set", "interface", lsp, "type=internal",
		"external_ids:iface-id="+lsp)
	ns := nstest.Netns(t)
	nstest.InNetns(t, c.ns, "ip", "link", "set", lsp, "netns", ns)
	ex := func(args ...string) { nstest.InNetns(t, ns, args...) }
	ex("ip", "link", "set", lsp, "address", mac)
	// Room for the Geneve header on a 1500-byte underlay, as OVN's DHCP
	// would advertise (1500 - 58, rounded down).
	ex("ip", "link", "set", lsp, "mtu", "1400")
	ex("ip", "addr", "add", cidr, "dev", lsp)
	ex("ip", "link", "set", lsp, "up")
	ex("ip", "link", "set", "lo", "up")
	return ns
}

// runTwoChassis runs two chassis started by start, each in its own
// namespace with its tunnel endpoint on br-phy and a veth between them,
// under one OVN, and checks that ovn-controller creates the Geneve ports,
// VIFs on different chassis ping each other and move 1 MB over TCP
// through the tunnel, and each chassis resolved the other endpoint.
func runTwoChassis(t *testing.T, start chassisSwitch) (ovnScenario, *ovnCluster, [2]*chassis) {
	var r ovnScenario
	a, b := nstest.Veth(t)
	o := startOVNCentral(t, nil)
	hv1 := startChassis(t, o, start, "hv1", "172.31.0.1", a, "")
	hv2 := startChassis(t, o, start, "hv2", "172.31.0.2", b, "")
	chs := [2]*chassis{hv1, hv2}

	o.nbctl("ls-add", "sw0")
	o.nbctl("lsp-add", "sw0", "vm1", "--", "lsp-set-addresses", "vm1", "50:54:00:00:00:01 10.0.0.1")
	o.nbctl("lsp-add", "sw0", "vm2", "--", "lsp-set-addresses", "vm2", "50:54:00:00:00:02 10.0.0.2")
	ns1 := hv1.vif(t, "vm1", "50:54:00:00:00:01", "10.0.0.1/24")
	ns2 := hv2.vif(t, "vm2", "50:54:00:00:00:02", "10.0.0.2/24")
	o.nbctl("--wait=hv", "sync")

	remotes := [2]string{"172.31.0.2", "172.31.0.1"}
	for i, c := range chs {
		waitFor(t, "tunnel port to "+remotes[i], func() bool {
			out := run(t, c.env, "ovs-vsctl", "--timeout=30", "--bare", "--columns=options", "find", "interface", "type=geneve")
			return strings.Contains(out, "remote_ip="+remotes[i])
		})
	}
	// The first packets also resolve the remote tunnel endpoint (ARP
	// through br-phy): allow a few rounds of pings for that warm-up.
	ok := false
	for i := 0; i < 4 && !ok; i++ {
		ok = ping(ns1, "10.0.0.2")
	}
	r.check("ping between chassis over Geneve", ok, "")
	got := tcpTransfer(t, ns2, ns1, "10.0.0.1", 8080, 1<<20)
	r.check("1 MB TCP from hv2 to hv1 over Geneve", got == "got 1048576", got)
	for i, c := range chs {
		out := run(t, c.env, "ovs-appctl", "-t", c.target, "tnl/neigh/show")
		r.check("tnl/neigh/show has "+remotes[i], strings.Contains(out, remotes[i]), out)
	}
	agg := run(t, hv1.env, "ovs-ofctl", "-O", "OpenFlow15", "--timeout=20", "dump-aggregate", "br-int")
	if i := strings.Index(agg, "flow_count="); i >= 0 {
		r.flows = strings.Fields(agg[i+len("flow_count="):])[0]
	}
	return r, o, chs
}

// TestOVNTwoChassisOverGeneve runs runTwoChassis with two gvs-vswitchd
// chassis: every check passes, the megaflows decapsulate with tnl_pop and
// encapsulate with tnl_push carrying OVN's Geneve option, and neither
// ovn-controller logs a warning.
func TestOVNTwoChassisOverGeneve(t *testing.T) {
	t.Parallel()
	requireOVN(t)
	r, o, chs := runTwoChassis(t, gvsChassis(daemonBinary(t)))
	for _, s := range r.steps {
		if !strings.HasSuffix(s, ": ok") {
			t.Error(s)
		}
	}
	if t.Failed() {
		for _, c := range chs {
			t.Logf("dpctl/dump-flows:\n%s", run(t, c.env, "ovs-appctl", "-t", c.target, "dpctl/dump-flows"))
			t.Logf("ovs/route/show:\n%s", run(t, c.env, "ovs-appctl", "-t", c.target, "ovs/route/show"))
		}
	}
	flows := run(t, chs[0].env, "ovs-appctl", "-t", "gvs-vswitchd", "dpctl/dump-flows")
	for _, want := range []string{"actions:tnl_pop(", "tnl_push(tnl_port(", "geneve({class=0x102,type=0x80,len=4,"} {
		if !strings.Contains(flows, want) {
			t.Errorf("hv1's megaflows lack %s:\n%s", want, flows)
		}
	}
	for _, name := range []string{"controller-hv1.log", "controller-hv2.log"} {
		log, _ := os.ReadFile(filepath.Join(o.dir, name))
		if trouble := controllerTrouble(string(log)); len(trouble) > 0 {
			t.Errorf("%s:\n%s", name, strings.Join(trouble, "\n"))
		}
	}
}

// TestOVNTwoChassisSameOnOpenVSwitch runs the two-chassis scenario with
// Open vSwitch (netdev datapath) chassis and with gvs chassis: the checks
// come out the same and ovn-controller installs as many flows.
func TestOVNTwoChassisSameOnOpenVSwitch(t *testing.T) {
	t.Parallel()
	requireOVN(t)
	nstest.RequireBinary(t, "ovs-vswitchd", "openvswitch-switch")
	want, _, _ := runTwoChassis(t, ovsChassis)
	got, _, _ := runTwoChassis(t, gvsChassis(daemonBinary(t)))
	if strings.Join(got.steps, "\n") != strings.Join(want.steps, "\n") {
		t.Errorf("the scenario differs\n--- Open vSwitch (netdev):\n%s\n--- gvs:\n%s",
			strings.Join(want.steps, "\n"), strings.Join(got.steps, "\n"))
	}
	if got.flows == "" || got.flows != want.flows {
		t.Errorf("ovn-controller installed %s flows into Open vSwitch and %s into gvs", want.flows, got.flows)
	}
	t.Logf("both: %d checks, %s flows on hv1", len(got.steps), got.flows)
}
