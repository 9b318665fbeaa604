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
	ns  string
	env []string // ovs-vsctl/ovs-appctl environment (OVS_RUNDIR)
}

// startChassis runs gvs-vswitchd in a new namespace, gives br-phy the
// tunnel address ip/24 and the underlay link (already in the namespace),
// and starts ovn-controller for it.
func startChassis(t *testing.T, o *ovnCluster, bin, name, ip, underlay, srcNS string) *chassis {
	t.Helper()
	ns := nstest.Netns(t)
	dir := t.TempDir()
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
	cmd := exec.Command("ip", "netns", "exec", ns, bin, "--log-file="+filepath.Join(dir, "gvs-vswitchd.log"),
		"--pidfile="+filepath.Join(dir, "gvs-vswitchd.pid"))
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
				t.Logf("%s gvs-vswitchd.log (tail):\n%s", name, b)
			}
		}
	})
	waitFor(t, name+" gvs-vswitchd database", func() bool {
		_, err := os.Stat(filepath.Join(dir, "db.sock"))
		return err == nil
	})
	c := &chassis{ns: ns, env: env}
	in := func(args ...string) { nstest.InNetns(t, ns, args...) }
	if srcNS == "" {
		nstest.Run(t, "ip", "link", "set", underlay, "netns", ns)
	} else {
		nstest.InNetns(t, srcNS, "ip", "link", "set", underlay, "netns", ns)
	}
	in("ip", "link", "set", "lo", "up")
	in("ip", "link", "set", underlay, "up")
	run(t, env, "ovs-vsctl", "--timeout=30", "add-br", "br-phy", "--", "set", "bridge", "br-phy", "datapath_type=netdev",
		"--", "add-port", "br-phy", underlay)
	in("ip", "addr", "add", ip+"/24", "dev", "br-phy")
	in("ip", "link", "set", "br-phy", "up")
	o.startController(env, name, ip, "netdev", "controller-"+name)
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

// TestOVNTwoChassisOverGeneve runs two gvs-vswitchd chassis, each in its
// own namespace with its tunnel endpoint on br-phy and a veth between
// them, under one OVN: ovn-controller creates Geneve tunnel ports, and
// VIFs on different chassis ping each other and move 1 MB over TCP
// through the tunnel; the tunnel vports count the packets both ways and
// neither ovn-controller logs a warning.
func TestOVNTwoChassisOverGeneve(t *testing.T) {
	requireOVN(t)
	bin := daemonBinary(t)
	a, b := nstest.Veth(t)
	o := startOVNCentral(t, nil)
	hv1 := startChassis(t, o, bin, "hv1", "172.31.0.1", a, "")
	hv2 := startChassis(t, o, bin, "hv2", "172.31.0.2", b, "")

	o.nbctl("ls-add", "sw0")
	o.nbctl("lsp-add", "sw0", "vm1", "--", "lsp-set-addresses", "vm1", "50:54:00:00:00:01 10.0.0.1")
	o.nbctl("lsp-add", "sw0", "vm2", "--", "lsp-set-addresses", "vm2", "50:54:00:00:00:02 10.0.0.2")
	ns1 := hv1.vif(t, "vm1", "50:54:00:00:00:01", "10.0.0.1/24")
	ns2 := hv2.vif(t, "vm2", "50:54:00:00:00:02", "10.0.0.2/24")
	o.nbctl("--wait=hv", "sync")

	// Each chassis has a Geneve port to the other.
	for _, c := range []struct {
		ch     *chassis
		remote string
	}{{hv1, "172.31.0.2"}, {hv2, "172.31.0.1"}} {
		waitFor(t, "tunnel port to "+c.remote, func() bool {
			out := run(t, c.ch.env, "ovs-vsctl", "--timeout=30", "--bare", "--columns=options", "find", "interface", "type=geneve")
			return strings.Contains(out, "remote_ip="+c.remote)
		})
	}
	if !ping(ns1, "10.0.0.2") {
		for _, c := range []*chassis{hv1, hv2} {
			t.Logf("dpctl/dump-flows:\n%s", run(t, c.env, "ovs-appctl", "-t", "gvs-vswitchd", "dpctl/dump-flows"))
			t.Logf("tnl/neigh/show:\n%s", run(t, c.env, "ovs-appctl", "-t", "gvs-vswitchd", "tnl/neigh/show"))
			t.Logf("ovs/route/show:\n%s", run(t, c.env, "ovs-appctl", "-t", "gvs-vswitchd", "ovs/route/show"))
		}
		t.Fatalf("vm1 on hv1 cannot ping vm2 on hv2 through the Geneve tunnel")
	}
	if got := tcpTransfer(t, ns2, ns1, "10.0.0.1", 8080, 1<<20); got != "got 1048576" {
		t.Fatalf("TCP from hv2 to hv1 over Geneve: %s", got)
	}
	// The neighbour cache learned the other endpoint by ARP.
	for _, c := range []struct {
		ch     *chassis
		remote string
	}{{hv1, "172.31.0.2"}, {hv2, "172.31.0.1"}} {
		if out := run(t, c.ch.env, "ovs-appctl", "-t", "gvs-vswitchd", "tnl/neigh/show"); !strings.Contains(out, c.remote) {
			t.Errorf("tnl/neigh/show lacks %s:\n%s", c.remote, out)
		}
	}
	// Datapath flows decapsulate (tnl_pop) and encapsulate (tnl_push).
	flows := run(t, hv1.env, "ovs-appctl", "-t", "gvs-vswitchd", "dpctl/dump-flows")
	for _, want := range []string{"actions:tnl_pop(", "tnl_push(tnl_port(", "geneve({class=0x102,type=0x80,len=4,"} {
		if !strings.Contains(flows, want) {
			t.Errorf("hv1's megaflows lack %s:\n%s", want, flows)
		}
	}
	for _, name := range []string{"controller-hv1.log", "controller-hv2.log"} {
		log, _ := os.ReadFile(filepath.Join(o.dir, name))
		var trouble []string
		for _, l := range ovnControllerTrouble.FindAllString(string(log), -1) {
			if strings.Contains(l, "vif_plug_provider") || strings.Contains(l, "br-int.mgmt: connection failed (No such file or directory)") {
				continue
			}
			trouble = append(trouble, l)
		}
		if len(trouble) > 0 {
			t.Errorf("%s:\n%s", name, strings.Join(trouble, "\n"))
		}
	}
}
