package tests

import (
	"regexp"
	"testing"
	"time"
)

// cfmColumns reads an interface's CFM status columns.
func cfmColumns(iface string) bfdStep {
	return bfdCmd("ovs-vsctl", "--columns=cfm_fault,cfm_fault_status,cfm_flap_count,cfm_health,cfm_remote_mpids,cfm_remote_opstate",
		"list", "interface", iface)
}

// cfmShowMask hides cfm/show's time to the next CCM: after a
// reconfiguration that changes the interval Open vSwitch sends at once
// or at the next warp step, as its monitor thread happens to run
// (cfm.at hides it too).
var cfmShowMask = regexp.MustCompile(`(?m)^  next CCM tx: .*\n`)

// cfmObserve reads what the CFM scenario compares after each phase:
// cfm/show of both ends (with time stopped its timers read the same,
// but for the next transmission after a reconfiguration: see
// cfmShowMask), the database columns and p1's OpenFlow port state.
//
// No phase adds a maintenance point facing one that has faulted: the
// first CCM of the new one goes out when Open vSwitch's monitor thread
// first runs it, at once or at the next warp step, and that decides
// whether it first hears the remote defect indication (a fault and two
// flaps) or not.
func cfmObserve() []bfdStep {
	return []bfdStep{
		bfdCmd("ovs-appctl", "cfm/show", "p0"),
		bfdCmd("ovs-appctl", "cfm/show", "p1"),
		cfmColumns("p0"),
		cfmColumns("p1"),
		bfdCmd("ovs-ofctl", "-O", "OpenFlow13", "dump-ports-desc", "br1", "p1"),
	}
}

// cfmScenario is cfm.at's: br0 and br1 (dummy datapath) joined by the
// patch ports p0 and p1, CFM in extended mode at 100 ms, time stopped
// and moved on by time/warp. Both ends come up with full health,
// cfm/set-fault overrides p1 (its port stops being live), p1 says it is
// operationally down (p0 reads remote_opstate down and stops being
// live), p1 goes to standard mode at 1 s (neither hears the other's
// CCMs: both fault and count a flap), then p1's CFM goes (its columns
// empty, its port live again). A dummy port p2 on br1 has CFM too, for
// the trace of a CCM arriving on it.
func cfmScenario() []bfdStep {
	s := []bfdStep{
		bfdCmd("ovs-vsctl", "init"),
		bfdCmd("ovs-vsctl", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
			"--", "add-br", "br1", "--", "set", "bridge", "br1", "datapath_type=dummy",
			"--", "add-port", "br0", "p0", "--", "set", "interface", "p0", "type=patch", "options:peer=p1", "ofport_request=1",
			"--", "add-port", "br1", "p1", "--", "set", "interface", "p1", "type=patch", "options:peer=p0", "ofport_request=1",
			"--", "set", "interface", "p0", "other_config:cfm_interval=100", "other_config:cfm_extended=true",
			"--", "set", "interface", "p1", "other_config:cfm_interval=100", "other_config:cfm_extended=true",
			"--", "add-port", "br1", "p2", "--", "set", "interface", "p2", "type=dummy", "ofport_request=2", "cfm_mpid=3",
			"other_config:cfm_extended=true"),
		{monitor: []string{"-O", "OpenFlow13", "monitor", "br1", "65535"}},
		bfdCmd("ovs-appctl", "time/stop"),
		bfdCmd("ovs-vsctl", "set", "interface", "p0", "cfm_mpid=1", "--", "set", "interface", "p1", "cfm_mpid=2"),
		bfdCmd("ovs-appctl", "time/warp", "5000", "100"),
	}
	s = append(s, cfmObserve()...)
	// The CCMs never reach OpenFlow: the trace says why.
	s = append(s, bfdCmd("ovs-appctl", "ofproto/trace", "br1", "in_port=2,dl_src=50:54:00:00:00:01,dl_dst=01:23:20:00:00:30,dl_type=0x8902"))
	s = append(s, bfdCmd("ovs-appctl", "cfm/set-fault", "p1", "true"), bfdCmd("ovs-appctl", "time/warp", "100"))
	s = append(s, cfmObserve()...)
	s = append(s, bfdCmd("ovs-appctl", "cfm/set-fault", "normal"), bfdCmd("ovs-appctl", "time/warp", "100"))
	s = append(s, cfmObserve()...)
	s = append(s, bfdCmd("ovs-vsctl", "set", "interface", "p1", "other_config:cfm_opstate=down"),
		bfdCmd("ovs-appctl", "time/warp", "1100", "100"))
	s = append(s, cfmObserve()...)
	s = append(s, bfdCmd("ovs-vsctl", "set", "interface", "p1", "other_config:cfm_opstate=up", "other_config:cfm_extended=false",
		"other_config:cfm_interval=1000"), bfdCmd("ovs-appctl", "time/warp", "5000", "100"))
	s = append(s, cfmObserve()...)
	s = append(s, bfdCmd("ovs-vsctl", "remove", "interface", "p1", "cfm_mpid", "2"), bfdCmd("ovs-appctl", "time/warp", "1100", "100"))
	s = append(s, cfmObserve()...)
	s = append(s,
		bfdCmd("ovs-appctl", "cfm/show", "p9"),
		bfdCmd("ovs-appctl", "cfm/set-fault", "p9", "true"),
		bfdCmd("ovs-appctl", "cfm/set-fault", "p1", "sometimes"),
		// An MPID above 8191 outside extended mode is refused: p2's
		// maintenance point goes.
		bfdCmd("ovs-vsctl", "set", "interface", "p2", "cfm_mpid=9000", "other_config:cfm_extended=false"),
		bfdCmd("ovs-appctl", "time/warp", "100"),
		bfdCmd("ovs-appctl", "cfm/show", "p2"),
		cfmColumns("p2"),
		bfdStep{monitorOut: "p1"},
		bfdCmd("ovs-vsctl", "del-br", "br1"),
		bfdCmd("ovs-appctl", "cfm/show"),
		cfmColumns("p0"))
	return s
}

