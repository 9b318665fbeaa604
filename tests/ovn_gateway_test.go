package tests

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

// peerAddr connects from ns to ip:port, where a server in srvNS answers
// with the address it sees the connection come from.
func peerAddr(t *testing.T, ns, srvNS, ip string, port int) string {
	t.Helper()
	srv := startListener(t, srvNS, fmt.Sprintf(`
import socket
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('0.0.0.0',%d)); s.listen(1); s.settimeout(20)
`+listening+`
c,a=s.accept(); c.sendall(a[0].encode()); c.close()`, port), nil, nil)
	defer func() { srv.Process.Kill(); srv.Wait() }()
	out, err := exec.Command("ip", "netns", "exec", ns, "python3", "-c", fmt.Sprintf(`
import socket
s=socket.create_connection(('%s',%d),timeout=10); print(s.recv(100).decode())`, ip, port)).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("error: %v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestOVNGatewayRouterSNATAndFloatingIP connects a logical switch to a
// provider network through a gateway router on this chassis: the public
// logical switch has a localnet port mapped (ovn-bridge-mappings) to
// br-ex, a NORMAL bridge with a veth into an "external" namespace. vm1's
// connections leave SNATed to the router's address; vm2 has a floating IP
// (dnat_and_snat): its connections leave as the floating IP and the
// external host reaches it through that address.
func TestOVNGatewayRouterSNATAndFloatingIP(t *testing.T) {
	parallelHolding(t, &brIntDevices)
	requireOVN(t)
	r, _ := onGvs(t, gatewayOVNScenario, runGatewayScenario)
	for _, s := range r.steps {
		if !strings.HasSuffix(s, ": ok") {
			t.Error(s)
		}
	}
}

// runGatewayScenario builds the gateway router topology on the switch
// behind o and checks SNAT and the floating IP with traffic.
func runGatewayScenario(t *testing.T, o *ovnCluster) ovnScenario {
	var r ovnScenario
	o.vsctl("add-br", "br-ex", "--", "set", "bridge", "br-ex", "datapath_type=netdev")
	o.vsctl("set", "open", ".", "external_ids:ovn-bridge-mappings=physnet:br-ex")
	ext := nstest.Netns(t)
	a, b := nstest.Veth(t)
	nstest.Run(t, "ip", "link", "set", b, "netns", ext)
	ex := func(args ...string) { nstest.InNetns(t, ext, args...) }
	ex("python3", "-c", ethtoolOff, b)
	ex("ip", "addr", "add", "172.16.0.100/24", "dev", b)
	ex("ip", "addr", "add", "fd16::100/64", "dev", b, "nodad")
	ex("ip", "link", "set", b, "up")
	ex("ip", "link", "set", "lo", "up")
	o.vsctl("add-port", "br-ex", a)

	o.nbctl("ls-add", "sw0")
	o.nbctl("lsp-add", "sw0", "vm1", "--", "lsp-set-addresses", "vm1", "50:54:00:00:00:01 10.0.0.1 fd00::1")
	o.nbctl("lsp-add", "sw0", "vm2", "--", "lsp-set-addresses", "vm2", "50:54:00:00:00:02 10.0.0.2")
	o.nbctl("lr-add", "gw0", "--", "set", "logical_router", "gw0", "options:chassis=hv1")
	o.nbctl("lrp-add", "gw0", "gw0-sw0", "00:00:00:00:ff:01", "10.0.0.254/24", "fd00::fe/64")
	o.nbctl("lsp-add", "sw0", "sw0-gw0", "--", "lsp-set-type", "sw0-gw0", "router", "--", "lsp-set-addresses", "sw0-gw0", "router",
		"--", "lsp-set-options", "sw0-gw0", "router-port=gw0-sw0")
	o.nbctl("lrp-add", "gw0", "gw0-public", "00:00:00:00:ff:02", "172.16.0.1/24", "fd16::1/64")
	o.nbctl("ls-add", "public")
	o.nbctl("lsp-add", "public", "public-gw0", "--", "lsp-set-type", "public-gw0", "router", "--", "lsp-set-addresses", "public-gw0", "router",
		"--", "lsp-set-options", "public-gw0", "router-port=gw0-public")
	o.nbctl("lsp-add", "public", "ln-public", "--", "lsp-set-type", "ln-public", "localnet", "--", "lsp-set-addresses", "ln-public", "unknown",
		"--", "lsp-set-options", "ln-public", "network_name=physnet")
	o.nbctl("lr-nat-add", "gw0", "snat", "172.16.0.1", "10.0.0.0/24")
	o.nbctl("lr-nat-add", "gw0", "dnat_and_snat", "172.16.0.50", "10.0.0.2")
	ns1 := o.vif("vm1", "50:54:00:00:00:01", "10.0.0.1/24", "10.0.0.254")
	ns2 := o.vif("vm2", "50:54:00:00:00:02", "10.0.0.2/24", "10.0.0.254")
	ex("ip", "route", "add", "10.0.0.0/24", "via", "172.16.0.1")
	ex("ip", "-6", "route", "add", "fd00::/64", "via", "fd16::1")
	nstest.InNetns(t, ns1, "ip", "addr", "add", "fd00::1/64", "dev", "vm1", "nodad")
	nstest.InNetns(t, ns1, "ip", "-6", "route", "add", "default", "via", "fd00::fe")
	o.nbctl("--wait=hv", "sync")

	// ovn-controller patches br-int to br-ex for the localnet port.
	waitFor(t, "the localnet patch port on br-ex", func() bool {
		return strings.Contains(o.vsctl("list-ports", "br-ex"), "patch-")
	})
	r.check("vm1 reaches the external host", ping(ns1, "172.16.0.100"), "")
	// The router resolves the external host's IPv6 address with a
	// neighbour solicitation from ovn-controller (nd_ns, put_nd).
	// The MAC binding takes a round trip through the southbound database:
	// give it a few more tries than an ARP-resolved ping.
	ok6 := false
	for i := 0; i < 4 && !ok6; i++ {
		ok6 = ping(ns1, "fd16::100")
	}
	r.check("vm1 reaches the external host over IPv6 (router ND resolution)", ok6, "")
	got := peerAddr(t, ns1, ext, "172.16.0.100", 8081)
	r.check("vm1's connection leaves SNATed to 172.16.0.1", got == "172.16.0.1", got)
	got = peerAddr(t, ns2, ext, "172.16.0.100", 8082)
	r.check("vm2's connection leaves as its floating IP 172.16.0.50", got == "172.16.0.50", got)
	got = peerAddr(t, ext, ns2, "172.16.0.50", 8083)
	r.check("the external host reaches vm2 through its floating IP", got == "172.16.0.100", got)
	got = tcpTransfer(t, ext, ns2, "172.16.0.50", 8084, 1<<20)
	r.check("1 MB from the external host to the floating IP", got == "got 1048576", got)
	agg := run(t, o.gvsEnv, "ovs-ofctl", "-O", "OpenFlow15", "--timeout=20", "dump-aggregate", "br-int")
	if i := strings.Index(agg, "flow_count="); i >= 0 {
		r.flows = strings.Fields(agg[i+len("flow_count="):])[0]
	}
	return r
}
