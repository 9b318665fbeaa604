package tests

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

// bondEnd is a switch in its own namespace whose bridge br0 (netdev
// datapath, NORMAL) bonds two veth ends with LACP and has the address
// addr on its local port.
type bondEnd struct {
	*chassis
	members [2]string
}

func startBondEnd(t *testing.T, start chassisSwitch, members [2]string, mode, addr string) *bondEnd {
	t.Helper()
	node := startSwitchNode(t, start)
	for _, m := range members {
		nstest.Run(t, "ip", "link", "set", m, "netns", node.ns)
		nstest.InNetns(t, node.ns, "ip", "link", "set", m, "up")
	}
	nstest.InNetns(t, node.ns, "ip", "link", "set", "lo", "up")
	// The members are in the namespace that holds the address: without
	// arp_ignore its kernel answers ARP arriving on a member with the
	// member's MAC, and whichever answer reaches the other end first
	// decides where the pings go.
	nstest.InNetns(t, node.ns, "sysctl", "-q", "-w", "net.ipv4.conf.all.arp_ignore=1")
	run(t, node.env, "ovs-vsctl", "--timeout=30", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev",
		"--", "add-bond", "br0", "bond0", members[0], members[1], "bond_mode="+mode, "lacp=active",
		"other_config:lacp-time=fast", "other_config:bond-rebalance-interval=0")
	nstest.InNetns(t, node.ns, "ip", "addr", "add", addr+"/24", "dev", "br0")
	nstest.InNetns(t, node.ns, "ip", "link", "set", "br0", "up")
	return &bondEnd{chassis: node, members: members}
}

func (e *bondEnd) appctl(args ...string) string {
	c := exec.Command("ovs-appctl", append([]string{"-t", e.target}, args...)...)
	c.Env = e.env
	out, _ := c.CombinedOutput()
	return string(out)
}

// txPackets is the kernel's transmit counter of a member (what the
// switch sent on it).
func (e *bondEnd) txPackets(t *testing.T, m string) int {
	t.Helper()
	s := strings.TrimSpace(nstest.InNetns(t, e.ns, "cat", "/sys/class/net/"+m+"/statistics/tx_packets"))
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("tx_packets of %s: %q", m, s)
	}
	return n
}

