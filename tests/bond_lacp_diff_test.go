package tests

import (
	"encoding/hex"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/internal/pcapfile"
)

// bondShowSteps configure bonds on dummy ports as Open vSwitch's lacp.at
// and ofproto-dpif.at do, and read lacp/show and bond/show back: an
// active LACP bond with configured IDs whose partner never answers, a
// one-port LACP "bond", a balance-slb bond without LACP, and the
// commands' error replies.
func bondShowSteps() []ofStep {
	sleep := ofStep{tool: "sleep", args: []string{"500ms"}}
	return []ofStep{
		vsctl("add-bond", "br0", "bond", "p4", "p5", "lacp=active", "bond-mode=active-backup",
			"other_config:lacp-time=fast", "other_config:lacp-system-id=11:22:33:44:55:66", "other_config:lacp-system-priority=54321",
			"--", "set", "interface", "p4", "type=dummy", "ofport_request=4",
			"other_config:lacp-port-id=11", "other_config:lacp-port-priority=111", "other_config:lacp-aggregation-key=3333",
			"--", "set", "interface", "p5", "type=dummy", "ofport_request=5",
			"other_config:lacp-port-id=22", "other_config:lacp-port-priority=222", "other_config:lacp-aggregation-key=3333"),
		sleep,
		appctl("lacp/show", "bond"),
		appctl("bond/show", "bond"),
		vsctl("set", "port", "p1", "lacp=active"),
		sleep,
		appctl("lacp/show", "p1"),
		appctl("bond/show", "p1"),
		vsctl("add-bond", "br0", "slb", "p6", "p7", "bond_mode=balance-slb", "bond_updelay=100", "bond_downdelay=200",
			"other_config:bond-hash-basis=7", "--", "set", "interface", "p6", "type=dummy", "ofport_request=6",
			"--", "set", "interface", "p7", "type=dummy", "ofport_request=7"),
		sleep,
		appctl("bond/show", "slb"),
		appctl("lacp/show", "slb"),
		appctl("bond/migrate", "bond", "1", "p4"),
		appctl("bond/migrate", "slb", "x", "p6"),
		appctl("bond/migrate", "slb", "1", "p9"),
		appctl("bond/set-active-member", "nope", "p4"),
		appctl("bond/enable-member", "slb", "p9"),
		appctl("bond/hash", "50:54:00:00:00:01", "3", "9"),
		appctl("bond/enable-slave", "slb", "p9"),
		appctl("bond/disable-slave", "nope", "p6"),
	}
}

// TestBondAndLACPShowLikeOpenVSwitch: lacp/show, bond/show and the bond/
// commands' replies are Open vSwitch's for the same configuration. Masked:
// the bridge's MAC (the system ID of a bond without lacp-system-id), the
// time to the next rebalance, and which member of a bond that no rule
// decides is active (Open vSwitch takes the first enabled member in its
// hash map's order, gvs the one with the lowest OpenFlow port).
func TestBondAndLACPShowLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	activeMAC := regexp.MustCompile(`active member mac: [0-9a-f:]{17}\(p\d+\)`)
	sysID := regexp.MustCompile(`sys_id: [0-9a-f:]{17}`)
	rebalance := regexp.MustCompile(`next rebalance: \d+ ms`)
	diffOneBridgeAgainstOpenVSwitch(t, bondShowSteps, func(s string) string {
		s = strings.ReplaceAll(s, "ovs-appctl: gvs-vswitchd:", "ovs-appctl: ovs-vswitchd:")
		s = activeMAC.ReplaceAllString(s, "active member mac: <mac>(<member>)")
		s = strings.ReplaceAll(s, "  active member\n", "")
		if strings.Contains(s, "lacp/show p1") {
			s = sysID.ReplaceAllString(s, "sys_id: <bridge mac>")
		}
		return rebalance.ReplaceAllString(s, "next rebalance: <t> ms")
	})
}

// bondFailoverLearning runs an active-backup bond (p1, p2, capturing what
// they send) beside p3 on a NORMAL bridge, learns two MACs on p3 (VLAN 0
// and 10), makes the other member active and returns the learning
// packets (RARPs) that member sent, hex-encoded.
func bondFailoverLearning(t *testing.T, env []string, target string) []string {
	t.Helper()
	dir := t.TempDir()
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
		"--", "add-bond", "br0", "bond0", "p1", "p2", "bond_mode=active-backup",
		"--", "set", "interface", "p1", "type=dummy", "ofport_request=1", "options:tx_pcap="+filepath.Join(dir, "p1.pcap"),
		"--", "set", "interface", "p2", "type=dummy", "ofport_request=2", "options:tx_pcap="+filepath.Join(dir, "p2.pcap"),
		"--", "add-port", "br0", "p3", "--", "set", "interface", "p3", "type=dummy", "ofport_request=3")
	run(t, env, "ovs-appctl", "-t", target, "netdev-dummy/set-admin-state", "up")
	run(t, env, "ovs-ofctl", "add-flow", "br0", "actions=NORMAL")
	run(t, env, "ovs-appctl", "-t", target, "netdev-dummy/receive", "p3",
		"in_port(3),eth(src=50:54:00:00:00:07,dst=ff:ff:ff:ff:ff:ff),eth_type(0x1234)")
	run(t, env, "ovs-appctl", "-t", target, "netdev-dummy/receive", "p3",
		"in_port(3),eth(src=50:54:00:00:00:08,dst=ff:ff:ff:ff:ff:ff),eth_type(0x8100),vlan(vid=10,pcp=0),encap(eth_type(0x1234))")
	time.Sleep(300 * time.Millisecond)
	other := "p1"
	if show := run(t, env, "ovs-appctl", "-t", target, "bond/show", "bond0"); strings.Contains(show, "member p1: enabled\n  active member\n") {
		other = "p2"
	}
	run(t, env, "ovs-appctl", "-t", target, "bond/set-active-member", "bond0", other)
	var got []string
	waitFor(t, "learning packets on "+other, func() bool {
		frames, err := pcapfile.ReadFrames(filepath.Join(dir, other+".pcap"))
		if err != nil {
			return false
		}
		got = nil
		for _, f := range frames {
			if h := hex.EncodeToString(f); strings.Contains(h[24:min(len(h), 40)], "8035") {
				got = append(got, h)
			}
		}
		return len(got) >= 2
	})
	return got
}

// TestBondFailoverSendsOpenVSwitchsLearningPackets: after an
// active-backup bond's active member changes, the new one sends a RARP
// for every MAC learned elsewhere, in its VLAN, as Open vSwitch does.
func TestBondFailoverSendsOpenVSwitchsLearningPackets(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	run(t, ovsEnv, "ovs-vsctl", "--timeout=20", "init")
	want := bondFailoverLearning(t, ovsEnv, "ovs-vswitchd")
	stopOVS()
	_, gvsEnv := startDaemon(t)
	got := bondFailoverLearning(t, gvsEnv, "gvs-vswitchd")
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("learning packets:\n gvs %q\nOpen vSwitch %q", got, want)
	}
}
