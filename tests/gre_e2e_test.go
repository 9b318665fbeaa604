package tests

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

// greEnd is one end of a GRE tunnel over a veth underlay: a switch
// daemon in its own namespace with the tunnel address on br-phy's local
// port, br-int holding the GRE port and an internal port moved into a
// namespace of its own as the "VM".
type greEnd struct {
	env    []string
	target string // ovs-appctl -t name of the switch daemon
	vm     string // namespace of the VM port
	vmPort string // its name
}

// appctl runs an ovs-appctl command against the end's switch.
func (e *greEnd) appctl(t *testing.T, args ...string) string {
	t.Helper()
	return run(t, e.env, append([]string{"ovs-appctl", "-t", e.target}, args...)...)
}

// startGREEnd starts a switch with start in a new namespace, moves
// underlay (a veth end in this namespace) into it and configures the
// tunnel: type typ (gre or ip6gre) from local to remote with opts, and
// the VM address vmIP/24.
func startGREEnd(t *testing.T, start chassisSwitch, underlay, local, remote, typ string, opts []string, vmIP string) *greEnd {
	t.Helper()
	return startTunnelEnd(t, start, underlay, local, remote, typ, opts, vmIP, false)
}

// startTunnelEnd is startGREEnd; with normal, br-int keeps its default
// NORMAL flow instead of the explicit forwarding.
func startTunnelEnd(t *testing.T, start chassisSwitch, underlay, local, remote, typ string, opts []string, vmIP string, normal bool) *greEnd {
	t.Helper()
	node := startSwitchNode(t, start)
	prefix := "/24"
	if strings.Contains(local, ":") {
		prefix = "/64"
	}
	node.underlay(t, underlay, "", local+prefix)
	env := node.env
	vsctl := func(args ...string) { run(t, env, append([]string{"ovs-vsctl", "--timeout=30"}, args...)...) }
	vm := "vm" + nstest.Suffix()[:6]
	vsctl(append([]string{"add-br", "br-int", "--", "set", "bridge", "br-int", "datapath_type=netdev",
		"--", "add-port", "br-int", "t1", "--", "set", "interface", "t1", "type=" + typ, "options:remote_ip=" + remote, "ofport_request=1"},
		append(opts, "--", "add-port", "br-int", vm, "--", "set", "interface", vm, "type=internal", "ofport_request=2")...)...)
	if !normal {
		run(t, env, "ovs-ofctl", "--timeout=30", "del-flows", "br-int")
		run(t, env, "ovs-ofctl", "--timeout=30", "add-flow", "br-int", "in_port=1,actions=2")
		run(t, env, "ovs-ofctl", "--timeout=30", "add-flow", "br-int", "in_port=2,actions=1")
	}
	vmNS := nstest.Netns(t)
	nstest.InNetns(t, node.ns, "ip", "link", "set", vm, "netns", vmNS)
	ex := func(args ...string) { nstest.InNetns(t, vmNS, args...) }
	ex("ip", "link", "set", vm, "mtu", "1400")
	ex("ip", "addr", "add", vmIP+"/24", "dev", vm)
	ex("ip", "link", "set", vm, "up")
	ex("ip", "link", "set", "lo", "up")
	return &greEnd{env: env, target: node.target, vm: vmNS, vmPort: vm}
}