// negotiated waits until LACP shows both members current and attached.
func (e *bondEnd) negotiated(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := e.appctl("lacp/show", "bond0")
		ok := strings.Contains(s, "status: active negotiated")
		for _, m := range e.members {
			ok = ok && strings.Contains(s, "member: "+m+": current attached")
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: LACP not negotiated after 20 s:\n%s\n%s", e.target, s, e.appctl("bond/show", "bond0"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// bondCase bonds two veth pairs between switches a and b with LACP
// (mode balance-tcp or balance-slb), and requires: LACP negotiated on
// both, both members enabled, pings across, traffic spread over both
// members (balance-tcp: UDP to 32 ports; balance-slb: four hosts with
// their own MACs behind a), and when one member link goes down the bond
// disables it and traffic carries on over the other.
func bondCase(t *testing.T, mode string, startA, startB chassisSwitch) {
	a1, b1 := nstest.Veth(t)
	a2, b2 := nstest.Veth(t)
	a := startBondEnd(t, startA, [2]string{a1, a2}, mode, "10.77.0.1")
	b := startBondEnd(t, startB, [2]string{b1, b2}, mode, "10.77.0.2")
	a.negotiated(t)
	b.negotiated(t)
	for _, e := range []*bondEnd{a, b} {
		waitFor(t, e.target+" members enabled", func() bool {
			s := e.appctl("bond/show", "bond0")
			return strings.Contains(s, "lacp_status: negotiated\n") &&
				strings.Contains(s, "member "+e.members[0]+": enabled\n") && strings.Contains(s, "member "+e.members[1]+": enabled\n")
		})
	}
	pingAcross(t, a, b)

	// 160 datagrams: to 32 ports (balance-tcp hashes the 5-tuple), or
	// from four hosts with their own MACs (balance-slb hashes the source
	// MAC; these four fall in different buckets, which the bond hands
	// to its members in turn). Each datagram is a new 5-tuple, so a new
	// megaflow: paced, so that right after the failover (megaflows being
	// re-translated) the upcalls keep up with the internal port's queue.
	script := "for p in $(seq 6000 6031); do for i in 1 2 3 4 5; do echo x > /dev/udp/10.77.0.2/$p; sleep 0.002; done; done"
	if mode == "balance-slb" {
		script = ""
		for i, mac := range slbHosts {
			mv := fmt.Sprintf("mv%d", i)
			nstest.InNetns(t, a.ns, "ip", "link", "add", mv, "link", "br0", "address", mac, "type", "macvlan", "mode", "bridge")
			nstest.InNetns(t, a.ns, "ip", "addr", "add", fmt.Sprintf("10.77.0.%d/24", i+11), "dev", mv)
			nstest.InNetns(t, a.ns, "ip", "link", "set", mv, "up")
			// What counts is what the bond sends: replies may come
			// back through br0 (one subnet, several interfaces).
			script += fmt.Sprintf("ping -c 40 -i 0.01 -W 1 -q -I %s 10.77.0.2 >/dev/null || true; ", mv)
		}
	}
	before := [2]int{a.txPackets(t, a1), a.txPackets(t, a2)}
	nstest.InNetns(t, a.ns, "bash", "-c", script)
	sent := [2]int{a.txPackets(t, a1) - before[0], a.txPackets(t, a2) - before[1]}
	t.Logf("%s: %d packets on %s, %d on %s", mode, sent[0], a1, sent[1], a2)
	if sent[0] < 20 || sent[1] < 20 {
		t.Errorf("%s did not spread the traffic over both members: %v\n%s", mode, sent, a.appctl("bond/show", "bond0"))
	}

	// One member link down (both ends lose carrier): the bond carries on
	// over the other.
	nstest.InNetns(t, a.ns, "ip", "link", "set", a1, "down")
	for _, e := range []*bondEnd{a, b} {
		m := e.members[0]
		waitFor(t, e.target+" "+m+" disabled", func() bool {
			return strings.Contains(e.appctl("bond/show", "bond0"), "member "+m+": disabled\n")
		})
	}
	pingAcross(t, a, b)
	// Every megaflow through the bond has been translated again since
	// the failover (the UDP flows' too, not only the ping's).
	a.appctl("revalidator/wait")
	a.appctl("revalidator/wait")
	before = [2]int{a.txPackets(t, a1), a.txPackets(t, a2)}
	nstest.InNetns(t, a.ns, "bash", "-c", script)
	if got := a.txPackets(t, a2) - before[1]; got < 150 {
		t.Errorf("after %s went down, %s carried %d of 160 packets\n%s\n%s", a1, a2, got, a.appctl("bond/show", "bond0"), a.appctl("dpif/show")+a.appctl("upcall/show")+a.appctl("coverage/show"))
	}
	if s := a.appctl("lacp/show", "bond0"); !strings.Contains(s, fmt.Sprintf("member: %s: current attached", a2)) {
		t.Errorf("lacp/show after the link loss:\n%s", s)
	}
	// The active member, now the remaining one, is recorded in
	// Port.bond_active_slave for the next start.
	mac := strings.TrimSpace(nstest.InNetns(t, a.ns, "cat", "/sys/class/net/"+a2+"/address"))
	waitFor(t, "bond_active_slave "+mac, func() bool {
		c := exec.Command("ovs-vsctl", "--timeout=5", "get", "port", "bond0", "bond_active_slave")
		c.Env = a.env
		out, _ := c.Output()
		return strings.Trim(strings.TrimSpace(string(out)), `"`) == mac
	})
}

// TestLACPBondBetweenTwoGVSOverVeths: two gvs-vswitchd bond two veth
// pairs with LACP; see bondCase.
func TestLACPBondBetweenTwoGVSOverVeths(t *testing.T) {
	nstest.Require(t, "tests", "ping", "bash")
	for _, bin := range []string{"ovs-vsctl", "ovs-appctl"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	gvs := gvsChassis(daemonBinary(t))
	for _, mode := range []string{"balance-tcp", "balance-slb"} {
		t.Run(mode, func(t *testing.T) { bondCase(t, mode, gvs, gvs) })
	}
}

// slbHosts are the MACs of the hosts behind a balance-slb bond: their
// buckets (bond/hash in VLAN 0) differ.
var slbHosts = []string{"02:00:00:00:00:01", "02:00:00:00:00:02", "02:00:00:00:00:03", "02:00:00:00:00:04"}

// TestLACPBondInteroperatesWithOpenVSwitch: gvs-vswitchd and Open
// vSwitch's ovs-vswitchd (netdev datapath) bond two veth pairs with
// LACP; see bondCase.
func TestLACPBondInteroperatesWithOpenVSwitch(t *testing.T) {
	nstest.Require(t, "tests", "ping", "bash")
	for _, bin := range []string{"ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server", "ovsdb-tool"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	gvs := gvsChassis(daemonBinary(t))
	for _, mode := range []string{"balance-tcp", "balance-slb"} {
		t.Run(mode, func(t *testing.T) { bondCase(t, mode, gvs, ovsChassis) })
	}
}

// pingAcross pings b's address from a's namespace, once the path
// answers at all (a bond change reaches the megaflows through the
// revalidator, within moments): three echoes, three replies. On failure
// it shows both switches' bonds and megaflows.
func pingAcross(t *testing.T, a, b *bondEnd) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
		if exec.Command("ip", "netns", "exec", a.ns, "ping", "-c", "1", "-W", "1", "10.77.0.2").Run() == nil {
			break
		}
	}
	c := exec.Command("ip", "netns", "exec", a.ns, "ping", "-c", "3", "-i", "0.2", "-W", "2", "10.77.0.2")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("ping: %v\n%s\nA:\n%s%s\nB:\n%s%s", err, out, a.appctl("bond/show"), a.appctl("dpctl/dump-flows"),
			b.appctl("bond/show"), b.appctl("dpctl/dump-flows"))
	}
}
