package backer

import (
	"testing"
	"time"
)

// Dummy devices take aa:55:aa:55:00:00, :01, ... in creation order, as
// Open vSwitch's netdev-dummy numbers them (ofproto.at masks only the
// last digit: "addr:aa:55:aa:55:00:0x").
func TestDummyMACsCountUpFromAA55AA550000(t *testing.T) {
	d := &datapathSet{}
	for i, want := range []string{"aa:55:aa:55:00:00", "aa:55:aa:55:00:01", "aa:55:aa:55:00:02"} {
		m := d.nextDummyMAC()
		if got := macString(m); got != want {
			t.Errorf("MAC %d = %s, want %s", i, got, want)
		}
	}
	d.dummyMACs.Store(0x1ff)
	if got := macString(d.nextDummyMAC()); got != "aa:55:aa:55:01:ff" {
		t.Errorf("MAC 0x1ff = %s, want aa:55:aa:55:01:ff", got)
	}
}

// other_config:datapath-id takes 16 hex digits or "0x" and up to 16
// (ovs-vswitchd.at "set datapath-id"); anything else, and zero, is
// invalid (0: the default datapath ID applies).
func TestParseDPIDAcceptsOpenVSwitchsForms(t *testing.T) {
	for in, want := range map[string]uint64{
		"0123456789abcdef":    0x0123456789abcdef,
		"fedcba9876543210":    0xfedcba9876543210,
		"0x5ad515c0":          0x5ad515c0,
		"0X0123456789ABCDEF":  0x0123456789abcdef,
		"0x00":                0,
		"0x":                  0,
		"5ad515c0":            0,
		"0x0123456789abcdef0": 0,
		"0x-1":                0,
		"0x+1":                0,
		"0x1_0":               0,
		"xyz":                 0,
	} {
		if got := parseDPID(in); got != want {
			t.Errorf("parseDPID(%q) = %#x, want %#x", in, got, want)
		}
	}
}

func TestParseGlobalConfigReadsFlowRestoreWaitAndMaxIdle(t *testing.T) {
	for _, tc := range []struct {
		oc   map[string]string
		want globalConfig
	}{
		{nil, globalConfig{}},
		{map[string]string{"flow-restore-wait": "true"}, globalConfig{restoreWait: true}},
		{map[string]string{"flow-restore-wait": "TRUE"}, globalConfig{restoreWait: true}},
		{map[string]string{"flow-restore-wait": "false"}, globalConfig{}},
		{map[string]string{"flow-restore-wait": "yes"}, globalConfig{}},
		{map[string]string{"max-idle": "500"}, globalConfig{maxIdle: 500 * time.Millisecond}},
		{map[string]string{"max-idle": "0"}, globalConfig{}},
		{map[string]string{"max-idle": "-5"}, globalConfig{}},
		{map[string]string{"max-idle": "soon"}, globalConfig{}},
		{map[string]string{"flow-limit": "3000"}, globalConfig{flowLimit: 3000}},
		{map[string]string{"flow-limit": "0"}, globalConfig{}},
		{map[string]string{"flow-limit": "many"}, globalConfig{}},
	} {
		if got := parseGlobalConfig(tc.oc); got != tc.want {
			t.Errorf("parseGlobalConfig(%v) = %+v, want %+v", tc.oc, got, tc.want)
		}
	}
}
