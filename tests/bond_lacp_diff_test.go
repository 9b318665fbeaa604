package tests

import (
	"regexp"
	"strings"
	"testing"
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
