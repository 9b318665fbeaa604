package tests

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

var txCountRE = regexp.MustCompile(`tx pkts=([0-9]+)`)

// TestPausedPacketsResumeOnceLikeOpenVSwitch: a packet through pauses
// (ovs-ofctl monitor ... resume sends each continuation back) leaves each
// output port once, with as many resumes as pauses, as with Open vSwitch:
// Open vSwitch's "continuation" checks for a plain action list, resubmits
// (the continuation keeps the outer action lists) and the action set
// (kept across the pause).
func TestPausedPacketsResumeOnceLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	cases := []struct {
		name   string
		flows  []string
		pauses int
		// vsctl, if set, configures the bridge further; ports are then
		// the ports whose tx counts are compared ("br1:5" for another
		// bridge's); peerFlows go into br1, which gets a monitor too.
		vsctl     []string
		ports     []string
		peerFlows []string
	}{
		{"actions", []string{"in_port=1 actions=controller(pause),2,controller(pause),3"}, 2, nil, nil, nil},
		{"resubmit", []string{"table=0,in_port=1 actions=controller(pause),2,controller(pause),resubmit(,1),controller(pause),LOCAL",
			"table=1,in_port=1 actions=controller(pause),3,controller(pause)"}, 5, nil, nil, nil},
		{"action set", []string{"in_port=1 actions=1,controller(pause),resubmit(,1),controller(pause),2",
			"table=1 actions=write_actions(output:3)"}, 2, nil, nil, nil},
		// The mirror is used once, before the first pause: the resumed
		// outputs must not send the packet to it again.
		{"mirroring", []string{"in_port=1 actions=controller(pause),2,controller(pause),3,controller(pause),4,controller(pause)"}, 4,
			[]string{"add-port", "br0", "p4", "--", "set", "interface", "p4", "type=dummy", "ofport_request=4",
				"--", "add-port", "br0", "p5", "--", "set", "interface", "p5", "type=dummy", "ofport_request=5",
				"--", "set", "bridge", "br0", "mirrors=@m",
				"--", "--id=@p2", "get", "port", "p2", "--", "--id=@p3", "get", "port", "p3", "--", "--id=@p4", "get", "port", "p4",
				"--", "--id=@p5", "get", "port", "p5",
				"--", "--id=@m", "create", "mirror", "name=mymirror", "select_dst_port=@p2,@p3,@p4", "output_port=@p5"},
			[]string{"2", "3", "4", "5"}, nil},
		// A pause in a patch peer freezes only the peer's actions: the
		// first bridge goes on after the patch port.
		{"patch ports", []string{"table=0 in_port=1 actions=controller(pause),2,resubmit(,1),controller(pause),4",
			"table=1 in_port=1 actions=controller(pause),3,controller(pause),10,controller(pause)"}, 7,
			[]string{"add-port", "br0", "p4", "--", "set", "interface", "p4", "type=dummy", "ofport_request=4",
				"--", "add-port", "br0", "patch10", "--", "set", "interface", "patch10", "type=patch", "options:peer=patch11", "ofport_request=10",
				"--", "add-br", "br1", "--", "set", "bridge", "br1", "datapath_type=dummy", "fail-mode=secure",
				"--", "add-port", "br1", "patch11", "--", "set", "interface", "patch11", "type=patch", "options:peer=patch10", "ofport_request=11",
				"--", "add-port", "br1", "p5", "--", "set", "interface", "p5", "type=dummy", "ofport_request=5"},
			[]string{"2", "3", "4", "br1:5"},
			[]string{"table=0 in_port=11 actions=controller(pause),5,controller(pause)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			session := func(env []string, target string) string {
				setUpOneBridge(t, env)
				if tc.vsctl != nil {
					run(t, env, append([]string{"ovs-vsctl", "--timeout=20"}, tc.vsctl...)...)
				}
				logs := []string{startTool(t, env, "ovs-ofctl", "-O", "OpenFlow13", "monitor", "br0", "resume").log}
				if tc.peerFlows != nil {
					logs = append(logs, startTool(t, env, "ovs-ofctl", "-O", "OpenFlow13", "monitor", "br1", "resume").log)
				}
				resumes := func() int {
					n := 0
					for _, l := range logs {
						b, _ := os.ReadFile(l)
						n += strings.Count(string(b), "NXT_RESUME")
					}
					return n
				}
				time.Sleep(500 * time.Millisecond)
				for _, f := range tc.flows {
					run(t, env, "ovs-ofctl", "-O", "OpenFlow13", "add-flow", "br0", f)
				}
				for _, f := range tc.peerFlows {
					run(t, env, "ovs-ofctl", "-O", "OpenFlow13", "add-flow", "br1", f)
				}
				run(t, env, "ovs-appctl", "-t", target, "netdev-dummy/receive", "p1",
					"in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=192.168.0.1,dst=192.168.0.2,proto=1,tos=0,ttl=128,frag=no),icmp(type=8,code=0)")
				waitFor(t, "the resumes", func() bool { return resumes() >= tc.pauses })
				time.Sleep(time.Second) // room for any extra copies
				var out []string
				ports := tc.ports
				if ports == nil {
					ports = []string{"2", "3", "LOCAL"}
				}
				for _, p := range ports {
					br, port, ok := strings.Cut(p, ":")
					if !ok {
						br, port = "br0", p
					}
					m := txCountRE.FindStringSubmatch(run(t, env, "ovs-ofctl", "dump-ports", br, port))
					if m == nil {
						t.Fatalf("no tx pkts for port %s", p)
					}
					out = append(out, p+" tx "+m[1])
				}
				out = append(out, fmt.Sprintf("resumes %d", resumes()))
				return strings.Join(out, ", ")
			}
			ovsEnv, stopOVS := startOpenVSwitch(t)
			want := session(ovsEnv, "ovs-vswitchd")
			stopOVS()
			_, gvsEnv := startDaemon(t)
			if got := session(gvsEnv, "gvs-vswitchd"); got != want {
				t.Errorf("gvs: %s\nOpen vSwitch: %s", got, want)
			}
			if !strings.Contains(want, fmt.Sprintf("resumes %d", tc.pauses)) {
				t.Errorf("Open vSwitch did not resume %d times: %s", tc.pauses, want)
			}
		})
	}
}
