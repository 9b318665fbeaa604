package tests

import (
	"regexp"
	"testing"
)

// stpTimingRE masks the Port columns that depend on when each daemon
// delivers a BPDU and writes its statistics rather than on the tree:
// Open vSwitch hands a BPDU sent into a patch port to the peer through
// a slow-path upcall and refreshes Port.statistics every 5 s of its
// (warped) time, gvs delivers at once and writes them at each warp
// step, so the counts and the seconds in a state drift by a hello time.
var stpTimingRE = regexp.MustCompile(`(stp_sec_in_state|stp_rx_count|stp_tx_count|stp_error_count)="?[0-9]+"?`)

// stpShow is stp/show of one bridge.
func stpShow(br string) bfdStep { return bfdCmd("ovs-appctl", "stp/show", br) }

// stpColumns reads what the switch writes back: the bridges' status and
// the spanning tree ports' status and statistics.
func stpColumns() []bfdStep {
	return []bfdStep{
		bfdCmd("ovs-vsctl", "--columns=name,status", "list", "bridge", "br0", "br1", "br2"),
		bfdCmd("ovs-vsctl", "--columns=name,status,statistics", "list", "port", "p01", "p02", "p10", "p12", "p20", "p21"),
	}
}

// stpObserve is what the STP scenario compares after each phase: every
// bridge's stp/show, the OpenFlow 1.0 port state (STP_LISTEN/LEARN/
// FORWARD/BLOCK bits) and the database columns.
func stpObserve() []bfdStep {
	s := []bfdStep{stpShow("br0"), stpShow("br1"), stpShow("br2")}
	for _, br := range []string{"br0", "br1", "br2"} {
		s = append(s, bfdCmd("ovs-ofctl", "-O", "OpenFlow10", "dump-ports-desc", br))
	}
	return append(s, stpColumns()...)
}

// stpScenario is three bridges in a loop of patch ports (br0 p01-p10
// br1 p12-p21 br2 p20-p02 br0), STP on each, the bridges' local ports
// left out of it and a dummy port d2 on br2 outside it; time is stopped
// and moved on by time/warp as stp.at does. br0 (lowest address) becomes
// root and br2's p21 blocks: output to it is skipped ("STP not in
// forwarding state") and the loop is broken. Then br1 loses its root
// port (p10 deleted: the tree reroutes through br2, p21 forwards), br2's
// priority makes it root, stp/tcn and the errors, and STP goes off.
func stpScenario() []bfdStep {
	s := []bfdStep{
		bfdCmd("ovs-vsctl", "init"),
		// One bridge, and below one port, a transaction: Open vSwitch
		// runs its bridges and lists a bridge's ports (and logs their
		// changes) in an order that depends on the order they were
		// added in.
		stpAddBridge("br0", "00"),
		stpAddBridge("br1", "01"),
		stpAddBridge("br2", "02"),
		bfdCmd("ovs-appctl", "vlog/set", "ofproto_dpif:dbg"),
		stpAddPatch("br0", "p01", "p10", 1),
		stpAddPatch("br0", "p02", "p20", 2),
		stpAddPatch("br1", "p10", "p01", 1),
		stpAddPatch("br1", "p12", "p21", 2),
		stpAddPatch("br2", "p20", "p02", 1),
		stpAddPatch("br2", "p21", "p12", 2),
		bfdCmd("ovs-vsctl", "add-port", "br2", "d2", "--", "set", "interface", "d2", "type=dummy", "ofport_request=3",
			"--", "set", "port", "d2", "other_config:stp-enable=false"),
		bfdCmd("ovs-appctl", "time/stop"),
		bfdCmd("ovs-vsctl", "set", "bridge", "br0", "stp_enable=true", "--", "set", "bridge", "br1", "stp_enable=true",
			"--", "set", "bridge", "br2", "stp_enable=true"),
		bfdCmd("ovs-ofctl", "add-flow", "br2", "in_port=3 actions=output:1,output:2"),
		bfdCmd("ovs-appctl", "time/warp", "6000", "3000"),
	}
	s = append(s, stpObserve()...)
	trace := bfdStep{args: []string{"ovs-appctl", "ofproto/trace", "br2", "in_port=3,dl_src=50:54:00:00:00:01,dl_dst=ff:ff:ff:ff:ff:ff"},
		keep: []string{"STP", "output:"}}
	s = append(s, trace)
	s = append(s, bfdCmd("ovs-appctl", "time/warp", "30000", "3000"))
	s = append(s, stpObserve()...)
	s = append(s, trace, bfdStep{grep: "STP state changed"}, bfdStep{grep: "detected topology change"})
	// br1's root port goes: its path to the root is through br2 now.
	s = append(s, bfdCmd("ovs-vsctl", "del-port", "br1", "p10"), bfdCmd("ovs-appctl", "time/warp", "60000", "3000"))
	s = append(s, stpObserve()...)
	s = append(s, trace, bfdStep{grep: "STP state changed"})
	// br2 takes the root with a better priority; timers as root.
	s = append(s, bfdCmd("ovs-vsctl", "set", "bridge", "br2", "other_config:stp-priority=4096",
		"other_config:stp-hello-time=3000", "other_config:stp-max-age=10", "other_config:stp-forward-delay=6"),
		bfdCmd("ovs-appctl", "time/warp", "60000", "3000"))
	s = append(s, stpObserve()...)
	s = append(s,
		bfdCmd("ovs-appctl", "stp/tcn", "br0"),
		bfdCmd("ovs-appctl", "stp/tcn", "nosuch"),
		bfdCmd("ovs-appctl", "stp/show", "nosuch"),
		bfdCmd("ovs-vsctl", "set", "bridge", "br1", "stp_enable=false"),
		bfdCmd("ovs-appctl", "time/warp", "3000"),
		stpShow("br1"),
		bfdCmd("ovs-vsctl", "--columns=name,status", "list", "bridge", "br1"),
		bfdCmd("ovs-vsctl", "--columns=name,status", "list", "port", "p12"),
		bfdStep{grep: "STP state changed"})
	return s
}

// stpAddBridge adds bridge br (dummy datapath, address
// aa:66:aa:66:00:last, no flows) with its local port outside the tree.
func stpAddBridge(br, last string) bfdStep {
	return bfdCmd("ovs-vsctl", "add-br", br, "--", "set", "bridge", br, "datapath_type=dummy",
		"other-config:hwaddr=aa:66:aa:66:00:"+last, "fail_mode=secure", "--", "set", "port", br, "other_config:stp-enable=false")
}

// stpAddPatch adds patch port name to br with peer peer, OpenFlow and
// STP port number no.
func stpAddPatch(br, name, peer string, no int) bfdStep {
	n := string(rune('0' + no))
	return bfdCmd("ovs-vsctl", "add-port", br, name, "--", "set", "interface", name, "type=patch", "options:peer="+peer,
		"ofport_request="+n, "--", "set", "port", name, "other_config:stp-port-num="+n)
}

// TestSTPLikeOpenVSwitch runs the STP scenario on Open vSwitch 3.1 and
// gvs at once and requires the same stp/show, OpenFlow port states,
// database status, traces and log lines after every phase.
func TestSTPLikeOpenVSwitch(t *testing.T) {
	if testing.Short() {
		t.Skip("warps time through 3 minutes of STP")
	}
	diffBFDScenario(t, stpScenario, true, func(s string) string { return stpTimingRE.ReplaceAllString(s, "$1=N") })
}
