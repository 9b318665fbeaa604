package tests

import (
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

// TestOfctlWatchPrintsTheSameFlowUpdatesAsOVSOfctl runs the flow monitor
// session (fmWatches: Nicira form in OpenFlow 1.0, ONF in 1.3,
// OFPMP_FLOW_MONITOR in 1.4 and 1.5, own and abbreviated updates, table,
// out_port, match and !actions filters; ofctl/barrier and ofctl/send on
// the monitors' control sockets) with Debian's ovs-ofctl and with
// gvs-ofctl as the monitor client, against Open vSwitch (dummy datapath)
// and against gvs-vswitchd, and requires gvs-ofctl's transcript of every
// monitor to equal ovs-ofctl's against the same daemon.
func TestOfctlWatchPrintsTheSameFlowUpdatesAsOVSOfctl(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	gvsOfctl := gvsOfctlBinary(t)
	for _, d := range []struct {
		name, target string
		start        func(t *testing.T) ([]string, func())
	}{
		{"Open vSwitch", "ovs-vswitchd", startOpenVSwitch},
		{"gvs", "gvs-vswitchd", func(t *testing.T) ([]string, func()) { _, env := startDaemon(t); return env, func() {} }},
	} {
		env, stop := d.start(t)
		want := flowMonitorSession(t, env, d.target, "ovs-ofctl")
		stop()
		env, stop = d.start(t)
		got := flowMonitorSession(t, env, d.target, gvsOfctl)
		stop()
		if !strings.Contains(want[0], "NXST_FLOW_MONITOR reply") || !strings.Contains(want[1], "event=ABBREV xid=0x12345678") ||
			!strings.Contains(want[8], "ONFST_FLOW_MONITOR reply (OF1.3)") || !strings.Contains(want[2], "send: OFPT_FLOW_MOD (OF1.4)") {
			t.Errorf("%s: ovs-ofctl's session lacks an expected message:\n%s\n%s", d.name, want[0], want[1])
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: %s differs\n--- ovs-ofctl:\n%s\n--- gvs-ofctl:\n%s", d.name, strings.Join(fmWatches[i].args, " "), want[i], got[i])
			}
		}
	}
}

// TestOfctlWatchPausesAndResumesLikeOVSOfctl runs Open vSwitch's flow
// monitor pause-and-resume scenario with gvs-ofctl as the monitor
// (ofctl/block and ofctl/unblock on its control socket) against Open
// vSwitch and against gvs, and applies Open vSwitch's checks.
func TestOfctlWatchPausesAndResumesLikeOVSOfctl(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	gvsOfctl := gvsOfctlBinary(t)
	ovsEnv, stopOVS := startOpenVSwitch(t)
	checkPauseTranscript(t, "gvs-ofctl against Open vSwitch", flowMonitorPauseSession(t, ovsEnv, gvsOfctl))
	stopOVS()
	_, gvsEnv := startDaemon(t)
	checkPauseTranscript(t, "gvs-ofctl against gvs", flowMonitorPauseSession(t, gvsEnv, gvsOfctl))
}
