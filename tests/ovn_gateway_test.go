package tests

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

// peerAddr connects from ns to ip:port, where a server in srvNS answers
// with the address it sees the connection come from.
func peerAddr(t *testing.T, ns, srvNS, ip string, port int) string {
	t.Helper()
	srv := exec.Command("ip", "netns", "exec", srvNS, "python3", "-c", fmt.Sprintf(`
import socket
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('0.0.0.0',%d)); s.listen(1); s.settimeout(20)
c,a=s.accept(); c.sendall(a[0].encode()); c.close()`, port))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	time.Sleep(300 * time.Millisecond)
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
	o := startOVN(t)
	o.vsctl("add-br", "br-ex", "--", "set", "bridge", "br-ex", "datapath_type=netdev")
	o.vsctl("set", "open", ".", "external_ids:ovn-bridge-mappings=physnet:br-ex")
	ext := nstest.Netns(t)
	a, b := nstest.Veth(t)
	nstest.Run(t, "ip", "link", "set", b, "netns", ext)
	ex := func(args ...string) { nstest.InNetns(t, ext, args...) }
	ex("python3", "-c", ethtoolOff, b)
	ex("ip", "addr", "add", "172.16.0.100/24", "dev", b)
	ex("ip", "link", "set", b, "up")
	ex("ip", "link", "set", "lo", "up")
	o.vsctl("add-port", "br-ex", a)

	o.nbctl("ls-add", "sw0")
	o.nbctl("lsp-add", "sw0", "vm1", "--", "lsp-set-addresses", "vm1", "50:54:00:00:00:01 10.0.0.1")
	o.nbctl("lsp-add", "sw0", "vm2", "--", "lsp-set-addresses", "vm2", "50:54:00:00:00:02 10.0.0.2")
	o.nbctl("lr-add", "gw0", "--", "set", "logical_router", "gw0", "options:chassis=hv1")
	o.nbctl("lrp-add", "gw0", "gw0-sw0", "00:00:00:00:ff:01", "10.0.0.254/24")
	o.nbctl("lsp-add", "sw0", "sw0-gw0", "--", "lsp-set-type", "sw0-gw0", "router", "--", "lsp-set-addresses", "sw0-gw0", "router",
		"--", "lsp-set-options", "sw0-gw0", "router-port=gw0-sw0")
	o.nbctl("lrp-add", "gw0", "gw0-public", "00:00:00:00:ff:02", "172.16.0.1/24")
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
	o.nbctl("--wait=hv", "sync")

	// ovn-controller patches br-int to br-ex for the localnet port.
	waitFor(t, "the localnet patch port on br-ex", func() bool {
		return strings.Contains(o.vsctl("list-ports", "br-ex"), "patch-")
	})
	if !ping(ns1, "172.16.0.100") {
		t.Logf("dpctl/dump-flows:\n%s", run(t, o.gvsEnv, "ovs-appctl", "-t", "gvs-vswitchd", "dpctl/dump-flows"))
		t.Fatalf("vm1 cannot reach the external host through the gateway router")
	}
	if got := peerAddr(t, ns1, ext, "172.16.0.100", 8081); got != "172.16.0.1" {
		t.Errorf("vm1's connection reached the external host from %q, want the SNAT address 172.16.0.1", got)
	}
	if got := peerAddr(t, ns2, ext, "172.16.0.100", 8082); got != "172.16.0.50" {
		t.Errorf("vm2's connection reached the external host from %q, want its floating IP 172.16.0.50", got)
	}
	if got := peerAddr(t, ext, ns2, "172.16.0.50", 8083); got != "172.16.0.100" {
		t.Errorf("the external host's connection to the floating IP: %q, want vm2 to see 172.16.0.100", got)
	}
	if got := tcpTransfer(t, ext, ns2, "172.16.0.50", 8084, 1<<20); got != "got 1048576" {
		t.Errorf("1 MB from the external host to the floating IP: %s", got)
	}
}