// TestGREInteroperatesWithOpenVSwitch joins a gvs-vswitchd and an Open
// vSwitch (userspace netdev datapath) by GRE tunnels over a veth — Open
// vSwitch's own GRE code as the independent peer (this machine's kernel
// has no GRE driver) — and pings between the VMs both ways: with a key,
// with a key and GRE checksums, with sequence numbers, keyless, and over
// IPv6 (ip6gre with a key). A ping crossing means both ends built
// headers the other accepted (checksum verified, key matched to the
// port) and resolved each other's MAC through the tunnel bridges. A last
// case joins two gvs switches with checksums and sequence numbers
// together, which Open vSwitch cannot peer with (its checksum misses the
// sequence number).
func TestGREInteroperatesWithOpenVSwitch(t *testing.T) {
	t.Parallel()
	nstest.Require(t, "tests", "ping")
	for _, bin := range []string{"ovs-vsctl", "ovs-vswitchd", "ovsdb-server", "ovsdb-tool"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	gvs := gvsChassis(daemonBinary(t))
	for _, c := range []struct {
		name, typ, gvsIP, ovsIP string
		gvsOpts, ovsOpts        []string
		gvsPeer                 bool // the peer is gvs too
	}{
		{"key", "gre", "172.31.7.1", "172.31.7.2", []string{"options:key=5"}, []string{"options:key=5"}, false},
		{"key and checksums", "gre", "172.31.7.1", "172.31.7.2",
			[]string{"options:key=0xfedcba98", "options:csum=true"}, []string{"options:key=0xfedcba98", "options:csum=true"}, false},
		// Open vSwitch sums before writing the sequence number, so
		// checksums and sequence numbers are not combined here.
		{"sequence numbers", "gre", "172.31.7.1", "172.31.7.2",
			[]string{"options:seq=true", "options:in_key=7", "options:out_key=8"}, []string{"options:seq=true", "options:in_key=8", "options:out_key=7"}, false},
		{"keyless", "gre", "172.31.7.1", "172.31.7.2", nil, nil, false},
		{"ip6gre", "ip6gre", "fc00:31::1", "fc00:31::2", []string{"options:key=6"}, []string{"options:key=6"}, false},
		// gvs's checksum covers the sequence number: gvs to gvs, both.
		{"gvs to gvs with checksums and sequence numbers", "gre", "172.31.7.1", "172.31.7.2",
			[]string{"options:key=9", "options:csum=true", "options:seq=true"}, []string{"options:key=9", "options:csum=true", "options:seq=true"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := nstest.Veth(t)
			g := startGREEnd(t, gvs, a, c.gvsIP, c.ovsIP, c.typ, c.gvsOpts, "10.31.0.1")
			peer, target := ovsChassis, "ovs-vswitchd"
			if c.gvsPeer {
				peer, target = gvs, "gvs-vswitchd"
			}
			o := startGREEnd(t, peer, b, c.ovsIP, c.gvsIP, c.typ, c.ovsOpts, "10.31.0.2")
			// The first packets also resolve the underlay neighbours.
			ok := false
			for i := 0; i < 4 && !ok; i++ {
				ok = ping(g.vm, "10.31.0.2")
			}
			if !ok {
				for _, e := range []struct {
					name   string
					env    []string
					target string
				}{{"gvs", g.env, "gvs-vswitchd"}, {"peer", o.env, target}} {
					for _, cmd := range []string{"dpctl/dump-flows", "tnl/neigh/show", "ovs/route/show", "tnl/ports/show", "dpif/show"} {
						out, _ := runQuiet(e.env, "ovs-appctl", "-t", e.target, cmd)
						t.Logf("%s %s:\n%s", e.name, cmd, out)
					}
				}
				t.Fatalf("no ping from the gvs side to the Open vSwitch side over %s", c.name)
			}
			// Several, so that sequence numbers past 0 are checked.
			for i := 0; i < 3; i++ {
				if !ping(o.vm, "10.31.0.1") {
					t.Errorf("no ping from the peer to the gvs side over %s", c.name)
				}
			}
			flows := run(t, g.env, "ovs-appctl", "-t", "gvs-vswitchd", "dpctl/dump-flows")
			for _, want := range []string{"tnl_pop(", "tnl_push(tnl_port(", "proto=47"} {
				if !strings.Contains(flows, want) {
					t.Errorf("gvs's megaflows have no %s:\n%s", want, flows)
				}
			}
		})
	}
}

// runQuiet runs a command and returns its combined output, for
// diagnostics.
func runQuiet(env []string, args ...string) (string, error) {
	c := exec.Command(args[0], args[1:]...)
	c.Env = env
	b, err := c.CombinedOutput()
	return string(b), err
}

// TestTunnelMegaflowsFollowRouteChangesLikeOpenVSwitch sends a VM's
// packets into a GRE port whose remote has no route (translation drops
// them, and the drop is cached as a megaflow), then adds the route with
// ovs/route/add. A route change re-translates the cached megaflows (Open
// vSwitch bumps tnl_conf_seq): the next packet resolves the route's next
// hop, whose kernel answers the ARP request, so the switch's neighbour
// cache learns it. Before, gvs kept the drop megaflow until it idled out.
func TestTunnelMegaflowsFollowRouteChangesLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	eachSwitch(t, func(t *testing.T, start chassisSwitch) {
		a, b := nstest.Veth(t)
		g := startGREEnd(t, start, a, "172.31.11.1", "10.99.0.2", "gre", nil, "10.31.0.1")
		kernelHop(t, b, "172.31.11.2/24")
		ping(g.vm, "10.31.0.2")
		if flows := g.appctl(t, "dpctl/dump-flows"); !strings.Contains(flows, "actions:drop") {
			t.Fatalf("no drop megaflow while the remote has no route:\n%s", flows)
		}
		g.appctl(t, "ovs/route/add", "10.99.0.2/32", "br-phy", "172.31.11.2")
		g.waitNeighbor(t, "172.31.11.2")
	})
}

