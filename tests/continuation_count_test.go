package tests

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

var txCountRE = regexp.MustCompile(`tx pkts=([0-9]+)`)

// TestPausedPacketsResumeOnceLikeOpenVSwitch: a packet through two
// pauses (ovs-ofctl monitor ... resume sends each continuation back)
// leaves each output port exactly once and the monitor sees two resumes,
// as with Open vSwitch (Open vSwitch's "continuation - actions" check).
func TestPausedPacketsResumeOnceLikeOpenVSwitch(t *testing.T) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	session := func(env []string, target string) string {
		setUpOneBridge(t, env)
		mon := startTool(t, env, "ovs-ofctl", "-O", "OpenFlow13", "monitor", "br0", "resume")
		time.Sleep(500 * time.Millisecond)
		run(t, env, "ovs-ofctl", "-O", "OpenFlow13", "add-flow", "br0", "in_port=1 actions=controller(pause),2,controller(pause),3")
		run(t, env, "ovs-appctl", "-t", target, "netdev-dummy/receive", "p1",
			"in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=192.168.0.1,dst=192.168.0.2,proto=1,tos=0,ttl=128,frag=no),icmp(type=8,code=0)")
		waitFor(t, "two resumes", func() bool {
			b, _ := os.ReadFile(mon.log)
			return strings.Count(string(b), "NXT_RESUME") >= 2
		})
		time.Sleep(time.Second) // room for any extra copies
		var out []string
		for _, p := range []string{"2", "3"} {
			m := txCountRE.FindStringSubmatch(run(t, env, "ovs-ofctl", "dump-ports", "br0", p))
			if m == nil {
				t.Fatalf("no tx pkts for port %s", p)
			}
			out = append(out, "p"+p+" tx "+m[1])
		}
		b, _ := os.ReadFile(mon.log)
		out = append(out, "resumes "+itoa(strings.Count(string(b), "NXT_RESUME")))
		return strings.Join(out, ", ")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	want := session(ovsEnv, "ovs-vswitchd")
	stopOVS()
	_, gvsEnv := startDaemon(t)
	got := session(gvsEnv, "gvs-vswitchd")
	if got != want || want != "p2 tx 1, p3 tx 1, resumes 2" {
		t.Errorf("gvs: %s; Open vSwitch: %s; want p2 tx 1, p3 tx 1, resumes 2", got, want)
	}
}
