package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

// fmWatch is one `ovs-ofctl monitor br0 watch:...` run in the flow
// monitor session: its arguments and the flow_mod (hex, xid 0x12345678)
// it sends on its own connection, in its OpenFlow version.
type fmWatch struct {
	args    []string
	ownSend string
}

// Delete-all flow_mods with xid 0x12345678: OpenFlow 1.0 and 1.4.
const (
	fmDelAll10 = "010e004812345678003fffff" + "000000000000000000000000000000000000000000000000000000000000000000000000" +
		"0000000000000000" + "0003000000008000ffffffffffff0000"
	fmDelAll14 = "050e003812345678" + "0000000000000000" + "0000000000000000" +
		"ff03000000008000ffffffffffffffffffffffff00000000" + "0001000400000000"
)

// fmLearnPacket goes through the session's learn flow.
const fmLearnPacket = "in_port(3),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800)," +
	"ipv4(src=10.0.0.5,dst=10.0.0.7,proto=17,tos=0,ttl=64,frag=no),udp(src=1,dst=2)"

var fmWatches = []fmWatch{
	{args: []string{"monitor", "br0", "watch:"}, ownSend: fmDelAll10},
	{args: []string{"monitor", "br0", "watch:!own"}, ownSend: fmDelAll10},
	{args: []string{"-O", "OpenFlow14", "monitor", "br0", "watch:"}, ownSend: fmDelAll14},
	{args: []string{"-O", "OpenFlow14", "monitor", "br0", "watch:!own"}, ownSend: fmDelAll14},
	{args: []string{"-O", "OpenFlow15", "monitor", "br0", "watch:table=1"}},
	{args: []string{"monitor", "br0", "watch:!initial,out_port=2"}},
	{args: []string{"monitor", "br0", "watch:!actions,dl_vlan=123"}},
	{args: []string{"-O", "OpenFlow14", "monitor", "br0", "watch:!add,!modify,ip"}},
	{args: []string{"-O", "OpenFlow13", "monitor", "br0", "watch:"}},
}

// fmXIDRE masks non-zero xids (the requests' xids differ by run), as
// Open vSwitch's own tests do.
var fmXIDRE = regexp.MustCompile(` \(xid=0x[1-9a-f][0-9a-f]*\)`)

// fmXIDRE0 strips the xid of a message header line.
var fmXIDRE0 = regexp.MustCompile(` \(xid=0x[0-9a-f]+\):$`)

