package tests

import (
	"regexp"
	"testing"
)

// reservedNameSteps add interfaces named like a datapath or a tunnel
// vport's datapath port (ovs-vsctl.at "add-port -- reserved names 1").
func reservedNameSteps() []ofStep {
	var s []ofStep
	for _, n := range []string{"ovs-netdev", "ovs-dummy", "genev_sys", "gre_sys_4789", "vxlan_sys", "lisp_sys", "ovs-netdevx"} {
		s = append(s, vsctl("add-port", "br0", n),
			vsctl("get", "interface", n, "ofport", "error"),
			vsctl("del-port", "br0", n))
	}
	return s
}

// TestReservedInterfaceNamesAreRefusedLikeOpenVSwitch: ofport -1, no
// error text (ovs-vsctl points at the log), a name merely starting with
// "ovs-" accepted.
func TestReservedInterfaceNamesAreRefusedLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	logDir := regexp.MustCompile(`The default log directory is "[^"]*"`)
	diffOneBridgeAgainstOpenVSwitch(t, reservedNameSteps, func(s string) string {
		return logDir.ReplaceAllString(s, `The default log directory is "<dir>"`)
	})
}

// internalMACSteps set Interface.mac on internal interfaces
// (netdev-type.at "set MAC address of internal port"): applied when the
// interface is created and when the column changes, a multicast address
// refused.
func internalMACSteps() []ofStep {
	return []ofStep{
		vsctl("set", "Interface", "p1", "type=internal", `mac="aa:55:c0:ff:ee:00"`),
		vsctl("get", "Interface", "p1", "mac_in_use"),
		vsctl("set", "Interface", "p1", `mac="aa:55:c0:ff:ee:01"`),
		vsctl("get", "Interface", "p1", "mac_in_use"),
		vsctl("set", "Interface", "p1", `mac="01:55:c0:ff:ee:02"`),
		vsctl("get", "Interface", "p1", "mac_in_use"),
	}
}

// TestInternalInterfaceMACLikeOpenVSwitch: mac_in_use follows
// Interface.mac as in Open vSwitch.
func TestInternalInterfaceMACLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, internalMACSteps)
}
