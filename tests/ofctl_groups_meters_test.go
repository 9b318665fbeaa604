package tests

import (
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

// groupsMetersPacket is a minimal Ethernet+IPv4+UDP frame for packet-out.
const groupsMetersPacket = "ffffffffffff0000000000010800" +
	"45000020000000004011f9c80a0000010a000002" + "003500350008cd3f"

// groupsMetersSteps are the group, meter and packet-out commands gvs-ofctl
// implements, with their OpenFlow 1.0 refusals and bad arguments.
func groupsMetersSteps() []onlineStep {
	return []onlineStep{
		oc("dump-group-features", "br0"),
		oc("-O", "OpenFlow11", "dump-group-features", "br0"),
		oc("-O", "OpenFlow13", "dump-group-features", "br0"),
		oc("-O", "OpenFlow15", "dump-group-features", "br0"),
		oc("dump-group-stats", "br0"),
		oc("-O", "OpenFlow13", "dump-group-stats", "br0"),
		oc("-O", "OpenFlow13", "dump-group-stats", "br0", "1"),
		oc("-O", "OpenFlow13", "dump-group-stats", "br0", "group_id=2"),
		oc("-O", "OpenFlow13", "dump-group-stats", "br0", "all"),
		oc("-O", "OpenFlow13", "dump-group-stats", "br0", "group_id=99"),
		oc("-O", "OpenFlow15", "dump-group-stats", "br0"),
		oc("-O", "OpenFlow11", "dump-group-stats", "br0"),
		oc("-O", "OpenFlow12", "--no-names", "dump-group-stats", "br0", "group_id=1"),
		oc("-O", "OpenFlow12", "meter-stats", "br0"),
		oc("-O", "OpenFlow12,OpenFlow13", "meter-features", "br0"),
		oc("-O", "OpenFlow14", "dump-group-stats", "nosuchbr"),
		oc("-O", "OpenFlow13", "dump-group-stats", "br0", "bogus"),
		oc("del-groups", "br0"),
		oc("-O", "OpenFlow13", "del-groups", "br0"),
		oc("-O", "OpenFlow13", "del-groups", "br0", "group_id=1"),
		oc("-O", "OpenFlow15", "del-groups", "br0", "group_id=2"),
		oc("-O", "OpenFlow11", "del-groups", "br0", "group_id=all"),
		oc("-O", "OpenFlow13", "del-groups", "br0", "group_id=bogus"),
		oc("-O", "OpenFlow13", "del-groups", "br0", "bogus=1"),
		oc("-O", "OpenFlow14", "--bundle", "del-groups", "br0", "group_id=1"),
		oc("--bundle", "del-groups", "br0"),
		oc("del-meters", "br0"),
		oc("-O", "OpenFlow13", "del-meters", "br0"),
		oc("-O", "OpenFlow13", "del-meter", "br0", "meter=1"),
		oc("-O", "OpenFlow15", "del-meters", "br0", "meter=2"),
		oc("-O", "OpenFlow13", "del-meter", "br0", "meter=7"),
		oc("-O", "OpenFlow13", "del-meter", "br0", "meter=bogus"),
		oc("-O", "OpenFlow13", "del-meter", "br0"),
		oc("meter-features", "br0"),
		oc("-O", "OpenFlow13", "meter-features", "br0"),
		oc("-O", "OpenFlow15", "meter-features", "br0"),
		oc("meter-stats", "br0"),
		oc("-O", "OpenFlow13", "meter-stats", "br0"),
		oc("-O", "OpenFlow13", "meter-stats", "br0", "meter=1"),
		oc("-O", "OpenFlow13", "meter-stats", "br0", "meter=all"),
		oc("-O", "OpenFlow13", "meter-stats", "br0", "meter=7"),
		oc("-O", "OpenFlow13", "meter-stats", "br0", "meter=bogus"),
		oc("packet-out", "br0", "1", "output:2", groupsMetersPacket),
		oc("packet-out", "br0", "LOCAL", "output:2", groupsMetersPacket, groupsMetersPacket),
		oc("packet-out", "br0", "none", "drop", groupsMetersPacket),
		oc("-O", "OpenFlow11", "packet-out", "br0", "1", "output:2,output:3", groupsMetersPacket),
		oc("-O", "OpenFlow15", "packet-out", "br0", "2", "output:1", groupsMetersPacket),
		oc("packet-out", "br0", "in_port=1 packet="+groupsMetersPacket+" actions=output:2"),
		oc("packet-out", "br0", "in_port=1 actions=output:2"),
		oc("packet-out", "br0", "packet="+groupsMetersPacket+" actions=output:2"),
		oc("packet-out", "br0", "in_port=p1,packet="+groupsMetersPacket+",actions=output:2"),
		oc("packet-out", "br0", "in_port=1,packet=zz,actions=output:2"),
		oc("packet-out", "br0", "1", "output:2"),
		oc("packet-out", "br0", "1", "frobnicate", groupsMetersPacket),
		oc("packet-out", "br0", "1", "output:2", "zz"),
		oc("packet-out", "br0", "p9", "output:2", groupsMetersPacket),
	}
}

// sortGroupLines sorts each run of " group_id=" lines: Open vSwitch dumps
// groups in hash order.
func sortGroupLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && strings.HasPrefix(lines[j], " group_id=") {
			j++
		}
		if j == i {
			i++
			continue
		}
		slices.Sort(lines[i:j])
		i = j
	}
	return strings.Join(lines, "")
}

