package tests

import (
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

// selectGroupSession sets up select groups as Open vSwitch's default (no
// selection method: dp_hash with the symmetric L4 hash) and with
// selection_method=dp_hash, sends TCP and UDP packets of many 5-tuples
// through them, and returns the first pass's datapath actions and each
// output port's transmit count.
func selectGroupSession(t *testing.T, env []string, target string) string {
	t.Helper()
	vsctl := []string{"ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail_mode=secure",
		"protocols=OpenFlow10,OpenFlow13,OpenFlow15"}
	for i := 1; i <= 4; i++ {
		vsctl = append(vsctl, "--", "add-port", "br0", fmt.Sprintf("p%d", i), "--", "set", "interface", fmt.Sprintf("p%d", i), "type=dummy", fmt.Sprintf("ofport_request=%d", i))
	}
	run(t, env, vsctl...)
	of := func(args ...string) { run(t, env, append([]string{"ovs-ofctl", "-O", "OpenFlow15"}, args...)...) }
	of("add-group", "br0", "group_id=1,type=select,bucket=bucket_id:0,weight:100,output:2,bucket=bucket_id:1,weight:100,output:3,bucket=bucket_id:2,weight:50,output:4")
	of("add-group", "br0", "group_id=2,type=select,selection_method=dp_hash,bucket=bucket_id:0,output:2,bucket=bucket_id:1,output:3")
	of("add-flow", "br0", "in_port=1,tcp,actions=group:1")
	of("add-flow", "br0", "in_port=1,udp,actions=group:2")
	var out []string
	for _, proto := range []string{"tcp", "udp"} {
		tr := run(t, env, "ovs-appctl", "-t", target, "ofproto/trace", "br0", "in_port=1,"+proto+",nw_src=10.0.0.1,nw_dst=10.0.0.2,"+proto+"_src=1000,"+proto+"_dst=80")
		for _, l := range strings.Split(tr, "\n") {
			if strings.HasPrefix(l, "Datapath actions:") {
				out = append(out, proto+": "+l)
				break
			}
		}
	}
	for _, proto := range []byte{6, 17} {
		// 30 packets per command: Open vSwitch's dummy rx queue holds 100.
		for first := 0; first < 60; first += 30 {
			args := []string{"ovs-appctl", "-t", target, "netdev-dummy/receive", "p1"}
			for i := first; i < first+30; i++ {
				// IPv4 10.0.0.1 -> 10.0.0.2, ports 1000+i -> 80, no payload.
				l4 := "00000000000000005002000000000000" // TCP: seq, ack, offset 5, SYN, window, csum, urg
				if proto == 17 {
					l4 = "00080000" // UDP: length, csum
				}
				ip := fmt.Sprintf("4500%04x0000000040%02x00000a0000010a000002", 20+4+len(l4)/2, proto)
				pkt, _ := hex.DecodeString("505400000002505400000001" + "0800" + ip + fmt.Sprintf("%04x0050", 1000+i) + l4)
				args = append(args, hex.EncodeToString(pkt))
			}
			run(t, env, args...)
		}
	}
	// Which bucket each 5-tuple took: Open vSwitch's hash functions and
	// table layout give the same per-port counts.
	out = append(out, settledPorts(t, env))
	// The recirculated passes match dp_hash under the hash table's mask.
	run(t, env, "ovs-appctl", "-t", target, "revalidator/wait")
	masks := map[string]bool{}
	for _, m := range dpHashMaskRE.FindAllStringSubmatch(run(t, env, "ovs-appctl", "-t", target, "dpctl/dump-flows"), -1) {
		masks[m[1]] = true
	}
	var ms []string
	for m := range masks {
		ms = append(ms, m)
	}
	sortStrings(ms)
	out = append(out, "dp_hash masks: "+strings.Join(ms, " "))
	return strings.Join(out, "\n")
}

var dpHashMaskRE = regexp.MustCompile(`dp_hash\(0x[0-9a-f]+/(0x[0-9a-f]+)\)`)

// TestSelectGroupsPickBucketsLikeOpenVSwitch: the default and the
// dp_hash selection methods hash in the datapath as Open vSwitch does
// (symmetric L4 for the default, the method parameter's algorithm for
// dp_hash), the recirculated passes match dp_hash under the same mask
// (the hash table sized and filled as Open vSwitch's), and each 5-tuple
// leaves through the same bucket (the same hash values).
func TestSelectGroupsPickBucketsLikeOpenVSwitch(t *testing.T) {
	for _, bin := range []string{"ovs-vsctl", "ovs-ofctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	want := selectGroupSession(t, ovsEnv, "ovs-vswitchd")
	stopOVS()
	_, gvsEnv := startDaemon(t)
	got := selectGroupSession(t, gvsEnv, "gvs-vswitchd")
	t.Logf("gvs:\n%s", got)
	if got != want {
		t.Errorf("select groups differ\n--- Open vSwitch:\n%s\n--- gvs:\n%s", want, got)
	}
}
