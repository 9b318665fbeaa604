package tests

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

// ethtoolOff turns TSO, GSO and transmit checksum offload off on the
// interface named by argv[1] (SIOCETHTOOL with ETHTOOL_STSO, ETHTOOL_SGSO
// and ETHTOOL_STXCSUM), as Open vSwitch's userspace system tests do
// (`ethtool -K ... tx off`): its netdev datapath does not complete
// partial checksums.
const ethtoolOff = `
import fcntl, socket, struct, sys, array
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for cmd in (0x1f, 0x24, 0x17):
    buf = array.array('B', struct.pack('II', cmd, 0))
    ifr = struct.pack('16sP', sys.argv[1].encode(), buf.buffer_info()[0])
    fcntl.ioctl(s.fileno(), 0x8946, ifr)
`

// nsPort is a namespace with one veth end in it, the other end a gvs
// system (AF_PACKET) port.
type nsPort struct{ ns, ip string }

func vethPort(t *testing.T, vsctl func(...string) string, port, ip string, ofport int) nsPort {
	t.Helper()
	ns := nstest.Netns(t)
	a, b := nstest.Veth(t)
	nstest.Run(t, "ip", "link", "set", b, "netns", ns)
	ex := func(args ...string) { nstest.Run(t, append([]string{"ip", "netns", "exec", ns}, args...)...) }
	// As with Open vSwitch's userspace datapath, the kernel must hand
	// frames of at most the MTU to AF_PACKET: no TSO/GSO on the sending
	// side (the classic `ethtool -K veth tso off gso off`, here through
	// the ethtool ioctl since ethtool may not be installed).
	ex("python3", "-c", ethtoolOff, b)
	ex("ip", "addr", "add", ip+"/24", "dev", b)
	ex("ip", "link", "set", b, "up")
	ex("ip", "link", "set", "lo", "up")
	vsctl("add-port", "br0", a, "--", "set", "interface", a, fmt.Sprintf("ofport_request=%d", ofport))
	return nsPort{ns: ns, ip: ip}
}

// secureBridge starts gvs-vswitchd with br0 (fail_mode secure) for tests
// with veth ports in namespaces, and returns its environment and an
// ovs-vsctl runner.
func secureBridge(t *testing.T) ([]string, func(...string) string) {
	t.Helper()
	nstest.Require(t, "tests", "python3")
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
	_, env := startDaemon(t)
	vsctl := func(args ...string) string {
		return run(t, env, append([]string{"ovs-vsctl", "--timeout=20"}, args...)...)
	}
	vsctl("init")
	vsctl("add-br", "br0", "--", "set", "bridge", "br0", "fail_mode=secure")
	return env, vsctl
}

// TestStatefulFirewallOverVeths is a conntrack firewall on real ports:
// two namespaces joined by gvs system ports, OpenFlow ct() flows that let
// connections from the first namespace out and their replies back, and
// drop new connections from the second. A TCP transfer one way works;
// the other way is refused by the firewall; the conntrack table lists
// the connection in its zone.
func TestStatefulFirewallOverVeths(t *testing.T) {
	parallelHolding(t, &br0Devices)
	env, vsctl := secureBridge(t)
	inside := vethPort(t, vsctl, "in", "10.9.0.1", 1)
	outside := vethPort(t, vsctl, "out", "10.9.0.2", 2)
	for _, f := range []string{
		"table=0,priority=100,arp,actions=NORMAL",
		"table=0,priority=50,ip,ct_state=-trk,actions=ct(table=1,zone=9)",
		"table=1,priority=100,ip,in_port=1,ct_state=+trk+new,actions=ct(commit,zone=9),output:2",
		"table=1,priority=100,ip,ct_state=+trk+est,in_port=1,actions=output:2",
		"table=1,priority=100,ip,ct_state=+trk+est,in_port=2,actions=output:1",
		"table=1,priority=1,actions=drop",
	} {
		run(t, env, "ovs-ofctl", "add-flow", "br0", f)
	}
	if got := tcpTransfer(t, inside.ns, outside.ns, outside.ip, 5001, 2<<20); got != "got 2097152" {
		t.Fatalf("inside -> outside TCP through the firewall: %s", got)
	}
	if got := tcpTransfer(t, outside.ns, inside.ns, inside.ip, 5002, 1000); strings.HasPrefix(got, "got") {
		t.Fatalf("outside -> inside new connection passed the firewall: %s", got)
	}
	ct := run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "dpctl/dump-conntrack", "zone=9")
	if !strings.Contains(ct, "tcp,orig=(src=10.9.0.1,dst=10.9.0.2") || !strings.Contains(ct, "dport=5001") {
		t.Fatalf("conntrack zone 9 lacks the committed connection:\n%s", ct)
	}
	if out, _ := exec.Command("ip", "netns", "exec", outside.ns, "ping", "-c", "1", "-W", "1", inside.ip).CombinedOutput(); strings.Contains(string(out), " 0% packet loss") {
		t.Fatalf("outside pinged inside through the firewall")
	}
}
