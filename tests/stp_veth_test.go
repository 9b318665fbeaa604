package tests

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

// stpEnd is a switch in its own namespace whose bridge br0 (netdev
// datapath, NORMAL) has two veth ends as ports, STP on with the fastest
// timers 802.1D allows (hello 1 s, max age 6 s, forward delay 4 s), and
// the address addr on its local port.
func startSTPEnd(t *testing.T, start chassisSwitch, ports [2]string, hwaddr, addr string) *bondEnd {
	t.Helper()
	node := startSwitchNode(t, start)
	for _, m := range ports {
		nstest.Run(t, "ip", "link", "set", m, "netns", node.ns)
		// The kernel sends nothing of its own on the ports (IPv6
		// solicitations, ARP replies for the namespace's address would
		// count as the switch's output).
		nstest.InNetns(t, node.ns, "sysctl", "-qw", "net.ipv6.conf."+m+".disable_ipv6=1")
		nstest.InNetns(t, node.ns, "ip", "link", "set", m, "arp", "off", "up")
	}
	nstest.InNetns(t, node.ns, "ip", "link", "set", "lo", "up")
	run(t, node.env, "ovs-vsctl", "--timeout=30", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev",
		"other_config:hwaddr="+hwaddr, "other_config:stp-hello-time=1000", "other_config:stp-max-age=6",
		"other_config:stp-forward-delay=4", "stp_enable=true",
		"--", "set", "port", "br0", "other_config:stp-enable=false",
		"--", "add-port", "br0", ports[0], "--", "set", "port", ports[0], "other_config:stp-port-num=1",
		"--", "add-port", "br0", ports[1], "--", "set", "port", ports[1], "other_config:stp-port-num=2")
	nstest.InNetns(t, node.ns, "ip", "addr", "add", addr+"/24", "dev", "br0")
	nstest.InNetns(t, node.ns, "ip", "link", "set", "br0", "up")
	return &bondEnd{chassis: node, members: ports}
}

// stpPortLine is a port's row in stp/show, spaces squeezed: "NAME ROLE
// STATE COST PRI.NBR" (stp/show cuts names to 10 characters).
func stpPortLine(show, port string) string {
	port = port[:min(len(port), 10)]
	for _, l := range strings.Split(show, "\n") {
		if f := strings.Fields(l); len(f) == 5 && f[0] == port {
			return strings.Join(f, " ")
		}
	}
	return ""
}

// waitSTP waits until stp/show on e shows port in role and state.
func waitSTP(t *testing.T, e *bondEnd, port, role, state string, limit time.Duration) {
	t.Helper()
	want := port[:min(len(port), 10)] + " " + role + " " + state
	deadline := time.Now().Add(limit)
	for {
		s := e.appctl("stp/show", "br0")
		if strings.HasPrefix(stpPortLine(s, port), want+" ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s not %s %s after %v:\n%s", e.target, port, role, state, limit, s)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestSTPBreaksAVethLoopBetweenTwoGVS: two gvs-vswitchd joined by two
// veth pairs (a loop) run STP. The switch with the lower address is the
// root; the other's first link is its root port and its second blocks
// (alternate): pings cross and nothing goes out of the blocked port.
// When the root port's link goes down, the blocked link takes over.
func TestSTPBreaksAVethLoopBetweenTwoGVS(t *testing.T) {
	nstest.Require(t, "tests", "ping", "bash")
	for _, bin := range []string{"ovs-vsctl", "ovs-appctl"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	gvs := gvsChassis(daemonBinary(t))
	a1, b1 := nstest.Veth(t)
	a2, b2 := nstest.Veth(t)
	a := startSTPEnd(t, gvs, [2]string{a1, a2}, "aa:66:aa:66:00:01", "10.77.0.1")
	b := startSTPEnd(t, gvs, [2]string{b1, b2}, "aa:66:aa:66:00:02", "10.77.0.2")
	// Listening 4 s, learning 4 s, then forwarding.
	waitSTP(t, a, a1, "designated", "forwarding", 20*time.Second)
	waitSTP(t, a, a2, "designated", "forwarding", 20*time.Second)
	waitSTP(t, b, b1, "root", "forwarding", 20*time.Second)
	waitSTP(t, b, b2, "alternate", "blocking", 20*time.Second)
	if s := b.appctl("stp/show", "br0"); !strings.Contains(s, "  root-port       "+b1+"\n  root-path-cost  2\n") {
		t.Errorf("b's stp/show:\n%s", s)
	}
	before := b.txPackets(t, b2)
	pingAcross(t, a, b)
	// Broadcasts flood: none may come back out of the blocked port
	// (the hosts do not answer broadcast pings; the frames are what
	// counts).
	nstest.InNetns(t, a.ns, "bash", "-c", "ping -c 5 -i 0.1 -b -W 1 10.77.0.255 >/dev/null 2>&1 || true")
	if got := b.txPackets(t, b2) - before; got != 0 {
		t.Errorf("the blocked port %s sent %d packets", b2, got)
	}
	// The root port's link goes: the alternate takes over after the
	// forward delay twice.
	nstest.InNetns(t, a.ns, "ip", "link", "set", a1, "down")
	waitSTP(t, b, b2, "root", "forwarding", 20*time.Second)
	pingAcross(t, a, b)
	c := exec.Command("ovs-vsctl", "--timeout=5", "get", "port", b2, "status:stp_role")
	c.Env = b.env
	if out, err := c.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "root" {
		t.Errorf("Port %s status:stp_role: %q %v", b2, out, err)
	}
}
