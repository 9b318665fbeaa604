package tests

import (
	"testing"
)

// cfmColumns reads an interface's CFM status columns (cfm_flap_count
// too when flaps).
func cfmColumns(iface string, flaps bool) bfdStep {
	cols := "cfm_fault,cfm_fault_status,cfm_health,cfm_remote_mpids,cfm_remote_opstate"
	if flaps {
		cols += ",cfm_flap_count"
	}
	return bfdCmd("ovs-vsctl", "--columns="+cols, "list", "interface", iface)
}

// cfmObserve reads what the CFM scenario compares after each phase:
// cfm/show of both ends (with time stopped its timers read the same),
// the database columns and p1's OpenFlow port state. p1's flap count
// is left out once p1 has joined a faulted p0: whether p1's first fault
// check saw p0's remote defect indication depends, in Open vSwitch, on
// when its monitor thread first runs p1.
func cfmObserve(p1Flaps bool) []bfdStep {
	return []bfdStep{
		bfdCmd("ovs-appctl", "cfm/show", "p0"),
		bfdCmd("ovs-appctl", "cfm/show", "p1"),
		cfmColumns("p0", true),
		cfmColumns("p1", p1Flaps),
		bfdCmd("ovs-ofctl", "-O", "OpenFlow13", "dump-ports-desc", "br1", "p1"),
	}
}

// cfmScenario is cfm.at's: br0 and br1 (dummy datapath) joined by the
// patch ports p0 and p1, CFM in extended mode at 100 ms, time stopped
// and moved on by time/warp. Both ends come up with full health,
// cfm/set-fault overrides p1 (its port stops being live), p1 leaves (p0
// faults and counts a flap), comes back operationally down (p0 reads
// remote_opstate down), then in standard mode at 1 s (neither hears the
// other's CCMs). A dummy port p2 on br1 has CFM too, for the trace of a
// CCM arriving on it.
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
	s = append(s, cfmObserve(true)...)
	// The CCMs never reach OpenFlow: the trace says why.
	s = append(s, bfdCmd("ovs-appctl", "ofproto/trace", "br1", "in_port=2,dl_src=50:54:00:00:00:01,dl_dst=01:23:20:00:00:30,dl_type=0x8902"))
	s = append(s, bfdCmd("ovs-appctl", "cfm/set-fault", "p1", "true"), bfdCmd("ovs-appctl", "time/warp", "100"))
	s = append(s, cfmObserve(true)...)
	s = append(s, bfdCmd("ovs-appctl", "cfm/set-fault", "normal"), bfdCmd("ovs-appctl", "time/warp", "100"))
	s = append(s, cfmObserve(true)...)
	s = append(s, bfdCmd("ovs-vsctl", "remove", "interface", "p1", "cfm_mpid", "2"), bfdCmd("ovs-appctl", "time/warp", "1100", "100"))
	s = append(s, cfmObserve(true)...)
	s = append(s, bfdCmd("ovs-vsctl", "set", "interface", "p1", "cfm_mpid=2", "other_config:cfm_opstate=down"),
		bfdCmd("ovs-appctl", "time/warp", "1100", "100"))
	s = append(s, cfmObserve(false)...)
	s = append(s, bfdCmd("ovs-vsctl", "set", "interface", "p1", "other_config:cfm_extended=false", "other_config:cfm_interval=1000"),
		bfdCmd("ovs-appctl", "time/warp", "5000", "100"))
	s = append(s, cfmObserve(false)...)
	s = append(s,
		bfdCmd("ovs-appctl", "cfm/show", "p9"),
		bfdCmd("ovs-appctl", "cfm/set-fault", "p9", "true"),
		bfdCmd("ovs-appctl", "cfm/set-fault", "p1", "sometimes"),
		bfdStep{monitorOut: "p1"},
		bfdCmd("ovs-vsctl", "del-br", "br1"),
		bfdCmd("ovs-appctl", "cfm/show"),
		cfmColumns("p0", true))
	return s
}

// TestCFMLikeOpenVSwitch runs the CFM scenario on Open vSwitch 3.1 and
// gvs at once and requires the same cfm/show, Interface cfm_* columns,
// trace and OpenFlow port liveness after every phase.
func TestCFMLikeOpenVSwitch(t *testing.T) {
	if testing.Short() {
		t.Skip("warps time in real time for 15 s")
	}
	diffBFDScenario(t, cfmScenario, true, nil)
}