// flowMonitorSession starts every fmWatches monitor with client
// (ovs-ofctl or gvs-ofctl), changes br0's flow
// tables from other connections (add, replace, modify and delete, strict
// and not, a bundle, a cookie change, a hard timeout) and from each
// monitor's own connection, with a barrier through each monitor after
// every step, and returns each monitor's masked transcript.
func flowMonitorSession(t *testing.T, env []string, target, client string) []string {
	t.Helper()
	setUpOfctlBridge(t, env)
	run(t, env, "ovs-ofctl", "add-flow", "br0", "in_port=1,dl_vlan=123,actions=output:1")
	run(t, env, "ovs-ofctl", "add-flow", "br0", "table=1,priority=5,ip,actions=output:2")
	rundir := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "OVS_RUNDIR="); ok {
			rundir = v
		}
	}
	mons := make([]*bgTool, len(fmWatches))
	ctls := make([]string, len(fmWatches))
	for i, w := range fmWatches {
		mons[i] = startTool(t, env, client, w.args...)
		ctls[i] = filepath.Join(rundir, fmt.Sprintf("%s.%d.ctl", filepath.Base(client), mons[i].cmd.Process.Pid))
	}
	for i := range ctls {
		waitFor(t, "the monitor's control socket", func() bool {
			select {
			case <-mons[i].done:
				b, _ := os.ReadFile(mons[i].log)
				t.Fatalf("%s %s exited:\n%s", client, strings.Join(fmWatches[i].args, " "), b)
			default:
			}
			_, err := os.Stat(ctls[i])
			return err == nil
		})
	}
	// barrierFrom sends ofctl/barrier through every monitor, the one at
	// index first first: a flow_mod that monitor sent itself (ofctl/send
	// returns once it is written) is then known to be applied, and its
	// updates queued to the other monitors, before their barriers.
	barrierFrom := func(first int) {
		order := []int{first}
		for i := range ctls {
			if i != first {
				order = append(order, i)
			}
		}
		for _, i := range order {
			run(t, env, "ovs-appctl", "-t", ctls[i], "ofctl/barrier")
		}
	}
	barrier := func() { barrierFrom(0) }
	barrier()
	dir := t.TempDir()
	bundle := filepath.Join(dir, "bundle.txt")
	if err := os.WriteFile(bundle, []byte("add in_port=3,actions=output:2\nmodify in_port=1,dl_vlan=123,actions=output:3\n"+
		"delete_strict table=1,priority=5,ip\nadd table=1,tcp,actions=drop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	steps := [][]string{
		{"add-flow", "br0", "in_port=2,dl_vlan=124,actions=output:2"},
		{"add-flow", "br0", "in_port=2,dl_vlan=124,actions=output:2"},
		{"add-flow", "br0", "priority=7,ip,nw_dst=10.0.0.1,idle_timeout=50,actions=output:1,output:2"},
		{"mod-flows", "br0", "dl_vlan=123,actions=output:2"},
		{"mod-flows", "br0", "dl_vlan=123,actions=output:2"},
		{"mod-flows", "br0", "cookie=5,dl_vlan=123,actions=output:2"},
		{"mod-flows", "--strict", "br0", "priority=7,ip,nw_dst=10.0.0.1,actions=output:3"},
		{"mod-flows", "br0", "dl_vlan=999,actions=drop"},
		{"del-flows", "--strict", "br0", "in_port=2,dl_vlan=124"},
		{"add-flow", "br0", "priority=100,in_port=3,actions=learn(table=3,priority=7,NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[],output:NXM_OF_IN_PORT[]),output:1"},
		{"learn"},
		{"--bundle", "add-flows", "br0", bundle},
		{"add-flow", "br0", "table=1,hard_timeout=1,udp,actions=drop"},
		{"-O", "OpenFlow13", "add-group", "br0", "group_id=1,type=all,bucket=output:1"},
		{"-O", "OpenFlow13", "add-flow", "br0", "in_port=4,actions=group:1"},
		{"-O", "OpenFlow13", "del-groups", "br0", "group_id=1"},
		{"del-flows", "br0", "ip"},
	}
	for _, st := range steps {
		if st[0] == "learn" {
			// A packet through the learn flow: the learned flow is
			// reported as added by no connection.
			run(t, env, "ovs-appctl", "-t", target, "netdev-dummy/receive", "p3", fmLearnPacket)
			time.Sleep(500 * time.Millisecond)
			barrier()
			continue
		}
		run(t, env, append([]string{"ovs-ofctl", "--timeout=10"}, st...)...)
		if st[1] == "br0" && strings.Contains(st[2], "hard_timeout") {
			time.Sleep(3 * time.Second)
		}
		barrier()
	}
	// Each monitor deletes a fresh flow on its own connection: reported
	// in full (own) or abbreviated to the flow_mod's xid (!own).
	for i, w := range fmWatches {
		if w.ownSend != "" {
			run(t, env, "ovs-ofctl", "add-flow", "br0", "in_port=9,actions=drop")
			barrier()
			run(t, env, "ovs-appctl", "-t", ctls[i], "ofctl/send", w.ownSend)
			barrierFrom(i)
		}
	}
	if os.Getenv("GVS_TRANSCRIPT") != "" {
		for i, m := range mons {
			b, _ := os.ReadFile(m.log)
			t.Logf("%s %s:\n%s", client, strings.Join(fmWatches[i].args, " "), b)
		}
	}
	out := make([]string, len(mons))
	for i, m := range mons {
		s := maskMonitor(m.stop(t))
		out[i] = sortUpdateLines(fmXIDRE.ReplaceAllString(s, ""))
	}
	return out
}

// sortUpdateLines sorts the updates within each reply: for a change of
// several flows Open vSwitch lists them in its classifier's hash order
// (its own tests sort them too, with multiline_sort).
func sortUpdateLines(s string) string {
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && strings.HasPrefix(lines[j], " event=") {
			j++
		}
		if j > i {
			slices.Sort(lines[i:j])
			i = j
		} else {
			i++
		}
	}
	return strings.Join(lines, "\n")
}

// TestFlowMonitorPrintsTheSameUpdatesAsOpenVSwitch runs Debian's
// `ovs-ofctl monitor br0 watch:...` (Nicira form in OpenFlow 1.0, ONF in
// 1.3, OFPMP_FLOW_MONITOR in 1.4 and 1.5; with own/abbreviated updates,
// table, out_port, match and !actions filters) against Open vSwitch with
// the dummy datapath and against gvs-vswitchd through the same session,
// and requires the same transcript from every monitor.
func TestFlowMonitorPrintsTheSameUpdatesAsOpenVSwitch(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	want := flowMonitorSession(t, ovsEnv, "ovs-vswitchd", "ovs-ofctl")
	stopOVS()
	_, gvsEnv := startDaemon(t)
	got := flowMonitorSession(t, gvsEnv, "gvs-vswitchd", "ovs-ofctl")
	if !strings.Contains(want[0], "event=DELETED reason=hard") || !strings.Contains(want[0], "reason=group_delete") || !strings.Contains(want[0], "table=3 cookie=0 dl_dst=50:54:00:00:00:05 actions=output:3") || !strings.Contains(want[1], "event=ABBREV xid=0x12345678") ||
		!strings.Contains(want[3], "event=ABBREV xid=0x12345678") || !strings.Contains(want[2], "OFPST_FLOW_MONITOR reply (OF1.4)") {
		t.Errorf("Open vSwitch's session lacks an expected event:\n%s\n%s", want[1], want[3])
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("ovs-ofctl %s differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", strings.Join(fmWatches[i].args, " "), want[i], got[i])
		}
	}
}