// eachSwitch runs f as a parallel subtest with gvs and with Open vSwitch
// as the switch daemon (a chassisSwitch for startSwitchNode), after
// checking for the binaries both need.
func eachSwitch(t *testing.T, f func(t *testing.T, start chassisSwitch)) {
	t.Helper()
	nstest.Require(t, "tests", "ping")
	for _, bin := range []string{"ovs-vsctl", "ovs-ofctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server", "ovsdb-tool"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	for _, sw := range []struct {
		name  string
		start chassisSwitch
	}{{"gvs", gvsChassis(daemonBinary(t))}, {"Open vSwitch", ovsChassis}} {
		t.Run(sw.name, func(t *testing.T) {
			t.Parallel()
			f(t, sw.start)
		})
	}
}

// kernelHop moves link (a veth end in this namespace) into a namespace
// of its own with address cidr: a host whose kernel answers ARP and
// neighbour solicitations for it.
func kernelHop(t *testing.T, link, cidr string) {
	t.Helper()
	ns := nstest.Netns(t)
	nstest.Run(t, "ip", "link", "set", link, "netns", ns)
	if strings.Contains(cidr, ":") {
		nstest.InNetns(t, ns, "ip", "addr", "add", cidr, "dev", link, "nodad")
	} else {
		nstest.InNetns(t, ns, "ip", "addr", "add", cidr, "dev", link)
	}
	nstest.InNetns(t, ns, "ip", "link", "set", link, "up")
}

// waitNeighbor sends the VM's packets into the tunnel until the switch's
// tunnel neighbour cache has ip (ten tries).
func (e *greEnd) waitNeighbor(t *testing.T, ip string) {
	t.Helper()
	for i := 0; i < 10; i++ {
		ping(e.vm, "10.31.0.2")
		if strings.Contains(e.appctl(t, "tnl/neigh/show"), ip) {
			return
		}
	}
	t.Fatalf("the tunnel's next hop %s was never resolved:\n%s\n%s", ip, e.appctl(t, "tnl/neigh/show"), e.appctl(t, "dpctl/dump-flows"))
}

// TestNormalForwardsThroughTunnelsLikeOpenVSwitch joins a gvs-vswitchd
// and an Open vSwitch by a VXLAN tunnel with only NORMAL on both br-int
// bridges: the VMs' ARP requests are flooded into the tunnel, the
// replies learned on it, and pings cross both ways. Each switch's MAC
// table then has the other VM's MAC on the tunnel port (OpenFlow port 1).
func TestNormalForwardsThroughTunnelsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	nstest.Require(t, "tests", "ping")
	for _, bin := range []string{"ovs-vsctl", "ovs-vswitchd", "ovsdb-server", "ovsdb-tool", "ovs-appctl"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	a, b := nstest.Veth(t)
	g := startTunnelEnd(t, gvsChassis(daemonBinary(t)), a, "172.31.12.1", "172.31.12.2", "vxlan", []string{"options:key=12"}, "10.32.0.1", true)
	o := startTunnelEnd(t, ovsChassis, b, "172.31.12.2", "172.31.12.1", "vxlan", []string{"options:key=12"}, "10.32.0.2", true)
	ok := false
	for i := 0; i < 4 && !ok; i++ { // the first packets resolve the underlay
		ok = ping(g.vm, "10.32.0.2")
	}
	if !ok {
		t.Fatalf("no ping from the gvs side through NORMAL and the tunnel:\n%s", run(t, g.env, "ovs-appctl", "-t", "gvs-vswitchd", "dpctl/dump-flows"))
	}
	if !ping(o.vm, "10.32.0.1") {
		t.Fatal("no ping from the Open vSwitch side through NORMAL and the tunnel")
	}
	for _, e := range []struct {
		name      string
		end, peer *greEnd
	}{{"gvs", g, o}, {"Open vSwitch", o, g}} {
		mac := strings.TrimSpace(nstest.InNetns(t, e.peer.vm, "cat", "/sys/class/net/"+e.peer.vmPort+"/address"))
		fdb := e.end.appctl(t, "fdb/show", "br-int")
		if !regexp.MustCompile(`(?m)^\s+1\s+0\s+` + regexp.QuoteMeta(mac) + `\s`).MatchString(fdb) {
			t.Errorf("%s: the peer VM's MAC %s is not learned on the tunnel port:\n%s", e.name, mac, fdb)
		}
	}
}

// TestTunnelNeighborLearnedFromAdvertisementLikeOpenVSwitch sends a VM's
// packets into an ip6gre port whose remote is the underlay neighbour: a
// kernel in its own namespace that answers the switch's neighbour
// solicitation with an advertisement. The switch snoops it into its
// tunnel neighbour cache (no tunnel packet ever comes back to teach it).
func TestTunnelNeighborLearnedFromAdvertisementLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	eachSwitch(t, func(t *testing.T, start chassisSwitch) {
		a, b := nstest.Veth(t)
		g := startGREEnd(t, start, a, "fc00:33::1", "fc00:33::2", "ip6gre", nil, "10.31.0.1")
		kernelHop(t, b, "fc00:33::2/64")
		g.waitNeighbor(t, "fc00:33::2")
	})
}
