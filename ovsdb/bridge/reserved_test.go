package bridge

import "testing"

func TestReservedNamesAreDatapathsAndTunnelDatapathPorts(t *testing.T) {
	types := []string{"dummy", "netdev", "system"}
	for name, reserved := range map[string]bool{
		"ovs-netdev": true, "ovs-system": true, "ovs-dummy": true, "genev_sys_6081": true, "gre_sys": true,
		"vxlan_sys_4789": true, "ip6gre_sys": true, "ovs-netdevx": false, "ovs-": false, "br0": false, "vxlan0": false,
	} {
		err := ReservedName(name, types)
		if (err != nil) != reserved {
			t.Errorf("%s: %v", name, err)
		}
		if err != nil && err.Error() != "could not create interface "+name+", name is reserved" {
			t.Errorf("%s: %q", name, err)
		}
	}
	if ReservedName("ovs-system", []string{"dummy", "netdev"}) != nil {
		t.Error("ovs-system reserved without a system datapath type")
	}
}