// fmPauseFlows is how many flows the pause session adds while the monitor
// does not read: far more updates than the 128 KiB pause threshold plus
// the socket's buffer hold.
const fmPauseFlows = 20000

// flowMonitorPauseSession is Open vSwitch's "flow monitoring pause and
// resume" test: a monitor that stops reading while 20000 flows are added,
// one added, one modified and all 20000 deleted, then reads again. It
// returns client's transcript once RESUMED has arrived.
func flowMonitorPauseSession(t *testing.T, env []string, client string) string {
	t.Helper()
	setUpOfctlBridge(t, env)
	rundir := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "OVS_RUNDIR="); ok {
			rundir = v
		}
	}
	mon := startTool(t, env, client, "monitor", "br0", "watch:")
	ctl := filepath.Join(rundir, fmt.Sprintf("%s.%d.ctl", filepath.Base(client), mon.cmd.Process.Pid))
	waitFor(t, "the monitor's control socket", func() bool { _, err := os.Stat(ctl); return err == nil })
	run(t, env, "ovs-appctl", "-t", ctl, "ofctl/block")
	var flows strings.Builder
	flows.WriteString("in_port=2,actions=output:2\n")
	for i := range fmPauseFlows {
		fmt.Fprintf(&flows, "cookie=1,reg1=%d,actions=drop\n", i)
	}
	file := filepath.Join(t.TempDir(), "flows.txt")
	if err := os.WriteFile(file, []byte(flows.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, env, "ovs-ofctl", "--timeout=60", "add-flows", "br0", file)
	run(t, env, "ovs-ofctl", "add-flow", "br0", "in_port=1,cookie=3,actions=drop")
	run(t, env, "ovs-ofctl", "mod-flows", "br0", "in_port=2,cookie=2,actions=output:2")
	run(t, env, "ovs-ofctl", "--timeout=60", "del-flows", "br0", "cookie=1/-1")
	run(t, env, "ovs-appctl", "-t", ctl, "ofctl/unblock")
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(mon.log)
		if strings.Contains(string(b), "RESUMED") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no RESUMED after the monitor read again:\n%.2000s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return mon.stop(t)
}

// checkPauseTranscript applies Open vSwitch's checks: fewer adds reported
// than made but more than 100, as many deletes as adds, and the pause,
// the deletions, the changes made while paused and the resume in order.
func checkPauseTranscript(t *testing.T, who, s string) {
	t.Helper()
	adds := len(regexp.MustCompile(`ADDED.*reg1=`).FindAllString(s, -1))
	deletes := len(regexp.MustCompile(`DELETED.*reg1=`).FindAllString(s, -1))
	if adds <= 100 || adds >= fmPauseFlows || adds != deletes {
		t.Errorf("%s: %d adds and %d deletes reported (want 100 < adds < %d, adds = deletes)", who, adds, deletes, fmPauseFlows)
	}
	var subset []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasSuffix(l, "reg1=0x22") || strings.Contains(l, "cookie=0x2") || strings.Contains(l, "cookie=0x3") ||
			strings.HasPrefix(l, "NXT_FLOW_MONITOR_") {
			subset = append(subset, fmXIDRE0.ReplaceAllString(l, ":"))
		}
	}
	want := []string{
		" event=ADDED table=0 cookie=0x1 reg1=0x22",
		"NXT_FLOW_MONITOR_PAUSED:",
		" event=DELETED reason=delete table=0 cookie=0x1 reg1=0x22",
		" event=ADDED table=0 cookie=0x3 in_port=1",
		" event=MODIFIED table=0 cookie=0x2 in_port=2 actions=output:2",
		"NXT_FLOW_MONITOR_RESUMED:",
	}
	// The ADDED and MODIFIED between PAUSED and RESUMED may come in
	// either order (Open vSwitch: hash order).
	if len(subset) == len(want) && subset[3] == want[4] && subset[4] == want[3] {
		subset[3], subset[4] = subset[4], subset[3]
	}
	if !slices.Equal(subset, want) {
		t.Errorf("%s: pause and resume sequence\n%s\nwant\n%s", who, strings.Join(subset, "\n"), strings.Join(want, "\n"))
	}
}

// TestFlowMonitorPausesAndResumesLikeOpenVSwitch runs Open vSwitch's
// pause-and-resume scenario against Open vSwitch and against gvs and
// applies its checks to both transcripts.
func TestFlowMonitorPausesAndResumesLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	checkPauseTranscript(t, "Open vSwitch", flowMonitorPauseSession(t, ovsEnv, "ovs-ofctl"))
	stopOVS()
	_, gvsEnv := startDaemon(t)
	checkPauseTranscript(t, "gvs", flowMonitorPauseSession(t, gvsEnv, "ovs-ofctl"))
}
