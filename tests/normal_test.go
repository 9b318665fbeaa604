package tests

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/netdev/pcap"
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
	return settledPorts(t, env)
}

// settledPorts returns br0's per-port rx/tx packet counts, read once they
// have stopped moving (bounded), one line per port, sorted.
func settledPorts(t *testing.T, env []string) string {
	t.Helper()
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
	bytesRE    = regexp.MustCompile(`bytes=\d+`)
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

// vlanPorts are the dummy ports of the VLAN-mode session: bridge, name,
// ofport and the Port columns. br1 hangs off br0 through patch ports
// (pb0, a trunk, and pb1, native-untagged in VLAN 20 and trunking 10).
var vlanPorts = []struct{ br, name, ofport, cols string }{
	{"br0", "a1", "1", "tag=10"},
	{"br0", "a2", "2", "tag=10"},
	{"br0", "t1", "3", ""},
	{"br0", "t2", "4", "trunks=0,20"},
	{"br0", "t3", "5", "trunks=10,20"},
	{"br0", "nt", "6", "tag=10 vlan_mode=native-tagged trunks=20"},
	{"br0", "nu", "7", "tag=10 vlan_mode=native-untagged trunks=20"},
	{"br0", "a0", "8", "vlan_mode=access"},
	{"br0", "n30", "9", "tag=30 vlan_mode=native-untagged trunks=0,10,30"},
	{"br1", "b1", "1", "tag=10"},
	{"br1", "b2", "2", ""},
	{"br1", "b3", "3", "tag=20"},
}

// normalVLANSession builds a bridge with access, trunk (with and without
// VLAN 0), native-tagged and native-untagged ports, each capturing what
// it transmits (options:tx_pcap), sends untagged, priority-tagged (VID
// 0, with and without a priority) and tagged frames through NORMAL, and
// returns the per-port counters and every port's transmitted frames,
// hex-encoded in order.
func normalVLANSession(t *testing.T, env []string, target, dir string) (string, map[string][]string) {
	t.Helper()
	args := []string{"ovs-vsctl", "--timeout=20", "init", "--", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
		"--", "add-br", "br1", "--", "set", "bridge", "br1", "datapath_type=dummy"}
	for _, p := range vlanPorts {
		args = append(args, "--", "add-port", p.br, p.name)
		if p.cols != "" {
			args = append(args, strings.Fields(p.cols)...)
		}
		args = append(args, "--", "set", "interface", p.name, "type=dummy", "ofport_request="+p.ofport,
			"options:tx_pcap="+filepath.Join(dir, p.name+".pcap"))
	}
	run(t, env, args...)
	recv := func(port, pkt string) {
		run(t, env, "ovs-appctl", "-t", target, "netdev-dummy/receive", port, pkt)
		time.Sleep(100 * time.Millisecond)
	}
	const payload = "ipv4(src=10.0.0.1,dst=10.0.0.2,proto=17,tos=0,ttl=64,frag=no),udp(src=1,dst=2)"
	untagged := func(in, src, dst string) string {
		return "in_port(" + in + "),eth(src=" + src + ",dst=" + dst + "),eth_type(0x0800)," + payload
	}
	tagged := func(in string, vid, pcp int, src, dst string) string {
		return "in_port(" + in + "),eth(src=" + src + ",dst=" + dst + "),eth_type(0x8100),vlan(vid=" + itoa(vid) + ",pcp=" + itoa(pcp) +
			"),encap(eth_type(0x0800)," + payload + ")"
	}
	const bcast = "ff:ff:ff:ff:ff:ff"
	mac := func(n int) string { return "50:54:00:00:00:" + fmt.Sprintf("%02x", n) }
	// VLAN 10 from an access port: a2 and nu untagged; t1, t3, nt and
	// n30 (which trunks 10) tagged.
	recv("a1", untagged("1", mac(1), bcast))
	// A priority tag on an access port: the tag becomes VLAN 10 and
	// keeps PCP 5 on tagged outputs.
	recv("a1", tagged("1", 0, 5, mac(2), bcast))
	// Tagged VLAN 10 from a trunk to a learned MAC: a1, untagged.
	recv("t1", tagged("3", 10, 3, mac(3), mac(1)))
	// VLAN 0 from a trunk: priority-tagged with PCP 5 (kept on trunks,
	// removed on access ports), with PCP 0 (removed everywhere), and
	// untagged; t3 and the native ports do not carry VLAN 0.
	recv("t1", tagged("3", 0, 5, mac(4), bcast))
	recv("t1", tagged("3", 0, 0, mac(5), bcast))
	recv("t2", untagged("4", mac(6), bcast))
	// t3 lacks VLAN 0: untagged and priority-tagged frames are dropped.
	recv("t3", untagged("5", mac(7), bcast))
	recv("t3", tagged("5", 0, 1, mac(7), bcast))
	// Native ports: untagged and priority-tagged frames join VLAN 10.
	recv("nt", untagged("6", mac(8), bcast))
	recv("nu", untagged("7", mac(9), bcast))
	recv("nu", tagged("7", 0, 2, mac(10), bcast))
	recv("nt", tagged("6", 0, 7, mac(11), bcast))
	// Tagged frames on native ports: a trunked VLAN, the native VLAN
	// itself, and one not trunked (dropped).
	recv("nt", tagged("6", 20, 1, mac(12), bcast))
	recv("nu", tagged("7", 10, 4, mac(13), bcast))
	recv("nu", tagged("7", 30, 0, mac(14), bcast))
	// VLAN 30 from a trunk: n30 (native-untagged, native 30) untagged.
	recv("t1", tagged("3", 30, 6, mac(15), bcast))
	recv("n30", untagged("9", mac(16), bcast))
	// Unicasts to MACs learned above: in VLAN 10 from a native-untagged
	// port to a trunk (tag pushed), and from a trunk to it (tag popped).
	recv("nu", untagged("7", mac(17), mac(3)))
	recv("t1", tagged("3", 10, 0, mac(3), mac(9)))
	// An access port in VLAN 0: a priority tag keeps its PCP on trunks.
	recv("a0", tagged("8", 0, 6, mac(18), bcast))
	recv("a0", untagged("8", mac(19), bcast))
	// Tagged frames on access ports are dropped.
	recv("a1", tagged("1", 10, 0, mac(20), bcast))
	recv("a0", tagged("8", 10, 0, mac(21), bcast))

	// Patch br1 in: VLAN 10 leaves br0 tagged and reaches br1's access
	// port b1; br1's VLAN 20 (pb1's native VLAN) enters br0 untagged, as
	// VLAN 0; a priority tag from br0 enters br1 in VLAN 20.
	run(t, env, "ovs-vsctl", "--timeout=20",
		"--", "add-port", "br0", "pb0", "--", "set", "interface", "pb0", "type=patch", "options:peer=pb1", "ofport_request=10",
		"--", "add-port", "br1", "pb1", "tag=20", "vlan_mode=native-untagged", "trunks=10",
		"--", "set", "interface", "pb1", "type=patch", "options:peer=pb0", "ofport_request=10")
	time.Sleep(500 * time.Millisecond)
	recv("b1", untagged("1", mac(22), bcast))
	recv("b3", untagged("3", mac(23), bcast))
	recv("t1", tagged("3", 0, 3, mac(24), bcast))
	recv("b2", tagged("2", 10, 5, mac(25), bcast))
	recv("a1", untagged("1", mac(26), bcast))
	// Unicasts across the patch ports to MACs learned on the far side:
	// each bridge learned the other's MACs on its patch port, so each
	// frame reaches exactly one port.
	recv("b1", untagged("1", mac(27), mac(1)))
	recv("a1", untagged("1", mac(28), mac(22)))
	recv("b2", tagged("2", 10, 0, mac(29), mac(26)))
	recv("t1", tagged("3", 20, 0, mac(30), mac(23)))

	// The patch port pb0 (port 10) counts what crossed it each way, and
	// only that (its other counters are unavailable). Bytes are masked:
	// Open vSwitch credits a patch port with the size the frame had when
	// it entered the switch, gvs with its size at the patch port, which
	// differs by the VLAN tag NORMAL pushed or popped on the way.
	// Patch port counters come from megaflow statistics, which a
	// revalidation round pushes (in both switches).
	run(t, env, "ovs-appctl", "-t", target, "revalidator/wait")
	counts := strings.Split(settledPorts(t, env), "\n")
	for _, l := range strings.Split(run(t, env, "ovs-ofctl", "dump-ports", "br0", "10"), "\n") {
		if !strings.Contains(l, "duration=") {
			counts = append(counts, bytesRE.ReplaceAllString(strings.TrimSpace(l), "bytes=N"))
		}
	}
	// Both MAC tables, MACs behind the patch ports included (port 10),
	// without the ages and in a fixed order.
	for _, br := range []string{"br0", "br1"} {
		var rows []string
		for _, l := range strings.Split(strings.TrimSpace(run(t, env, "ovs-appctl", "-t", target, "fdb/show", br)), "\n")[1:] {
			if f := strings.Fields(l); len(f) == 4 {
				rows = append(rows, br+" "+strings.Join(f[:3], " "))
			}
		}
		slices.Sort(rows)
		counts = append(counts, rows...)
	}
	frames := map[string][]string{}
	for _, p := range vlanPorts {
		f, err := os.Open(filepath.Join(dir, p.name+".pcap"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := pcap.NewReader(f)
		if err != nil {
			f.Close()
			t.Fatalf("%s: %v", p.name, err)
		}
		for {
			frame, _, _, err := r.Next()
			if err != nil {
				break
			}
			frames[p.name] = append(frames[p.name], hex.EncodeToString(frame))
		}
		f.Close()
	}
	return strings.Join(counts, "\n"), frames
}

// TestNormalVLANModesLikeOpenVSwitch runs the VLAN-mode session (access,
// trunk with and without VLAN 0, native-tagged, native-untagged; untagged,
// priority-tagged and tagged frames) on Open vSwitch and on gvs and
// requires the same per-port counters and, byte for byte, the same frames
// out of every port, so that every tag push, pop, VID rewrite and kept
// priority is checked.
func TestNormalVLANModesLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	wantCounts, wantFrames := normalVLANSession(t, ovsEnv, "ovs-vswitchd", t.TempDir())
	stopOVS()
	_, gvsEnv := startDaemon(t)
	gotCounts, gotFrames := normalVLANSession(t, gvsEnv, "gvs-vswitchd", t.TempDir())
	t.Logf("ports:\n%s", gotCounts)
	if gotCounts != wantCounts {
		t.Errorf("ports differ\n--- Open vSwitch:\n%s\n--- gvs:\n%s", wantCounts, gotCounts)
	}
	// Some frames must have been tagged and priority-tagged, or the
	// comparison proves little.
	var all string
	for _, p := range vlanPorts {
		all += strings.Join(wantFrames[p.name], " ") + " "
		if w, g := wantFrames[p.name], gotFrames[p.name]; !slices.Equal(w, g) {
			t.Errorf("port %s transmitted differently\n--- Open vSwitch (%d):\n%s\n--- gvs (%d):\n%s", p.name, len(w), strings.Join(w, "\n"), len(g), strings.Join(g, "\n"))
		}
	}
	for _, tag := range []string{"8100a00a", "8100a000", "8100c000", "8100001e"} {
		if !strings.Contains(all, tag) {
			t.Errorf("Open vSwitch transmitted no frame with tag %s", tag)
		}
	}
}