// TestCFMLikeOpenVSwitch runs the CFM scenario on Open vSwitch 3.1 and
// gvs at once and requires the same cfm/show, Interface cfm_* columns,
// trace and OpenFlow port liveness after every phase.
func TestCFMLikeOpenVSwitch(t *testing.T) {
	if testing.Short() {
		t.Skip("warps time in real time for 15 s")
	}
	diffBFDScenario(t, cfmScenario, true, func(s string) string { return cfmShowMask.ReplaceAllString(s, "") })
}

// portAddScenario adds a dummy port and a pair of patch ports while
// `ovs-ofctl monitor` (OpenFlow 1.3 and 1.0) listens.
func portAddScenario(version string) func() []bfdStep {
	return func() []bfdStep {
		return []bfdStep{
			bfdCmd("ovs-vsctl", "init"),
			bfdCmd("ovs-vsctl", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy"),
			{monitor: []string{"-O", version, "monitor", "br0", "65535"}},
			bfdCmd("ovs-vsctl", "add-br", "br1", "--", "set", "bridge", "br1", "datapath_type=dummy",
				"--", "add-port", "br0", "p0", "--", "set", "interface", "p0", "type=patch", "options:peer=p1", "ofport_request=1",
				"--", "add-port", "br1", "p1", "--", "set", "interface", "p1", "type=patch", "options:peer=p0", "ofport_request=1",
				"--", "add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy", "ofport_request=2"),
			bfdWait(500 * time.Millisecond),
			{monitorOut: "p0"},
			{monitor: []string{"-O", version, "monitor", "br0", "65535"}},
			bfdCmd("ovs-vsctl", "add-port", "br0", "p3", "--", "set", "interface", "p3", "type=dummy", "ofport_request=3"),
			bfdWait(500 * time.Millisecond),
			{monitorOut: "p3"},
		}
	}
}

// TestPortAddedIsAnnouncedNotLiveThenLiveLikeOpenVSwitch: a port added
// is announced (OFPPR_ADD) without OFPPS_LIVE, then a MOD says it is
// live, as Open vSwitch installs a port before enabling it; OpenFlow 1.0
// has no LIVE bit and gets the ADD alone.
func TestPortAddedIsAnnouncedNotLiveThenLiveLikeOpenVSwitch(t *testing.T) {
	for _, v := range []string{"OpenFlow13", "OpenFlow10"} {
		t.Run(v, func(t *testing.T) { diffBFDScenario(t, portAddScenario(v), true, nil) })
	}
}
