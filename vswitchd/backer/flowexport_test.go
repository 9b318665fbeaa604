package backer

import (
	"net/netip"
	"testing"
)

// Open vSwitch 3.1.0 with a dummy bridge (datapath "ovs-dummy") and a
// NetFlow row without engine ids sent engine_type 204, engine_id 62.
func TestNetFlowEngineIDsMatchOpenVSwitch(t *testing.T) {
	if ty, id := netflowEngineIDs("ovs-dummy"); ty != 204 || id != 62 {
		t.Errorf("ovs-dummy: engine type %d id %d, want 204 62", ty, id)
	}
	if ty, id := netflowEngineIDs("ovs-netdev"); ty != 47 || id != 209 {
		t.Errorf("ovs-netdev: engine type %d id %d, want 47 209", ty, id)
	}
}

func TestSFlowAgentResolution(t *testing.T) {
	cases := []struct {
		agent   string
		targets []string
		want    string
	}{
		{"192.0.2.7", nil, "192.0.2.7"},
		{"lo", nil, "127.0.0.1"},
		{"", []string{"127.0.0.1:6343"}, "127.0.0.1"},
		{"", []string{"127.0.0.1"}, "127.0.0.1"},
	}
	for _, c := range cases {
		got, err := sflowAgent(c.agent, c.targets)
		if err != nil || got != netip.MustParseAddr(c.want) {
			t.Errorf("sflowAgent(%q, %q) = %v, %v; want %s", c.agent, c.targets, got, err, c.want)
		}
	}
	if _, err := sflowAgent("gvs-no-such-if0", nil); err == nil {
		t.Error("an unknown agent interface resolved")
	}
}
