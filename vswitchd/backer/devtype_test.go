package backer

import (
	"testing"

	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// The device an interface gets under Open vSwitch's test modes:
// --disable-system disables the kernel datapath type only (netdev
// bridges keep real devices), --enable-dummy=system overrides the system
// netdev and dpif types, --enable-dummy=override every system and
// internal type.
func TestDeviceTypesFollowOpenVSwitchsTestModes(t *testing.T) {
	type mode struct{ disableSystem, dummySystem, override bool }
	bridges := map[string]*dpBridge{
		"system": {cfgType: "system", dpTyp: "netdev"},
		"netdev": {cfgType: "netdev", dpTyp: "netdev"},
		"dummy":  {cfgType: "dummy", dpTyp: "dummy"},
	}
	for _, tc := range []struct {
		mode          mode
		bridge, iface string
		want          string
	}{
		{mode{}, "system", "system", "system"},
		{mode{}, "system", "internal", "internal"},
		{mode{}, "netdev", "", "system"},
		{mode{}, "dummy", "internal", "dummy"},
		{mode{}, "dummy", "system", "system"},
		{mode{}, "netdev", "patch", "patch"},
		{mode{disableSystem: true}, "system", "system", "refused"},
		{mode{disableSystem: true}, "system", "internal", "dummy"},
		{mode{disableSystem: true}, "netdev", "system", "system"},
		{mode{disableSystem: true}, "netdev", "internal", "internal"},
		{mode{disableSystem: true}, "dummy", "internal", "dummy"},
		{mode{dummySystem: true}, "system", "system", "dummy"},
		{mode{dummySystem: true}, "system", "internal", "dummy"},
		{mode{dummySystem: true}, "netdev", "system", "dummy"},
		{mode{dummySystem: true}, "netdev", "internal", "internal"},
		{mode{dummySystem: true, disableSystem: true}, "netdev", "internal", "internal"},
		{mode{override: true}, "netdev", "internal", "dummy"},
		{mode{override: true}, "netdev", "system", "dummy"},
		{mode{override: true}, "netdev", "geneve", "geneve"},
	} {
		s := &Backer{cfg: Config{DisableSystem: tc.mode.disableSystem, DummySystem: tc.mode.dummySystem, DummyOverride: tc.mode.override}}
		got := s.devType(bridges[tc.bridge], &bridge.IfaceConfig{Name: "p", Type: tc.iface})
		if got != tc.want {
			t.Errorf("%+v, %s bridge, type %q: %s, want %s", tc.mode, tc.bridge, tc.iface, got, tc.want)
		}
	}
}
