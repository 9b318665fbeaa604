package tests

import (
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

// TestPeerBridgeFlowChangeRetranslatesMegaflowsLikeOpenVSwitch joins two
// bridges by patch ports and hosts on a port of each. Packets from the
// first host cross into the second bridge, whose table first drops them:
// the megaflow, kept by the first bridge (the packet entered there),
// drops. Adding the second bridge's flow must re-translate it, as Open
// vSwitch revalidates the whole datapath after any bridge's change: the
// ping right after ovs-ofctl add-flow returns gets through. gvs kept the
// drop while only the second bridge changed (OVN's localnet traffic
// crossing br-ex into br-int lost packets after a MAC binding arrived).
func TestPeerBridgeFlowChangeRetranslatesMegaflowsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	eachSwitch(t, func(t *testing.T, start chassisSwitch) {
		node := startSwitchNode(t, start)
		hosts := [2]string{nstest.Netns(t), nstest.Netns(t)}
		var ports [2]string
		for i, h := range hosts {
			a, b := nstest.Veth(t)
			nstest.Run(t, "ip", "link", "set", a, "netns", node.ns)
			nstest.InNetns(t, node.ns, "ip", "link", "set", a, "up")
			nstest.Run(t, "ip", "link", "set", b, "netns", h)
			nstest.InNetns(t, h, "ip", "addr", "add", []string{"10.33.0.1/24", "10.33.0.2/24"}[i], "dev", b)
			nstest.InNetns(t, h, "ip", "link", "set", b, "up")
			ports[i] = a
		}
		vsctl := func(args ...string) { run(t, node.env, append([]string{"ovs-vsctl", "--timeout=30"}, args...)...) }
		ofctl := func(args ...string) { run(t, node.env, append([]string{"ovs-ofctl", "--timeout=30"}, args...)...) }
		vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev", "fail_mode=secure",
			"--", "add-port", "br0", ports[0], "--", "set", "interface", ports[0], "ofport_request=1",
			"--", "add-port", "br0", "patch0", "--", "set", "interface", "patch0", "type=patch", "options:peer=patch1", "ofport_request=2",
			"--", "add-br", "br1", "--", "set", "bridge", "br1", "datapath_type=netdev", "fail_mode=secure",
			"--", "add-port", "br1", ports[1], "--", "set", "interface", ports[1], "ofport_request=1",
			"--", "add-port", "br1", "patch1", "--", "set", "interface", "patch1", "type=patch", "options:peer=patch0", "ofport_request=2")
		ofctl("add-flow", "br0", "in_port=1,actions=2")
		ofctl("add-flow", "br0", "in_port=2,actions=1")
		ofctl("add-flow", "br1", "in_port=1,actions=2")
		if ping(hosts[0], "10.33.0.2") {
			t.Fatal("a ping crossed while the second bridge had no flow for it")
		}
		ofctl("add-flow", "br1", "in_port=2,actions=1")
		if !ping(hosts[0], "10.33.0.2") {
			t.Fatalf("no ping after the second bridge's flow was added:\n%s",
				run(t, node.env, "ovs-appctl", "-t", node.target, "dpctl/dump-flows"))
		}
	})
}
