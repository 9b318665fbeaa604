package tests

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/internal/ovsoracle"
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

// groupsMetersFile is an add-groups file: a command word per line
// (add when none), comments and blank lines.
const groupsMetersFile = "group_id=3,type=indirect,bucket=output:2\n# a comment\n\n" +
	"add group_id=4,type=select,bucket=weight:2,output:1,bucket=output:3\n" +
	"modify group_id=1,type=all,bucket=output:3\ninsert_bucket group_id=2,command_bucket_id=first,bucket=bucket_id:7,weight:2,output:2\n" +
	"remove_bucket group_id=4,command_bucket_id=last\ndelete group_id=3\n"

// groupsMetersSyntaxSteps are the commands that take the group and meter
// syntax, on the groups and meters reset() leaves: group 1 (all, two
// buckets), group 2 (select), meters 1 and 2. Each refusal is there
// once: a parse error, a version that cannot carry the command, and the
// switch's error replies.
func groupsMetersSyntaxSteps() []onlineStep {
	file := func(stdin string, args ...string) onlineStep {
		return onlineStep{args: args, stdin: stdin}
	}
	return []onlineStep{
		oc("dump-groups", "br0"),
		oc("-O", "OpenFlow11", "dump-groups", "br0"),
		oc("-O", "OpenFlow13", "dump-groups", "br0", "2"),
		oc("-O", "OpenFlow15", "dump-groups", "br0"),
		oc("-O", "OpenFlow15", "dump-groups", "br0", "1"),
		oc("-O", "OpenFlow15", "dump-groups", "br0", "group_id=1"),
		oc("-O", "OpenFlow15", "dump-groups", "br0", "7"),
		oc("add-group", "br0", "group_id=3,type=select,bucket=output:1,bucket=weight:3,output:2"),
		oc("-O", "OpenFlow11", "add-group", "br0", "group_id=3,type=indirect,bucket=output:2"),
		oc("-O", "OpenFlow13", "add-group", "br0", "group_id=3,type=ff,bucket=watch_port:2,output:2,bucket=watch_port:3,output:3"),
		oc("-O", "OpenFlow15", "add-group", "br0", "group_id=3,type=select,selection_method=hash,fields(eth_src,ip_dst=255.255.0.0),bucket=bucket_id:3,weight:5,output:2,bucket=output:1"),
		oc("-O", "OpenFlow15", "add-group", "br0", "group_id=3,type=select,selection_method=dp_hash,selection_method_param=7,bucket=output:1"),
		oc("-O", "OpenFlow13", "add-group", "br0", "group_id=1,type=all,bucket=output:2"),
		oc("-O", "OpenFlow13", "add-group", "br0", "group_id=3,type=all,bucket=watch_port:2,output:2"),
		oc("-O", "OpenFlow13", "add-group", "br0", "group_id=3,type=all,bucket=frobnicate"),
		oc("-O", "OpenFlow13", "add-group", "br0", "group_id=3,type=all,bucket=output:p2,bucket=actions=group:1"),
		oc("-O", "OpenFlow13", "add-group", "br0", "group_id=3,type=ff,bucket=watch_port:p2,output:p2,bucket=watch_port:LOCAL,output:1"),
		oc("-O", "OpenFlow13", "add-group", "br0", "group_id=3,type=ff,bucket=watch_port:p3,output:p3"),
		oc("-O", "OpenFlow13", "add-group", "br0"),
		oc("mod-group", "br0"),
		file(groupsMetersFile, "-O", "OpenFlow15", "add-groups", "br0", "-"),
		file(groupsMetersFile, "add-groups", "br0", "-"),
		file(groupsMetersFile, "-O", "OpenFlow13", "add-groups", "br0", "-"),
		file("group_id=3,type=all,bucket=output:1\nbogus group_id=4\n", "-O", "OpenFlow13", "add-group", "br0", "-"),
		oc("-O", "OpenFlow13", "mod-group", "br0", "group_id=1,type=select,bucket=output:3"),
		oc("-O", "OpenFlow13", "mod-group", "br0", "group_id=9,type=all,bucket=output:3"),
		oc("-O", "OpenFlow13", "--may-create", "mod-group", "br0", "group_id=9,type=all,bucket=output:3"),
		oc("--may-create", "mod-group", "br0", "group_id=2,type=indirect,bucket=output:3"),
		oc("-O", "OpenFlow15", "insert-buckets", "br0", "group_id=1,command_bucket_id=first,bucket=output:3"),
		oc("-O", "OpenFlow15", "insert-buckets", "br0", "group_id=1,command_bucket_id=last,bucket=bucket_id:7,output:3,bucket=output:2"),
		oc("insert-buckets", "br0", "group_id=2,command_bucket_id=0,bucket=weight:4,output:2"),
		oc("-O", "OpenFlow13", "insert-buckets", "br0", "group_id=1,command_bucket_id=first,bucket=output:3"),
		oc("-O", "OpenFlow15", "insert-buckets", "br0", "group_id=9,command_bucket_id=first,bucket=output:3"),
		oc("-O", "OpenFlow15", "insert-buckets", "br0", "group_id=1,command_bucket_id=5,bucket=output:3"),
		oc("-O", "OpenFlow15", "insert-buckets", "br0", "group_id=1,command_bucket_id=last,bucket=bucket_id:1,output:3"),
		oc("-O", "OpenFlow15", "insert-buckets", "br0", "group_id=1,bucket=output:3"),
		oc("-O", "OpenFlow15", "remove-buckets", "br0", "group_id=1,command_bucket_id=first"),
		oc("-O", "OpenFlow15", "remove-buckets", "br0", "group_id=1,command_bucket_id=last"),
		oc("-O", "OpenFlow15", "remove-buckets", "br0", "group_id=1"),
		oc("remove-buckets", "br0", "group_id=2,command_bucket_id=1"),
		oc("-O", "OpenFlow15", "remove-buckets", "br0", "group_id=2,command_bucket_id=6"),
		oc("-O", "OpenFlow15", "remove-buckets", "br0", "group_id=9"),
		oc("-O", "OpenFlow13", "remove-buckets", "br0", "group_id=1"),
		oc("-O", "OpenFlow15", "del-groups", "br0", "group_id=2"),
		oc("-O", "OpenFlow14", "--bundle", "add-group", "br0", "group_id=3,type=all,bucket=output:1"),
		oc("--bundle", "add-group", "br0", "group_id=1,type=all,bucket=output:1"),
		oc("-O", "OpenFlow15", "--bundle", "insert-buckets", "br0", "group_id=1,command_bucket_id=first,bucket=output:3"),
		oc("-O", "OpenFlow13", "dump-meters", "br0"),
		oc("-O", "OpenFlow13", "dump-meters", "br0", "meter=2"),
		oc("-O", "OpenFlow15", "dump-meters", "br0", "meter=9"),
		oc("-O", "OpenFlow13", "dump-meters", "br0", "meter=bogus"),
		oc("dump-meters", "br0"),
		oc("-O", "OpenFlow13", "add-meter", "br0", "meter=3,kbps,burst,band=type=drop,rate=1000,burst_size=50"),
		oc("-O", "OpenFlow14", "add-meter", "br0", "meter=3 pktps stats bands=type=drop rate=1 type=drop rate=2"),
		oc("-O", "OpenFlow13", "add-meter", "br0", "meter=1,kbps,band=type=drop,rate=100"),
		oc("-O", "OpenFlow13", "add-meter", "br0", "meter=3,kbps,band=type=dscp_remark,rate=1,prec_level=1"),
		oc("-O", "OpenFlow13", "add-meter", "br0", "meter=3,kbps,band=type=drop"),
		oc("add-meter", "br0", "meter=3,kbps,band=type=drop,rate=1"),
		oc("-O", "OpenFlow13", "mod-meter", "br0", "meter=1,pktps,stats,band=type=drop,rate=7"),
		oc("-O", "OpenFlow13", "mod-meter", "br0", "meter=9,pktps,band=type=drop,rate=7"),
		oc("-O", "OpenFlow13", "del-meter", "br0", "meter=2"),
		oc("-O", "OpenFlow13", "del-meters", "br0", "meter=all"),
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

// TestGroupAndMeterSyntaxSessionLikeOpenVSwitch runs each group and meter
// syntax step with Debian's ovs-ofctl against Open vSwitch (dummy
// datapath) and gvs-vswitchd, from the same groups and meters and
// followed by dumps of them, and requires the same transcript.
func TestGroupAndMeterSyntaxSessionLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffAgainstOpenVSwitch(t, func() []ofStep {
		var steps []ofStep
		for _, st := range groupsMetersSyntaxSteps() {
			if slices.Contains(st.args, "--bundle") {
				continue // a failed bundle names the switch's socket path
			}
			args := st.args
			if st.stdin != "" {
				if !slices.Contains(args, "add-groups") {
					continue // "-" reads stdin, which runSteps does not feed
				}
				// The file goes where runSteps maps "flows.txt".
				steps = append(steps, ofStep{tool: "file", args: []string{"flows.txt", st.stdin}})
				args = slices.Clone(args)
				args[len(args)-1] = "flows.txt"
			}
			steps = append(steps,
				ofctl("-O", "OpenFlow13", "del-groups", "br0"),
				ofctl("-O", "OpenFlow13", "del-meters", "br0"),
				ofctl("-O", "OpenFlow13", "add-group", "br0", "group_id=1,type=all,bucket=output:1,bucket=output:2"),
				ofctl("-O", "OpenFlow13", "add-group", "br0", "group_id=2,type=select,bucket=weight:3,output:3,bucket=weight:5,output:1"),
				ofctl("-O", "OpenFlow13", "add-meter", "br0", "meter=1,kbps,band=type=drop,rate=100"),
				ofctl("-O", "OpenFlow13", "add-meter", "br0", "meter=2,pktps,burst,stats,band=type=drop,rate=10,burst_size=20"),
				ofctl(args...),
				ofctl("-O", "OpenFlow15", "dump-groups", "br0"), ofctl("-O", "OpenFlow13", "dump-meters", "br0"))
		}
		return steps
	})
}

// TestGvsOfctlGroupAndMeterCommandsMatchOVSOfctl runs each step with
// Debian's ovs-ofctl and with gvs-ofctl against Open vSwitch's
// ovs-vswitchd (dummy datapath) and gvs-vswitchd, groups and meters reset
// (by ovs-ofctl) before every run; output, errors, exit status and the
// groups and meters afterwards must be identical (durations masked).
func TestGvsOfctlGroupAndMeterCommandsMatchOVSOfctl(t *testing.T) {
	t.Parallel()
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
				oc("-O", "OpenFlow15", "dump-groups", "br0"),
				oc("-O", "OpenFlow13", "dump-meters", "br0"),
			}
			for _, st := range append(groupsMetersSteps(), groupsMetersSyntaxSteps()...) {
				var got [2]string
				for i, bin := range []string{"ovs-ofctl", gvsOfctl} {
					reset()
					got[i] = runOnline(t, env, dir, bin, st) + "after:\n"
					for _, s := range state {
						got[i] += runOnline(t, env, dir, "ovs-ofctl", s)
					}
					got[i] = sortGroupLines(ovsoracle.MaskDurations(got[i]))
				}
				if got[0] != got[1] {
					t.Errorf("%v differs\n--- ovs-ofctl:\n%s--- gvs-ofctl:\n%s", st.args, got[0], got[1])
				}
			}
		})
	}
}