var meterDurationRE = regexp.MustCompile(`duration:[0-9.]+s`)

// TestGvsOfctlGroupAndMeterCommandsMatchOVSOfctl runs each step with
// Debian's ovs-ofctl and with gvs-ofctl against Open vSwitch's
// ovs-vswitchd (dummy datapath) and gvs-vswitchd, groups and meters reset
// (by ovs-ofctl) before every run; output, errors, exit status and the
// groups and meters afterwards must be identical (durations masked).
func TestGvsOfctlGroupAndMeterCommandsMatchOVSOfctl(t *testing.T) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	gvsOfctl := gvsOfctlBinary(t)
	for _, sw := range []string{"Open vSwitch", "gvs-vswitchd"} {
		t.Run(sw, func(t *testing.T) {
			env := ofctlSwitch(t, sw)
			dir, _ := onlineFixture(t, env)
			ofctl13 := func(args ...string) {
				c := exec.Command("ovs-ofctl", append([]string{"--timeout=10", "-O", "OpenFlow13"}, args...)...)
				c.Env = env
				if out, err := c.CombinedOutput(); err != nil {
					t.Fatalf("ovs-ofctl %v: %v\n%s", args, err, out)
				}
			}
			reset := func() {
				ofctl13("del-groups", "br0")
				ofctl13("del-meters", "br0")
				ofctl13("add-group", "br0", "group_id=1,type=all,bucket=output:1,bucket=output:2")
				ofctl13("add-group", "br0", "group_id=2,type=select,bucket=weight:3,output:3,bucket=weight:5,output:1")
				ofctl13("add-meter", "br0", "meter=1,kbps,band=type=drop,rate=100")
				ofctl13("add-meter", "br0", "meter=2,pktps,burst,stats,band=type=drop,rate=10,burst_size=20")
			}
			state := []onlineStep{
				oc("-O", "OpenFlow13", "dump-groups", "br0"),
				oc("-O", "OpenFlow13", "dump-meters", "br0"),
			}
			for _, st := range groupsMetersSteps() {
				var got [2]string
				for i, bin := range []string{"ovs-ofctl", gvsOfctl} {
					reset()
					got[i] = runOnline(t, env, dir, bin, st) + "after:\n"
					for _, s := range state {
						got[i] += runOnline(t, env, dir, "ovs-ofctl", s)
					}
					got[i] = sortGroupLines(meterDurationRE.ReplaceAllString(got[i], "duration:<t>"))
				}
				if got[0] != got[1] {
					t.Errorf("%v differs\n--- ovs-ofctl:\n%s--- gvs-ofctl:\n%s", st.args, got[0], got[1])
				}
			}
		})
	}
}
