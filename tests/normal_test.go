package tests

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

// normalSession sends broadcasts and unicasts through NORMAL on a bridge
// with access ports in VLANs 10 and 20 and a trunk, and returns what each
// port transmitted (ovs-ofctl dump-ports, counters other than tx/rx
// packets masked).
func normalSession(t *testing.T, env []string, target string) string {
	t.Helper()
	run(t, env, "ovs-vsctl", "--timeout=20", "init")
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
		"--", "add-port", "br0", "p1", "tag=10", "--", "set", "interface", "p1", "type=dummy", "ofport_request=1",
		"--", "add-port", "br0", "p2", "tag=10", "--", "set", "interface", "p2", "type=dummy", "ofport_request=2",
		"--", "add-port", "br0", "p3", "tag=20", "--", "set", "interface", "p3", "type=dummy", "ofport_request=3",
		"--", "add-port", "br0", "p4", "--", "set", "interface", "p4", "type=dummy", "ofport_request=4")
	// Each switch handles a received packet asynchronously; learning
	// depends on order, so each packet is handled before the next is sent.
	recv := func(port, pkt string) {
		run(t, env, "ovs-appctl", "-t", target, "netdev-dummy/receive", port, pkt)
		time.Sleep(100 * time.Millisecond)
	}
	const (
		a = "50:54:00:00:00:0a"
		b = "50:54:00:00:00:0b"
		c = "50:54:00:00:00:0c"
	)
	eth := func(inPort, src, dst string) string {
		return "in_port(" + inPort + "),eth(src=" + src + ",dst=" + dst + "),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=17,tos=0,ttl=64,frag=no),udp(src=1,dst=2)"
	}
	tagged := func(inPort string, vid int, src, dst string) string {
		return "in_port(" + inPort + "),eth(src=" + src + ",dst=" + dst + "),eth_type(0x8100),vlan(vid=" + itoa(vid) + ",pcp=0),encap(eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=17,tos=0,ttl=64,frag=no),udp(src=1,dst=2))"
	}
	recv("p1", eth("1", a, "ff:ff:ff:ff:ff:ff")) // flood in VLAN 10: p2, p4 (tagged)
	recv("p2", eth("2", b, a))                   // a was learned on p1: unicast
	recv("p3", eth("3", c, a))                   // VLAN 20 knows no a: flood to p4 only
	recv("p4", tagged("4", 10, c, b))            // trunk, VLAN 10: to p2, untagged
	recv("p4", tagged("4", 30, c, b))            // VLAN 30 has no access port: nothing
	recv("p1", tagged("1", 10, a, b))            // tagged on an access port: dropped
	// Counters are read once they have stopped moving (bounded).
	out := run(t, env, "ovs-ofctl", "dump-ports", "br0")
	for i := 0; i < 25; i++ {
		time.Sleep(200 * time.Millisecond)
		next := run(t, env, "ovs-ofctl", "dump-ports", "br0")
		if next == out {
			break
		}
		out = next
	}
	// dump-ports lists ports in hash order; compare per port.
	lines := strings.Split(out, "\n")
	var ports []string
	for i := 0; i < len(lines); i++ {
		if m := portLineRE.FindStringSubmatch(lines[i]); m != nil && i+1 < len(lines) {
			ports = append(ports, "port "+m[1]+": rx pkts="+m[2]+", "+txPktsRE.FindString(lines[i+1]))
		}
	}
	sortStrings(ports)
	return strings.Join(ports, "\n")
}

var (
	portLineRE = regexp.MustCompile(`port +(\S+): rx pkts=(\d+)`)
	txPktsRE   = regexp.MustCompile(`tx pkts=\d+`)
)

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestNormalForwardsPerVLANLikeOpenVSwitch sends the same packets into
// NORMAL on gvs and on Open vSwitch (access ports in two VLANs and a
// trunk: flooding, learning, tagged input on a trunk, an unknown VLAN, a
// tagged packet on an access port) and requires the same packets on the
// same ports. The megaflows differ on purpose: gvs's NORMAL is one
// mac_learn megaflow for any MAC, Open vSwitch's one per MAC pair.
func TestNormalForwardsPerVLANLikeOpenVSwitch(t *testing.T) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	want := normalSession(t, ovsEnv, "ovs-vswitchd")
	stopOVS()
	_, gvsEnv := startDaemon(t)
	got := normalSession(t, gvsEnv, "gvs-vswitchd")
	t.Logf("ports:\n%s", got)
	if got != want || !strings.Contains(got, "port 2: rx pkts=1, tx pkts=2") {
		t.Errorf("ports differ\n--- Open vSwitch:\n%s\n--- gvs:\n%s", want, got)
	}
}
