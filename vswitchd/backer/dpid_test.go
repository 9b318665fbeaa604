package backer

import "testing"

// A bridge's fallback MAC is Open vSwitch's for the same row UUID
// (Debian's ovs-vswitchd gave datapath ID 00004a061e1efe44 to Bridge
// 1e1e064a-268d-44fe-9965-63e14966f0ed).
func TestDefaultEAIsOpenVSwitchsForTheUUID(t *testing.T) {
	if got := macString(defaultEA("1e1e064a-268d-44fe-9965-63e14966f0ed")); got != "4a:06:1e:1e:fe:44" {
		t.Errorf("defaultEA = %s, want 4a:06:1e:1e:fe:44", got)
	}
	if got := macString(defaultEA("0123456d-89ab-cdef-0123-456789abcdef")); got != "6e:45:23:01:ef:cd" {
		t.Errorf("defaultEA = %s, want 6e:45:23:01:ef:cd (multicast bit cleared, local bit set)", got)
	}
}
