package tests

import (
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

// TestKernelRoutesUnlessDisableSystemRouteLikeOpenVSwitch: the tunnel
// route table holds the kernel's routes with --disable-system (which
// only disables the kernel datapath type: OVN's system tests route GRE
// mirror and tunnel traffic through a netdev bridge's address that way)
// and none with --disable-system-route; `ovs/route/show` as Open
// vSwitch prints it, each switch in its own namespace with the same
// addresses.
func TestKernelRoutesUnlessDisableSystemRouteLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	nstest.RequireBinary(t, "ovs-vswitchd", "openvswitch-switch")
	routes := func(start chassisSwitch) string {
		c := startSwitchNode(t, start)
		for _, args := range [][]string{
			{"ip", "link", "add", "d0", "type", "veth", "peer", "name", "d1"},
			// No IPv6: its link-local route would come late and differ.
			{"sysctl", "-qw", "net.ipv6.conf.d0.disable_ipv6=1"},
			{"sysctl", "-qw", "net.ipv6.conf.d1.disable_ipv6=1"},
			{"ip", "addr", "add", "10.99.0.1/24", "dev", "d0"},
			{"ip", "link", "set", "d0", "up"},
			{"ip", "link", "set", "d1", "up"},
		} {
			nstest.InNetns(t, c.ns, args...)
		}
		var out string
		waitFor(t, "the route of d0", func() bool {
			out = run(t, c.env, "ovs-appctl", "-t", c.target, "ovs/route/show")
			return strings.Contains(out, "dev d0")
		})
		return out
	}
	for _, flags := range [][]string{{"--disable-system"}, {}} {
		want := routes(ovsChassisWith(flags...))
		got := routes(gvsChassis(daemonBinary(t), flags...))
		if got != want {
			t.Errorf("%v: ovs/route/show\n--- Open vSwitch:\n%s--- gvs:\n%s", flags, want, got)
		}
	}
	// Without kernel routes the table is empty, as Open vSwitch's.
	c := startSwitchNode(t, gvsChassis(daemonBinary(t), "--disable-system", "--disable-system-route"))
	nstest.InNetns(t, c.ns, "ip", "link", "add", "d0", "type", "veth", "peer", "name", "d1")
	nstest.InNetns(t, c.ns, "ip", "addr", "add", "10.99.0.1/24", "dev", "d0")
	nstest.InNetns(t, c.ns, "ip", "link", "set", "d0", "up")
	nstest.InNetns(t, c.ns, "ip", "link", "set", "d1", "up")
	if out := run(t, c.env, "ovs-appctl", "-t", c.target, "ovs/route/show"); out != "Route Table:\n" {
		t.Errorf("with --disable-system-route: %q", out)
	}
}
