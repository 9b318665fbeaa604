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
