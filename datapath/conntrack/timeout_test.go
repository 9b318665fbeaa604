package conntrack

import "testing"

// TestDefaultTimeoutPolicyIsOpenVSwitchUserspaceDefaults pins the
// defaults to Open vSwitch 3.1's userspace datapath (lib/conntrack-tp.c),
// which zones without a CT_Zone timeout policy use.
func TestDefaultTimeoutPolicyIsOpenVSwitchUserspaceDefaults(t *testing.T) {
	want := map[string]uint32{
		"tcp_syn_sent": 30, "tcp_syn_recv": 30, "tcp_established": 86400, "tcp_fin_wait": 900,
		"tcp_time_wait": 45, "tcp_close": 30, "udp_first": 60, "udp_single": 60, "udp_multiple": 30,
		"icmp_first": 60, "icmp_reply": 30,
	}
	p := DefaultTimeoutPolicy()
	if len(want) != int(NumTimeouts) {
		t.Fatalf("%d classes, want %d", NumTimeouts, len(want))
	}
	for name, v := range want {
		c, ok := TimeoutClassByName(name)
		if !ok || p[c] != v {
			t.Errorf("%s = %d (known %v), want %d", name, p[c], ok, v)
		}
	}
}
